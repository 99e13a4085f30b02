//! A workload's pod template reduced to what a change of it means: the fingerprint of the template
//! with the values kube-apiserver fills in by default taken out, so that a manifest as written
//! (`helm template` output, without defaults) and the object as stored (with them) have the same
//! fingerprint when applying the one would not change the other — and therefore start no rollout.
//!
//! The model keeps the fingerprint of each Deployment, StatefulSet and DaemonSet it loads
//! ([`ClusterModel::insert_json`](super::ClusterModel::insert_json)): the slim model
//! keeps no templates, and a what-if UPDATE built from a manifest has only the new object. The
//! defaults are those of `k8s.io/kubernetes/pkg/apis/core/v1/defaults.go` that reach a pod
//! template (`SetDefaults_PodSpec`, `_Container`, `_Probe`, `_HTTPGetAction`, the volume sources,
//! `_ObjectFieldSelector`, container ports' protocol, `_ResourceList`'s rounding to milli-units);
//! fields only a Pod gets (`enableServiceLinks`, requests from limits) are not in templates. A
//! value equal to its default is dropped from both sides, so a field set to its default
//! explicitly matches one left out.

use serde_json::{Map, Value as Json};

/// The kinds whose pod template change rolls their pods.
pub fn rolls_on_template_change(group: &str, kind: &str) -> bool {
    group == "apps" && matches!(kind, "Deployment" | "StatefulSet" | "DaemonSet")
}

/// The fingerprint of `object`'s pod template (`spec.template`), for a kind that rolls its pods
/// when it changes; `None` for other kinds or without a template.
pub fn of_workload(object: &Json) -> Option<u64> {
    let (group, _) = object["apiVersion"]
        .as_str()?
        .rsplit_once('/')
        .unwrap_or(("", ""));
    let kind = object["kind"].as_str()?;
    if !rolls_on_template_change(group, kind) {
        return None;
    }
    object["spec"].get("template").map(fingerprint)
}

/// The fingerprint of a pod template: stable across runs and versions (FNV-1a over the
/// normalized template's canonical text, map keys sorted).
pub fn fingerprint(template: &Json) -> u64 {
    let mut hash = Fnv::default();
    canonical(&normalized(template), &mut hash);
    hash.0
}

/// `template` without the values kube-apiserver would fill in by default, nulls, and the empty
/// pod-level `securityContext`; quantities in resources in milli-units.
pub fn normalized(template: &Json) -> Json {
    let mut template = without_nulls(template);
    if let Some(metadata) = template.get_mut("metadata").and_then(Json::as_object_mut) {
        // `kubectl get -o yaml` writes `creationTimestamp: null` (dropped as a null above).
        drop_empty(metadata, "annotations");
        drop_empty(metadata, "labels");
    }
    if let Some(object) = template.as_object_mut() {
        drop_empty(object, "metadata");
    }
    if let Some(spec) = template.get_mut("spec").and_then(Json::as_object_mut) {
        pod_spec(spec);
    }
    template
}

fn pod_spec(spec: &mut Map<String, Json>) {
    drop_default(spec, "dnsPolicy", &Json::from("ClusterFirst"));
    drop_default(spec, "restartPolicy", &Json::from("Always"));
    drop_default(spec, "terminationGracePeriodSeconds", &Json::from(30));
    drop_default(spec, "schedulerName", &Json::from("default-scheduler"));
    drop_empty(spec, "securityContext");
    // `serviceAccount` is the deprecated twin the API server fills from `serviceAccountName`.
    if spec.get("serviceAccount").is_some() && spec.get("serviceAccount") == spec.get("serviceAccountName") {
        spec.remove("serviceAccount");
    }
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        for container in objects_in(spec, list) {
            self::container(container);
        }
    }
    for volume in objects_in(spec, "volumes") {
        self::volume(volume);
    }
}

fn container(container: &mut Map<String, Json>) {
    let pull_default = container
        .get("image")
        .and_then(Json::as_str)
        .map(default_pull_policy);
    if let Some(default) = pull_default {
        drop_default(container, "imagePullPolicy", &Json::from(default));
    }
    drop_default(
        container,
        "terminationMessagePath",
        &Json::from("/dev/termination-log"),
    );
    drop_default(container, "terminationMessagePolicy", &Json::from("File"));
    for port in objects_in(container, "ports") {
        drop_default(port, "protocol", &Json::from("TCP"));
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = container.get_mut(probe).and_then(Json::as_object_mut) {
            self::probe(probe);
        }
    }
    for env in objects_in(container, "env") {
        if let Some(field) = env
            .get_mut("valueFrom")
            .and_then(|v| v.get_mut("fieldRef"))
            .and_then(Json::as_object_mut)
        {
            drop_default(field, "apiVersion", &Json::from("v1"));
        }
    }
    if let Some(resources) = container.get_mut("resources").and_then(Json::as_object_mut) {
        for list in ["limits", "requests"] {
            if let Some(quantities) = resources.get_mut(list).and_then(Json::as_object_mut) {
                for value in quantities.values_mut() {
                    // A quantity may be written as a YAML/JSON number (`cpu: 0.5`).
                    let text = match value {
                        Json::String(text) => Some(text.clone()),
                        Json::Number(number) => Some(number.to_string()),
                        _ => None,
                    };
                    if let Some(milli) = text.as_deref().and_then(milli_units) {
                        *value = Json::from(format!("{milli}m"));
                    }
                }
            }
            drop_empty(resources, list);
        }
    }
    drop_empty(container, "resources");
}

fn probe(probe: &mut Map<String, Json>) {
    drop_default(probe, "timeoutSeconds", &Json::from(1));
    drop_default(probe, "periodSeconds", &Json::from(10));
    drop_default(probe, "successThreshold", &Json::from(1));
    drop_default(probe, "failureThreshold", &Json::from(3));
    if let Some(get) = probe.get_mut("httpGet").and_then(Json::as_object_mut) {
        drop_default(get, "path", &Json::from("/"));
        drop_default(get, "scheme", &Json::from("HTTP"));
    }
}

fn volume(volume: &mut Map<String, Json>) {
    for source in ["configMap", "secret", "downwardAPI", "projected"] {
        if let Some(source) = volume.get_mut(source).and_then(Json::as_object_mut) {
            drop_default(source, "defaultMode", &Json::from(420));
        }
    }
    if let Some(host_path) = volume.get_mut("hostPath").and_then(Json::as_object_mut) {
        drop_default(host_path, "type", &Json::from(""));
    }
    if let Some(items) = volume
        .get_mut("downwardAPI")
        .and_then(|d| d.get_mut("items"))
        .and_then(Json::as_array_mut)
    {
        for item in items.iter_mut().filter_map(Json::as_object_mut) {
            if let Some(field) = item.get_mut("fieldRef").and_then(Json::as_object_mut) {
                drop_default(field, "apiVersion", &Json::from("v1"));
            }
        }
    }
    if let Some(sources) = volume
        .get_mut("projected")
        .and_then(|p| p.get_mut("sources"))
        .and_then(Json::as_array_mut)
    {
        for source in sources.iter_mut().filter_map(Json::as_object_mut) {
            if let Some(token) = source
                .get_mut("serviceAccountToken")
                .and_then(Json::as_object_mut)
            {
                drop_default(token, "expirationSeconds", &Json::from(3600));
            }
        }
    }
}

/// `Always` for an image tagged `latest` or not tagged (nor pinned by digest), else
/// `IfNotPresent` (`SetDefaults_Container`).
fn default_pull_policy(image: &str) -> &'static str {
    let (name, digest) = match image.split_once('@') {
        Some((name, _)) => (name, true),
        None => (image, false),
    };
    // A tag follows the last `:` after the last `/` (a registry's port comes before a `/`).
    let last = name.rsplit('/').next().unwrap_or(name);
    let tag = last.rsplit_once(':').map(|(_, tag)| tag);
    match tag {
        Some("latest") => "Always",
        Some(_) => "IfNotPresent",
        None if digest => "IfNotPresent",
        None => "Always",
    }
}

/// A quantity (`500m`, `0.5`, `1Gi`, `1e3`, `2k`) in milli-units, rounded up as
/// `SetDefaults_ResourceList` rounds; `None` when it does not read as one.
fn milli_units(text: &str) -> Option<i128> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let (negative, number) = match number.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, number.strip_prefix('+').unwrap_or(number)),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let digits = |s: &str| s.is_empty() || s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) || fraction.len() > 30 || whole.len() > 30 {
        return None;
    }
    // value = mantissa / 10^scale
    let mantissa: i128 = format!("{whole}{fraction}").parse().ok()?;
    let scale = i32::try_from(fraction.len()).ok()?;
    let (base, exponent): (i128, i32) = match suffix {
        "" => (1, 0),
        "n" => (1, -9),
        "u" => (1, -6),
        "m" => (1, -3),
        "k" => (1, 3),
        "M" => (1, 6),
        "G" => (1, 9),
        "T" => (1, 12),
        "P" => (1, 15),
        "E" => (1, 18),
        "Ki" => (1 << 10, 0),
        "Mi" => (1 << 20, 0),
        "Gi" => (1 << 30, 0),
        "Ti" => (1 << 40, 0),
        "Pi" => (1 << 50, 0),
        "Ei" => (1 << 60, 0),
        other => {
            let exponent = other.strip_prefix(['e', 'E'])?.parse::<i32>().ok()?;
            (1, exponent)
        }
    };
    // milli = mantissa * base * 10^(exponent + 3 - scale), rounded up.
    let power = exponent.checked_add(3)?.checked_sub(scale)?;
    let scaled = mantissa.checked_mul(base)?;
    let milli = if power >= 0 {
        scaled.checked_mul(10i128.checked_pow(power.unsigned_abs())?)?
    } else {
        let divisor = 10i128.checked_pow(power.unsigned_abs())?;
        scaled.checked_add(divisor - 1)? / divisor
    };
    Some(if negative { -milli } else { milli })
}

fn without_nulls(value: &Json) -> Json {
    match value {
        Json::Object(map) => Json::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Json::Array(items) => Json::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

fn drop_default(map: &mut Map<String, Json>, key: &str, default: &Json) {
    if map.get(key) == Some(default) {
        map.remove(key);
    }
}

fn drop_empty(map: &mut Map<String, Json>, key: &str) {
    let empty = match map.get(key) {
        Some(Json::Object(inner)) => inner.is_empty(),
        Some(Json::Array(items)) => items.is_empty(),
        _ => false,
    };
    if empty {
        map.remove(key);
    }
}

fn objects_in<'a>(
    map: &'a mut Map<String, Json>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Json>> {
    map.get_mut(key)
        .and_then(Json::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Json::as_object_mut)
}

/// FNV-1a, 64 bits: a fixed function, so fingerprints compare across processes and versions.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Writes `value` as canonical text (map keys sorted, whatever order the map keeps).
fn canonical(value: &Json, out: &mut Fnv) {
    match value {
        Json::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.write(b"{");
            for key in keys {
                out.write(Json::from(key.as_str()).to_string().as_bytes());
                out.write(b":");
                if let Some(value) = map.get(key) {
                    canonical(value, out);
                }
                out.write(b",");
            }
            out.write(b"}");
        }
        Json::Array(items) => {
            out.write(b"[");
            for item in items {
                canonical(item, out);
                out.write(b",");
            }
            out.write(b"]");
        }
        other => out.write(other.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A template as a chart writes it.
    fn written() -> Json {
        json!({
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [{
                    "name": "web",
                    "image": "registry.example.com/web:3.8.1",
                    "ports": [{"containerPort": 8080, "name": "http"}],
                    "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                    "readinessProbe": {"httpGet": {"port": "http"}},
                    "resources": {"requests": {"cpu": "0.1", "memory": "128Mi"}}
                }],
                "serviceAccountName": "web",
                "volumes": [{"name": "config", "configMap": {"name": "web-config"}}]
            }
        })
    }

    /// The same template as kube-apiserver stores it, defaults filled in.
    fn stored() -> Json {
        json!({
            "metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
            "spec": {
                "containers": [{
                    "name": "web",
                    "image": "registry.example.com/web:3.8.1",
                    "imagePullPolicy": "IfNotPresent",
                    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                    "env": [{"name": "POD", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
                    "readinessProbe": {
                        "httpGet": {"path": "/", "port": "http", "scheme": "HTTP"},
                        "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3
                    },
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File"
                }],
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "serviceAccount": "web",
                "serviceAccountName": "web",
                "terminationGracePeriodSeconds": 30,
                "volumes": [{"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}}]
            }
        })
    }

    #[test]
    fn a_template_as_written_and_as_stored_with_defaults_have_one_fingerprint() {
        assert_eq!(normalized(&written()), normalized(&stored()));
        assert_eq!(fingerprint(&written()), fingerprint(&stored()));
    }

    #[test]
    fn a_stored_workload_and_its_chart_form_have_one_fingerprint() {
        let snapshot: Json =
            serde_yaml_ng::from_str(include_str!("../../../testdata/clusters/web/snapshot.yaml"))
                .unwrap_or_default();
        let stored = snapshot["items"]
            .as_array()
            .and_then(|items| items.iter().find(|o| o["kind"] == "Deployment"))
            .cloned()
            .unwrap_or_default();
        let written: Json = serde_yaml_ng::from_str(include_str!(
            "../../../testdata/releases/shop-web-recreate-only.yaml"
        ))
        .unwrap_or_default();
        assert!(of_workload(&stored).is_some());
        assert_eq!(of_workload(&stored), of_workload(&written));
    }

    #[test]
    fn any_change_that_is_not_a_default_changes_the_fingerprint() {
        let base = fingerprint(&stored());
        let changes: [(&str, Json); 6] = [
            (
                "/spec/containers/0/image",
                json!("registry.example.com/web:3.9.0"),
            ),
            ("/spec/containers/0/imagePullPolicy", json!("Always")),
            ("/spec/terminationGracePeriodSeconds", json!(60)),
            ("/spec/containers/0/resources/requests/cpu", json!("200m")),
            ("/spec/containers/0/readinessProbe/periodSeconds", json!(5)),
            ("/metadata/labels/app", json!("web-v2")),
        ];
        for (path, value) in changes {
            let mut changed = stored();
            *changed.pointer_mut(path).unwrap_or_else(|| panic!("{path}")) = value;
            assert_ne!(fingerprint(&changed), base, "{path}");
        }
        // A removed env var, a removed annotation-free label set: changes too.
        let mut changed = stored();
        changed["spec"]["containers"][0]["env"] = json!([]);
        assert_ne!(fingerprint(&changed), base);
    }

    #[test]
    fn the_pull_policy_default_follows_the_image_tag() {
        assert_eq!(default_pull_policy("nginx"), "Always");
        assert_eq!(default_pull_policy("nginx:latest"), "Always");
        assert_eq!(default_pull_policy("nginx:1.27"), "IfNotPresent");
        assert_eq!(default_pull_policy("registry:5000/nginx"), "Always");
        assert_eq!(default_pull_policy("registry:5000/nginx:1.27"), "IfNotPresent");
        assert_eq!(default_pull_policy("nginx@sha256:abc"), "IfNotPresent");
    }

    #[test]
    fn quantities_compare_by_value_in_milli_units() {
        for (text, milli) in [
            ("100m", 100),
            ("0.1", 100),
            (".5", 500),
            ("1", 1000),
            ("1k", 1_000_000),
            ("1e3", 1_000_000),
            ("1Ki", 1_024_000),
            ("128Mi", 134_217_728_000),
            ("1.5Gi", 1_610_612_736_000),
            ("1n", 1),
            ("-2", -2000),
        ] {
            assert_eq!(milli_units(text), Some(milli), "{text}");
        }
        for text in [
            "",
            "abc",
            "1Xi",
            "1..2",
            "1e",
            "1e-2147483648",
            "1e2147483647",
            "170141183460469231731687303715884105727Ei",
        ] {
            assert_eq!(milli_units(text), None, "{text}");
        }
    }

    #[test]
    fn only_workloads_that_roll_have_a_fingerprint() {
        let deployment =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": written()}});
        assert_eq!(of_workload(&deployment), Some(fingerprint(&written())));
        let job = json!({"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": written()}});
        assert_eq!(of_workload(&job), None);
        let empty = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {}});
        assert_eq!(of_workload(&empty), None);
    }
}
