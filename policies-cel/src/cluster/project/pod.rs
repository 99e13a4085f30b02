//! Pods: where they run, whether they are ready, and what they depend on — claims, ConfigMaps
//! and Secrets (volumes, projected sources, `env` key references and `envFrom`, in every kind
//! of container), the ServiceAccount they run as and whether they hold its token, the
//! PriorityClass and RuntimeClass they name, the Pod Security checks they fail, the ports they
//! declare by name — and which taints they tolerate.

use crate::cluster::ClusterModel;
use crate::cluster::object::{
    ConfigUse, ConfigUses, DEFAULT_SERVICE_ACCOUNT, NamedPort, Phase, PodRequirements, PodSpec, Text,
    Toleration,
};
use crate::cluster::pod_security::Violations;
use crate::cluster::ports;

use super::ProjectError;
use super::fields::{Fields, Result};

/// The container lists whose environment can read ConfigMaps and Secrets.
const CONTAINER_LISTS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

pub(super) fn project(root: Fields<'_>, pod_name: &str, model: &mut ClusterModel) -> Result<PodSpec> {
    let mut uses = Uses::default();
    let mut pod = root.nested("spec", |spec| {
        let node = spec.non_empty("nodeName")?.map(|n| model.intern(n));
        // The API server sets `default` when the pod names none (deprecated
        // `serviceAccount` is its old spelling, kept in step by the API server).
        let service_account = match spec.non_empty("serviceAccountName")? {
            Some(name) => name,
            None => spec
                .non_empty("serviceAccount")?
                .unwrap_or(DEFAULT_SERVICE_ACCOUNT),
        };
        let requires = PodRequirements {
            service_account: model.intern(service_account),
            priority_class: spec.non_empty("priorityClassName")?.map(|n| model.intern(n)),
            runtime_class: spec.non_empty("runtimeClassName")?.map(|n| model.intern(n)),
            pod_security: Violations::of_pod(root.value("metadata")?, root.value("spec")?),
            ports: ports::declared(root.value("spec")?)
                .into_iter()
                .map(|(name, protocol)| NamedPort {
                    name: model.intern(name),
                    protocol: model.intern(protocol),
                })
                .collect(),
        };
        let requires = model.share_requirements(requires);
        let mut claims = Vec::new();
        let mut api_token = false;
        spec.each("volumes", |volume| {
            read_volume(volume, pod_name, &mut claims, &mut uses, &mut api_token)
        })?;
        for list in CONTAINER_LISTS {
            spec.each(list, |container| read_container(container, &mut uses))?;
        }
        let mut tolerations = Vec::new();
        spec.each("tolerations", |toleration| {
            tolerations.push(read_toleration(toleration, model)?);
            Ok(())
        })?;
        Ok(PodSpec {
            node,
            claims: claims.into_boxed_slice(),
            tolerations: tolerations.into_boxed_slice(),
            requires,
            api_token,
            ..PodSpec::default()
        })
    })?;
    pod.config_maps = uses.config_maps.finish(model);
    pod.secrets = uses.secrets.finish(model);
    root.nested("status", |status| {
        // A pod the API server has not seen yet is Pending.
        pod.phase = status.non_empty("phase")?.map_or(Phase::Pending, Phase::parse);
        status.each("conditions", |condition| {
            if condition.str("type")? == Some("Ready") {
                pod.ready = condition.str("status")? == Some("True");
            }
            Ok(())
        })
    })?;
    Ok(pod)
}

fn read_volume(
    volume: Fields<'_>,
    pod_name: &str,
    claims: &mut Vec<Text>,
    uses: &mut Uses,
    api_token: &mut bool,
) -> Result<()> {
    // Claim names are (nearly always) one pod's own: not interned.
    let mut claim = |name: &str| {
        if !claims.iter().any(|c| &**c == name) {
            claims.push(name.into());
        }
    };
    if volume.has("persistentVolumeClaim") {
        claim(volume.nested("persistentVolumeClaim", |c| c.required_str("claimName"))?);
    }
    if volume.has("ephemeral") {
        // A generic ephemeral volume's claim is named `<pod>-<volume>` by the ephemeral controller.
        claim(&format!("{pod_name}-{}", volume.required_str("name")?));
    }
    if volume.has("configMap") {
        volume.nested("configMap", |source| {
            uses.config_maps.read(source, "name", "items")
        })?;
    }
    if volume.has("secret") {
        volume.nested("secret", |source| {
            uses.secrets.read(source, "secretName", "items")
        })?;
    }
    if volume.has("projected") {
        volume.nested("projected", |projected| {
            projected.each("sources", |source| {
                if source.has("configMap") {
                    source.nested("configMap", |s| uses.config_maps.read(s, "name", "items"))?;
                }
                if source.has("secret") {
                    source.nested("secret", |s| uses.secrets.read(s, "name", "items"))?;
                }
                *api_token |= source.has("serviceAccountToken");
                Ok(())
            })
        })?;
    }
    Ok(())
}

fn read_container(container: Fields<'_>, uses: &mut Uses) -> Result<()> {
    container.each("env", |env| {
        if !env.has("valueFrom") {
            return Ok(());
        }
        env.nested("valueFrom", |from| {
            if from.has("configMapKeyRef") {
                from.nested("configMapKeyRef", |r| uses.config_maps.read_key(r))?;
            }
            if from.has("secretKeyRef") {
                from.nested("secretKeyRef", |r| uses.secrets.read_key(r))?;
            }
            Ok(())
        })
    })?;
    container.each("envFrom", |from| {
        if from.has("configMapRef") {
            from.nested("configMapRef", |r| uses.config_maps.read(r, "name", ""))?;
        }
        if from.has("secretRef") {
            from.nested("secretRef", |r| uses.secrets.read(r, "name", ""))?;
        }
        Ok(())
    })
}

fn read_toleration(toleration: Fields<'_>, model: &mut ClusterModel) -> Result<Toleration> {
    let exists = match toleration.non_empty("operator")? {
        None | Some("Equal") => false,
        Some("Exists") => true,
        Some(other) => return Err(ProjectError::unsupported("operator", other, &["Equal", "Exists"])),
    };
    Ok(Toleration {
        key: toleration.non_empty("key")?.map(|k| model.intern(k)),
        exists,
        value: toleration.non_empty("value")?.map(|v| model.intern(v)),
        effect: toleration.non_empty("effect")?.map(|e| model.intern(e)),
    })
}

/// The ConfigMaps and the Secrets a pod reads.
#[derive(Debug, Default)]
struct Uses {
    config_maps: UseList,
    secrets: UseList,
}

/// Uses of one kind, merged by name: the union of the keys read (all of them once any
/// reference takes the whole object), required when any reference is.
#[derive(Debug, Default)]
struct UseList(Vec<(String, Option<Vec<String>>, bool)>);

impl UseList {
    /// A reference naming its object in `name_field` and its keys in `items_field` (`""`:
    /// the whole object, as `envFrom` does).
    fn read(&mut self, source: Fields<'_>, name_field: &str, items_field: &str) -> Result<()> {
        let Some(name) = source.non_empty(name_field)? else {
            return Ok(());
        };
        let mut keys = Vec::new();
        if !items_field.is_empty() {
            source.each(items_field, |item| {
                keys.push(item.required_str("key")?.to_owned());
                Ok(())
            })?;
        }
        // No items (or an empty list) projects every key.
        let keys = (!keys.is_empty()).then_some(keys);
        self.add(name, keys, source.bool("optional")?.unwrap_or(false));
        Ok(())
    }

    /// An `env[].valueFrom` key reference.
    fn read_key(&mut self, reference: Fields<'_>) -> Result<()> {
        let key = reference.required_str("key")?;
        let optional = reference.bool("optional")?.unwrap_or(false);
        if let Some(name) = reference.non_empty("name")? {
            self.add(name, Some(vec![key.to_owned()]), optional);
        }
        Ok(())
    }

    fn add(&mut self, name: &str, keys: Option<Vec<String>>, optional: bool) {
        match self.0.iter_mut().find(|(n, _, _)| n == name) {
            Some((_, existing, required)) => {
                *required |= !optional;
                match (existing.as_mut(), keys) {
                    (Some(existing), Some(keys)) => existing.extend(keys),
                    _ => *existing = None,
                }
            }
            None => self.0.push((name.to_owned(), keys, !optional)),
        }
    }

    fn finish(self, model: &mut ClusterModel) -> ConfigUses {
        let mut uses: Vec<ConfigUse> = self
            .0
            .into_iter()
            .map(|(name, keys, required)| ConfigUse {
                name: model.intern(&name),
                keys: keys.map(|mut keys| {
                    keys.sort();
                    keys.dedup();
                    keys.iter().map(|k| model.intern(k)).collect()
                }),
                required,
            })
            .collect();
        uses.sort_by(|a, b| a.name.cmp(&b.name));
        model.share_config_uses(uses)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::cluster::object::{ClassKind, Spec};
    use crate::cluster::project::project as project_object;
    use serde_json::json;

    fn pod(spec: serde_json::Value, status: serde_json::Value) -> PodSpec {
        let mut model = ClusterModel::new();
        let object = project_object(
            &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "shop"}, "spec": spec, "status": status}),
            &mut model,
        )
        .unwrap();
        match object.spec {
            Spec::Pod(pod) => pod,
            other => panic!("{other:?}"),
        }
    }

    fn config_use(name: &str, keys: Option<&[&str]>, required: bool) -> ConfigUse {
        ConfigUse {
            name: name.into(),
            keys: keys.map(|k| k.iter().map(|k| Text::from(*k)).collect()),
            required,
        }
    }

    #[test]
    fn node_phase_and_readiness() {
        let p = pod(
            json!({"nodeName": "node-a"}),
            json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "False"}]}),
        );
        assert_eq!(
            (p.node.as_deref(), p.phase, p.ready),
            (Some("node-a"), Phase::Running, true)
        );
        let p = pod(json!({}), json!(null));
        assert_eq!((p.node, p.phase, p.ready), (None, Phase::Pending, false));
        let p = pod(json!({}), json!({"phase": "Succeeded"}));
        assert!(p.finished());
    }

    #[test]
    fn service_account_and_its_token() {
        let mounted = json!({"name": "kube-api-access-x", "projected": {"sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}
        ]}});
        let p = pod(
            json!({"serviceAccountName": "backup", "volumes": [mounted]}),
            json!(null),
        );
        assert_eq!((p.runs_as(), p.api_token), ("backup", true));
        // automountServiceAccountToken: false leaves no token volume.
        let p = pod(json!({"serviceAccountName": "backup"}), json!(null));
        assert_eq!((p.runs_as(), p.api_token), ("backup", false));
        // Unnamed: `default`, as the API server sets it; the deprecated spelling is read too.
        assert_eq!(pod(json!({}), json!(null)).runs_as(), "default");
        assert_eq!(
            pod(json!({"serviceAccount": "old"}), json!(null)).runs_as(),
            "old"
        );
    }

    #[test]
    fn priority_and_runtime_classes() {
        let p = pod(
            json!({"priorityClassName": "db-critical", "runtimeClassName": "gvisor"}),
            json!(null),
        );
        assert_eq!(p.class(ClassKind::Priority), Some("db-critical"));
        assert_eq!(p.class(ClassKind::Runtime), Some("gvisor"));
        let p = pod(json!({"priorityClassName": "db-critical"}), json!(null));
        assert_eq!(
            (p.class(ClassKind::Priority), p.class(ClassKind::Runtime)),
            (Some("db-critical"), None)
        );
        // An empty name is none.
        let p = pod(json!({"priorityClassName": ""}), json!(null));
        assert_eq!(p.class(ClassKind::Priority), None);
    }

    #[test]
    fn pods_of_one_workload_share_their_requirements() {
        let mut model = ClusterModel::new();
        let spec = json!({"serviceAccountName": "app", "priorityClassName": "high"});
        let mut one = || {
            let object = project_object(
                &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "shop"}, "spec": spec}),
                &mut model,
            )
            .unwrap();
            match object.spec {
                Spec::Pod(pod) => pod.requires,
                _ => unreachable!(),
            }
        };
        assert!(std::sync::Arc::ptr_eq(&one(), &one()));
    }

    #[test]
    fn claims_config_maps_and_secrets() {
        let p = pod(
            json!({
                "volumes": [
                    {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
                    {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                    {"name": "conf", "configMap": {"name": "web-config", "items": [{"key": "nginx.conf", "path": "nginx.conf"}]}},
                    {"name": "tls", "secret": {"secretName": "web-tls", "optional": true}},
                    {"name": "token", "projected": {"sources": [
                        {"serviceAccountToken": {"path": "token"}},
                        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                        {"secret": {"name": "web-extra"}}
                    ]}}
                ],
                "initContainers": [{"name": "init", "envFrom": [{"configMapRef": {"name": "web-config"}}]}],
                "containers": [{"name": "web", "env": [
                    {"name": "A", "value": "x"},
                    {"name": "B", "valueFrom": {"secretKeyRef": {"name": "web-db", "key": "password"}}},
                    {"name": "C", "valueFrom": {"configMapKeyRef": {"name": "web-flags", "key": "beta", "optional": true}}},
                    {"name": "D", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
                ]}],
                "ephemeralContainers": [{"name": "debug", "envFrom": [{"secretRef": {"name": "web-tls"}}]}]
            }),
            json!({"phase": "Running"}),
        );
        assert_eq!(
            p.claims,
            vec![Text::from("data-web-0"), Text::from("web-0-scratch")].into_boxed_slice()
        );
        assert_eq!(
            &*p.config_maps,
            vec![
                config_use("kube-root-ca.crt", Some(&["ca.crt"]), true),
                config_use("web-config", None, true),
                config_use("web-flags", Some(&["beta"]), false),
            ]
            .as_slice()
        );
        assert_eq!(
            &*p.secrets,
            vec![
                config_use("web-db", Some(&["password"]), true),
                config_use("web-extra", None, true),
                config_use("web-tls", None, true),
            ]
            .as_slice()
        );
    }

    #[test]
    fn tolerations() {
        let p = pod(
            json!({"tolerations": [
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "dedicated", "value": "db", "effect": "NoSchedule"},
                {"operator": "Exists"}
            ]}),
            json!({}),
        );
        assert_eq!(
            p.tolerations,
            vec![
                Toleration {
                    key: Some("node.kubernetes.io/unreachable".into()),
                    exists: true,
                    value: None,
                    effect: Some("NoExecute".into())
                },
                Toleration {
                    key: Some("dedicated".into()),
                    exists: false,
                    value: Some("db".into()),
                    effect: Some("NoSchedule".into())
                },
                Toleration {
                    key: None,
                    exists: true,
                    value: None,
                    effect: None
                },
            ]
            .into_boxed_slice()
        );
        let mut model = ClusterModel::new();
        let error = project_object(
            &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"tolerations": [{"operator": "Maybe"}]}}),
            &mut model,
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "spec.tolerations[0].operator: Unsupported value: \"Maybe\": supported values: \"Equal\", \"Exists\""
        );
    }
}
