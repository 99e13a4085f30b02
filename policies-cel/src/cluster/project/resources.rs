//! Everything else the estimate reads: Services and their EndpointSlices, claims and volumes,
//! Nodes, CustomResourceDefinitions, and the keys (never the values) of ConfigMaps and Secrets.

use crate::cluster::ClusterModel;
use crate::cluster::object::{
    Endpoint, Labels, NODE_LOCAL_TOPOLOGY_KEYS, PortTarget, ServicePort, Spec, Taint, Text,
};
use crate::cluster::ports::DEFAULT_PROTOCOL;

use super::ProjectError;
use super::fields::{Fields, Result};

/// The label naming an EndpointSlice's Service.
const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// A Service; without a selector (absent or empty) its endpoints are managed by hand. A
/// `type: LoadBalancer` one keeps the addresses its load balancer was given.
pub(super) fn service(root: Fields<'_>, model: &mut ClusterModel) -> Result<Spec> {
    let (labels, balanced, ports) = root.nested("spec", |spec| {
        let mut ports = Vec::new();
        spec.each("ports", |port| {
            ports.push(service_port(port, model)?);
            Ok(())
        })?;
        Ok((
            spec.labels("selector", model)?,
            spec.str("type")? == Some("LoadBalancer"),
            ports,
        ))
    })?;
    let mut external = Vec::new();
    if balanced {
        root.nested("status", |status| {
            status.nested("loadBalancer", |balancer| {
                balancer.each("ingress", |ingress| {
                    // Addresses are one Service's own: not interned.
                    if let Some(address) = ingress.non_empty("ip")?.or(ingress.non_empty("hostname")?) {
                        external.push(Text::from(address));
                    }
                    Ok(())
                })
            })
        })?;
    }
    Ok(Spec::Service {
        selector: (!labels.is_empty()).then_some(labels),
        external: external.into_boxed_slice(),
        ports: ports.into_boxed_slice(),
    })
}

/// A Service port, with kube-apiserver's defaults: protocol `TCP`, `targetPort` the port itself.
fn service_port(port: Fields<'_>, model: &mut ClusterModel) -> Result<ServicePort> {
    let number = port.int("port")?.unwrap_or_default();
    let target = match port.value("targetPort")? {
        Some(serde_json::Value::String(name)) if !name.is_empty() => PortTarget::Name(model.intern(name)),
        None | Some(serde_json::Value::Null) => PortTarget::Number(number),
        Some(_) => PortTarget::Number(port.int("targetPort")?.unwrap_or(number)),
    };
    Ok(ServicePort {
        name: model.intern(port.str("name")?.unwrap_or_default()),
        port: number,
        protocol: model.intern(port.non_empty("protocol")?.unwrap_or(DEFAULT_PROTOCOL)),
        target,
    })
}

/// An EndpointSlice: its Service (by label) and each endpoint's pod and readiness (an unset
/// `ready` condition means ready, as the API documents).
pub(super) fn endpoint_slice(root: Fields<'_>, labels: &Labels, model: &mut ClusterModel) -> Result<Spec> {
    let service = labels
        .iter()
        .find(|(k, _)| &**k == SERVICE_NAME_LABEL)
        .map(|(_, v)| v.clone());
    let mut endpoints = Vec::new();
    root.each("endpoints", |endpoint| {
        let ready = endpoint
            .nested("conditions", |conditions| conditions.bool("ready"))?
            .unwrap_or(true);
        let pod = endpoint.nested("targetRef", |target| match target.str("kind")? {
            Some("Pod") => target.non_empty("name"),
            _ => Ok(None),
        })?;
        endpoints.push(Endpoint {
            // The pod's own name: not interned.
            pod: pod.map(|p| model.share(p)),
            ready,
        });
        Ok(())
    })?;
    Ok(Spec::EndpointSlice {
        service,
        endpoints: endpoints.into_boxed_slice(),
    })
}

/// A PersistentVolumeClaim and the volume it is bound to.
pub(super) fn claim(root: Fields<'_>, model: &mut ClusterModel) -> Result<Spec> {
    let volume = root.nested("spec", |spec| spec.non_empty("volumeName"))?;
    Ok(Spec::PersistentVolumeClaim {
        volume: volume.map(|v| model.share(v)),
    })
}

/// A PersistentVolume: whether releasing it deletes its data (`persistentVolumeReclaimPolicy`,
/// `Retain` when unset as for a volume created by hand) and the claim it is bound to.
pub(super) fn volume(root: Fields<'_>, model: &mut ClusterModel) -> Result<Spec> {
    root.nested("spec", |spec| {
        let reclaim_delete = match spec.non_empty("persistentVolumeReclaimPolicy")? {
            None | Some("Retain" | "Recycle") => false,
            Some("Delete") => true,
            Some(other) => {
                let supported = ["Delete", "Recycle", "Retain"];
                return Err(ProjectError::unsupported(
                    "persistentVolumeReclaimPolicy",
                    other,
                    &supported,
                ));
            }
        };
        let claim = spec.nested("claimRef", |claim_ref| {
            Ok(claim_ref
                .non_empty("name")?
                .zip(Some(claim_ref.non_empty("namespace")?.unwrap_or(""))))
        })?;
        let claim = claim.map(|(name, namespace)| (model.intern(namespace), model.share(name)));
        let node = spec.nested("nodeAffinity", |affinity| {
            affinity.nested("required", pinned_node)
        })?;
        Ok(Spec::PersistentVolume {
            reclaim_delete,
            claim,
            node: node.map(|n| model.intern(n)),
        })
    })
}

/// The one node a volume's required node affinity allows (a local volume, a node-local CSI
/// disk): every term requires `In` a single value of a node-local key (or `metadata.name` by
/// `matchFields`), and all terms name the same node. `None` for zonal or unpinned volumes.
fn pinned_node<'a>(required: Fields<'a>) -> Result<Option<&'a str>> {
    let mut pinned: Option<Option<&'a str>> = None;
    required.each("nodeSelectorTerms", |term| {
        let mut node = None;
        for (list, keys) in [
            ("matchExpressions", NODE_LOCAL_TOPOLOGY_KEYS),
            ("matchFields", &["metadata.name"][..]),
        ] {
            term.each(list, |requirement| {
                let key = requirement.required_str("key")?;
                let values = requirement.strings("values")?;
                if keys.contains(&key)
                    && requirement.str("operator")? == Some("In")
                    && let [value] = values[..]
                {
                    node = node.or(Some(value));
                }
                Ok(())
            })?;
        }
        pinned = Some(match pinned {
            None => node,
            Some(earlier) if earlier == node => earlier,
            Some(_) => None,
        });
        Ok(())
    })?;
    Ok(pinned.flatten())
}

/// A Node: cordoned or not, and its taints.
pub(super) fn node(root: Fields<'_>, model: &mut ClusterModel) -> Result<Spec> {
    root.nested("spec", |spec| {
        let mut taints = Vec::new();
        spec.each("taints", |taint| {
            let effect = match taint.required_str("effect")? {
                effect @ ("NoSchedule" | "PreferNoSchedule" | "NoExecute") => effect,
                other => {
                    let supported = ["NoExecute", "NoSchedule", "PreferNoSchedule"];
                    return Err(ProjectError::unsupported("effect", other, &supported));
                }
            };
            taints.push(Taint {
                key: model.intern(taint.required_str("key")?),
                value: taint.non_empty("value")?.map(|v| model.intern(v)),
                effect: model.intern(effect),
            });
            Ok(())
        })?;
        Ok(Spec::Node {
            unschedulable: spec.bool("unschedulable")?.unwrap_or(false),
            taints: taints.into_boxed_slice(),
        })
    })
}

/// A CustomResourceDefinition: the kind it serves and whether its objects are namespaced.
pub(super) fn definition(root: Fields<'_>, model: &mut ClusterModel) -> Result<Spec> {
    root.nested("spec", |spec| {
        let group = model.intern(spec.required_str("group")?);
        let (kind, plural) = spec.nested("names", |names| {
            Ok((names.required_str("kind")?, names.required_str("plural")?))
        })?;
        let namespaced = match spec.required_str("scope")? {
            "Namespaced" => true,
            "Cluster" => false,
            other => {
                return Err(ProjectError::unsupported(
                    "scope",
                    other,
                    &["Cluster", "Namespaced"],
                ));
            }
        };
        Ok(Spec::CustomResourceDefinition {
            group,
            kind: model.intern(kind),
            plural: model.intern(plural),
            namespaced,
        })
    })
}

/// A ConfigMap's keys (`data` and `binaryData`).
pub(super) fn config_map(root: Fields<'_>, model: &mut ClusterModel) -> Result<Spec> {
    Ok(Spec::ConfigMap {
        keys: keys_of(root, &["data", "binaryData"], model)?,
    })
}

/// A Secret's keys (`data` and `stringData`). The values are never read.
pub(super) fn secret(root: Fields<'_>, model: &mut ClusterModel) -> Result<Spec> {
    Ok(Spec::Secret {
        keys: keys_of(root, &["data", "stringData"], model)?,
    })
}

fn keys_of(root: Fields<'_>, fields: &[&str], model: &mut ClusterModel) -> Result<Box<[Text]>> {
    let mut keys: Vec<&str> = Vec::new();
    for field in fields {
        keys.extend(root.keys(field)?);
    }
    keys.sort_unstable();
    keys.dedup();
    Ok(keys.into_iter().map(|k| model.intern(k)).collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;
    use crate::cluster::project::project;
    use serde_json::{Value, json};

    fn spec_of(value: Value) -> Spec {
        project(&value, &mut ClusterModel::new()).unwrap().spec
    }

    fn texts(items: &[&str]) -> Box<[Text]> {
        items.iter().map(|s| Text::from(*s)).collect()
    }

    #[test]
    fn load_balancers_keep_their_addresses() {
        let service = |kind: &str, ingress: Value| {
            spec_of(
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "edge"},
                "spec": {"type": kind, "selector": {"app": "edge"}},
                "status": {"loadBalancer": {"ingress": ingress}}}),
            )
        };
        let external = |spec: Spec| match spec {
            Spec::Service { external, .. } => external,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            external(service(
                "LoadBalancer",
                json!([{"ip": "203.0.113.10", "ipMode": "VIP"}, {"hostname": "edge.elb.example"}, {}])
            )),
            texts(&["203.0.113.10", "edge.elb.example"])
        );
        // Not yet provisioned, or not a load balancer (a stale status is not an address).
        assert!(external(service("LoadBalancer", json!([]))).is_empty());
        assert!(external(service("ClusterIP", json!([{"ip": "203.0.113.10"}]))).is_empty());
    }

    #[test]
    fn services_with_and_without_selectors() {
        let spec = spec_of(
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}}}),
        );
        assert_eq!(
            spec,
            Spec::Service {
                selector: Some(vec![("app".into(), "web".into())].into()),
                external: Box::default(),
                ports: Box::default(),
            }
        );
        let spec = spec_of(
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db"}, "spec": {"ports": []}}),
        );
        assert_eq!(
            spec,
            Spec::Service {
                selector: None,
                external: Box::default(),
                ports: Box::default(),
            }
        );
    }

    #[test]
    fn service_ports_with_kubernetes_defaults() {
        let spec = spec_of(
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [
                {"name": "http", "port": 80, "targetPort": "http"},
                {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 5353},
                {"port": 9090}]}}),
        );
        let Spec::Service { ports, .. } = spec else {
            panic!("{spec:?}")
        };
        let port = |name: &str, port, protocol: &str, target| ServicePort {
            name: name.into(),
            port,
            protocol: protocol.into(),
            target,
        };
        assert_eq!(
            &*ports,
            [
                port("http", 80, "TCP", PortTarget::Name("http".into())),
                port("dns", 53, "UDP", PortTarget::Number(5353)),
                port("", 9090, "TCP", PortTarget::Number(9090)),
            ]
        );
    }

    #[test]
    fn endpoint_slices() {
        let spec = spec_of(json!({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "web-abc", "labels": {"kubernetes.io/service-name": "web"}},
            "endpoints": [
                {"addresses": ["10.0.0.1"], "conditions": {"ready": true}, "targetRef": {"kind": "Pod", "name": "web-1"}},
                {"addresses": ["10.0.0.2"], "conditions": {"ready": false}, "targetRef": {"kind": "Pod", "name": "web-2"}},
                {"addresses": ["192.168.0.9"]}
            ]
        }));
        let expected = Spec::EndpointSlice {
            service: Some("web".into()),
            endpoints: vec![
                Endpoint {
                    pod: Some("web-1".into()),
                    ready: true,
                },
                Endpoint {
                    pod: Some("web-2".into()),
                    ready: false,
                },
                Endpoint {
                    pod: None,
                    ready: true,
                },
            ]
            .into_boxed_slice(),
        };
        assert_eq!(spec, expected);
    }

    #[test]
    fn claims_and_volumes() {
        let spec = spec_of(
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"}, "spec": {"volumeName": "pv-1"}}),
        );
        assert_eq!(
            spec,
            Spec::PersistentVolumeClaim {
                volume: Some("pv-1".into())
            }
        );
        let spec = spec_of(json!({
            "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
            "spec": {"persistentVolumeReclaimPolicy": "Delete", "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "db", "name": "data"}}
        }));
        assert_eq!(
            spec,
            Spec::PersistentVolume {
                reclaim_delete: true,
                claim: Some(("db".into(), "data".into())),
                node: None,
            }
        );
        let spec = spec_of(
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-2"}, "spec": {}}),
        );
        assert_eq!(
            spec,
            Spec::PersistentVolume {
                reclaim_delete: false,
                claim: None,
                node: None,
            }
        );
    }

    fn pinned(affinity: Value) -> Option<Text> {
        let spec = spec_of(json!({
            "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "local-1"},
            "spec": {"local": {"path": "/mnt/disks/ssd1"}, "nodeAffinity": {"required": {"nodeSelectorTerms": affinity}}}
        }));
        match spec {
            Spec::PersistentVolume { node, .. } => node,
            other => panic!("not a volume: {other:?}"),
        }
    }

    #[test]
    fn a_volume_pinned_to_one_node_by_its_required_affinity_names_it() {
        let hostname = |op: &str, values: Value| json!({"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": op, "values": values}]});
        assert_eq!(
            pinned(json!([hostname("In", json!(["node-a"]))])),
            Some("node-a".into())
        );
        assert_eq!(
            pinned(
                json!([{"matchExpressions": [{"key": "topology.topolvm.io/node", "operator": "In", "values": ["node-b"]}]}])
            ),
            Some("node-b".into())
        );
        assert_eq!(
            pinned(
                json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-c"]}]}])
            ),
            Some("node-c".into())
        );
        // The same node in every term still pins it; two nodes, a zone or NotIn do not.
        assert_eq!(
            pinned(json!([
                hostname("In", json!(["node-a"])),
                hostname("In", json!(["node-a"]))
            ])),
            Some("node-a".into())
        );
        assert_eq!(pinned(json!([hostname("In", json!(["node-a", "node-b"]))])), None);
        assert_eq!(
            pinned(json!([
                hostname("In", json!(["node-a"])),
                hostname("In", json!(["node-b"]))
            ])),
            None
        );
        assert_eq!(pinned(json!([hostname("NotIn", json!(["node-a"]))])), None);
        assert_eq!(
            pinned(
                json!([{"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-west-1a"]}]}])
            ),
            None
        );
        assert_eq!(pinned(json!([])), None);
    }

    #[test]
    fn nodes_and_definitions() {
        let spec = spec_of(json!({
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-b"},
            "spec": {"unschedulable": true, "taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}
        }));
        let taint = Taint {
            key: "dedicated".into(),
            value: Some("db".into()),
            effect: "NoSchedule".into(),
        };
        assert_eq!(
            spec,
            Spec::Node {
                unschedulable: true,
                taints: vec![taint].into_boxed_slice()
            }
        );
        let spec = spec_of(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "rabbitmqclusters.rabbitmq.com"},
            "spec": {"group": "rabbitmq.com", "names": {"kind": "RabbitmqCluster", "plural": "rabbitmqclusters"}, "scope": "Namespaced"}
        }));
        let expected = Spec::CustomResourceDefinition {
            group: "rabbitmq.com".into(),
            kind: "RabbitmqCluster".into(),
            plural: "rabbitmqclusters".into(),
            namespaced: true,
        };
        assert_eq!(spec, expected);
    }

    #[test]
    fn config_keys_and_secret_keys_only() {
        let spec = spec_of(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"b": "1", "a": "2"}, "binaryData": {"logo.png": "iVBO"}}),
        );
        assert_eq!(
            spec,
            Spec::ConfigMap {
                keys: texts(&["a", "b", "logo.png"])
            }
        );
        let object = project(
            &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"password": "aHVudGVyMg=="}, "stringData": {"user": "admin"}}),
            &mut ClusterModel::new(),
        )
        .unwrap();
        assert_eq!(
            object.spec,
            Spec::Secret {
                keys: texts(&["password", "user"])
            }
        );
        let debug = format!("{object:?}");
        assert!(
            !debug.contains("aHVudGVyMg==") && !debug.contains("admin"),
            "{debug}"
        );
    }
}
