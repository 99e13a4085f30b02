//! Which pods serve a Service's port, as the EndpointSlice controller works it out
//! (`FindPort` in `k8s.io/endpointslice`): a numeric `targetPort` is served by every selected
//! pod; a named one only by a pod that declares a container port of that name and protocol — in
//! its containers, or in its restartable init containers (sidecars, `restartPolicy: Always`).
//! Other init containers and ephemeral containers serve nothing. A pod that declares no such
//! port stays an endpoint of the Service's slices, but without that port: clients of the port
//! reach none of it.
//!
//! Read leniently, like the Pod Security checks: a field of an odd type counts as absent.

use serde_json::Value as Json;

use crate::cluster::object::{NamedPort, PortTarget, ServicePort};

/// The protocol of a port that states none.
pub const DEFAULT_PROTOCOL: &str = "TCP";

/// The container ports a pod `spec` (or a template's) declares by name, as `(name, protocol)`,
/// in the order the controller searches them.
pub fn declared(spec: Option<&Json>) -> Vec<(&str, &str)> {
    let Some(spec) = spec else {
        return Vec::new();
    };
    let containers = list(spec, "containers");
    let sidecars = list(spec, "initContainers")
        .iter()
        .filter(|c| c.get("restartPolicy").and_then(Json::as_str) == Some("Always"));
    containers
        .iter()
        .chain(sidecars)
        .flat_map(|container| list(container, "ports"))
        .filter_map(|port| {
            let name = port
                .get("name")
                .and_then(Json::as_str)
                .filter(|n| !n.is_empty())?;
            let protocol = port
                .get("protocol")
                .and_then(Json::as_str)
                .unwrap_or(DEFAULT_PROTOCOL);
            Some((name, protocol))
        })
        .collect()
}

fn list<'a>(object: &'a Json, key: &str) -> &'a [Json] {
    object
        .get(key)
        .and_then(Json::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Whether a pod declaring `ports` serves the Service port `port`.
pub fn serves<'a>(ports: impl IntoIterator<Item = (&'a str, &'a str)>, port: &ServicePort) -> bool {
    match &port.target {
        PortTarget::Number(_) => true,
        PortTarget::Name(name) => ports
            .into_iter()
            .any(|(declared, protocol)| declared == &**name && protocol == &*port.protocol),
    }
}

/// [`serves`] over a projected pod's named ports.
pub fn pod_serves(ports: &[NamedPort], port: &ServicePort) -> bool {
    serves(ports.iter().map(|p| (&*p.name, &*p.protocol)), port)
}

/// How a Service port is named in messages: its name, or its number when it has none.
pub fn display(port: &ServicePort) -> String {
    if port.name.is_empty() {
        port.port.to_string()
    } else {
        port.name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn port(target: PortTarget, protocol: &str) -> ServicePort {
        ServicePort {
            name: "http".into(),
            port: 80,
            protocol: protocol.into(),
            target,
        }
    }

    #[test]
    fn containers_and_sidecars_declare_ports_others_do_not() {
        let spec = json!({
            "containers": [{"name": "app", "ports": [
                {"name": "http", "containerPort": 8080},
                {"containerPort": 9000},
                {"name": "dns", "containerPort": 53, "protocol": "UDP"}]}],
            "initContainers": [
                {"name": "proxy", "restartPolicy": "Always", "ports": [{"name": "mesh", "containerPort": 15001}]},
                {"name": "setup", "ports": [{"name": "setup", "containerPort": 1}]}],
            "ephemeralContainers": [{"name": "debug", "ports": [{"name": "debug", "containerPort": 2}]}]
        });
        assert_eq!(
            declared(Some(&spec)),
            vec![("http", "TCP"), ("dns", "UDP"), ("mesh", "TCP")]
        );
        assert!(declared(Some(&json!({"containers": "odd"}))).is_empty());
        assert!(declared(None).is_empty());
    }

    #[test]
    fn a_named_target_needs_the_name_and_the_protocol() {
        let ports = [("http", "TCP"), ("dns", "UDP")];
        assert!(serves(ports, &port(PortTarget::Number(8080), "TCP")));
        assert!(
            serves([], &port(PortTarget::Number(8080), "TCP")),
            "a number always resolves"
        );
        assert!(serves(ports, &port(PortTarget::Name("http".into()), "TCP")));
        assert!(!serves(ports, &port(PortTarget::Name("web".into()), "TCP")));
        assert!(!serves(ports, &port(PortTarget::Name("http".into()), "UDP")));
        assert!(serves(ports, &port(PortTarget::Name("dns".into()), "UDP")));
    }
}
