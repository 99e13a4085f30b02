//! The scenes' building blocks as YAML documents (in a scenario's namespace): workloads whose
//! pods carry the simulation's toleration and an `app` label, Services and budgets selecting by
//! that label, claims, bare pods and ConfigMaps. `extra` fragments are spliced into a pod
//! template's spec (`nodeSelector: ...`) or a workload's spec (`strategy: ...`), indented by the
//! caller's YAML flow style (`{...}` fragments keep indentation trivial).

use crate::scene::TOLERATION;
use crate::simulator::DEDICATED_KEY;

/// A pod spec fragment placing pods on `node` only (a scenario's dedicated node).
pub fn on_node(node: &str) -> String {
    format!(
        "nodeSelector: {{kubernetes.io/hostname: {node}}}\n      tolerations: [{TOLERATION}, {{key: {DEDICATED_KEY}, operator: Exists}}]"
    )
}

fn tolerations(pod_extra: &str) -> String {
    if pod_extra.contains("tolerations:") {
        pod_extra.to_owned()
    } else if pod_extra.is_empty() {
        format!("tolerations: [{TOLERATION}]")
    } else {
        format!("tolerations: [{TOLERATION}]\n      {pod_extra}")
    }
}

fn template(app: &str, pod_extra: &str) -> String {
    format!(
        "  template:\n    metadata:\n      labels: {{app: {app}}}\n    spec:\n      {}\n      \
         containers: [{{name: app, image: nginx:1.27}}]\n",
        tolerations(pod_extra)
    )
}

/// A Deployment `name` of `replicas` (pods labelled `app: name`); `spec_extra` is a line of its
/// spec (`strategy: {...}`), `pod_extra` of its pod spec.
pub fn deployment(ns: &str, name: &str, replicas: u32, spec_extra: &str, pod_extra: &str) -> String {
    format!(
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  \
         replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n  {spec_extra}\n{}",
        template(name, pod_extra)
    )
}

/// A ReplicaSet `name` no Deployment controls.
pub fn replica_set(ns: &str, name: &str, replicas: u32) -> String {
    format!(
        "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  \
         replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n{}",
        template(name, "")
    )
}

/// A ReplicationController `name`.
pub fn replication_controller(ns: &str, name: &str, replicas: u32) -> String {
    format!(
        "---\napiVersion: v1\nkind: ReplicationController\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  \
         replicas: {replicas}\n  selector: {{app: {name}}}\n{}",
        template(name, "")
    )
}

/// A StatefulSet `name` (pods created in parallel), with a 1Gi claim template `data` when
/// `claims`; `spec_extra` is a line of its spec (`updateStrategy: {...}`).
pub fn stateful_set(ns: &str, name: &str, replicas: u32, claims: bool, spec_extra: &str) -> String {
    let claims = if claims {
        "  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec: {accessModes: [ReadWriteOnce], \
         resources: {requests: {storage: 1Gi}}}\n"
    } else {
        ""
    };
    let mut template = template(name, "");
    if !claims.is_empty() {
        template = template.replace(
            "containers: [{name: app, image: nginx:1.27}]",
            "containers: [{name: app, image: nginx:1.27, volumeMounts: [{name: data, mountPath: /data}]}]",
        );
    }
    format!(
        "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  \
         serviceName: {name}\n  replicas: {replicas}\n  podManagementPolicy: Parallel\n  \
         selector: {{matchLabels: {{app: {name}}}}}\n  {spec_extra}\n{template}{claims}"
    )
}

/// A DaemonSet `name` on every simulated node (or as `pod_extra` places it).
pub fn daemon_set(ns: &str, name: &str, spec_extra: &str, pod_extra: &str) -> String {
    format!(
        "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  \
         selector: {{matchLabels: {{app: {name}}}}}\n  {spec_extra}\n{}",
        template(name, pod_extra)
    )
}

/// A Job `name` running `parallelism` pods.
pub fn job(ns: &str, name: &str, parallelism: u32) -> String {
    format!(
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  \
         parallelism: {parallelism}\n  completions: {parallelism}\n  template:\n    metadata:\n      \
         labels: {{app: {name}}}\n    spec:\n      restartPolicy: Never\n      tolerations: [{TOLERATION}]\n      \
         containers: [{{name: app, image: busybox:1.36}}]\n"
    )
}

/// A Service `name` selecting `app: app`.
pub fn service(ns: &str, name: &str, app: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  \
         selector: {{app: {app}}}\n  ports: [{{port: 80}}]\n"
    )
}

/// A Deployment `name` of 2 whose pods declare container port 8080 as `port_name`, behind a
/// Service `name` whose port targets `http` by name (served while the name is `http`).
pub fn named_port(ns: &str, name: &str, port_name: &str) -> String {
    format!(
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  \
         replicas: 2\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata:\n      \
         labels: {{app: {name}}}\n    spec:\n      {}\n      containers: [{{name: app, image: nginx:1.27, \
         ports: [{{name: {port_name}, containerPort: 8080}}]}}]\n\
         ---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  \
         selector: {{app: {name}}}\n  ports: [{{port: 80, targetPort: http}}]\n",
        tolerations("")
    )
}

/// A PodDisruptionBudget `name` over `app: app`; `budget` is `minAvailable: 2`,
/// `maxUnavailable: 25%`...
pub fn budget(ns: &str, name: &str, app: &str, budget: &str) -> String {
    format!(
        "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: {name}, namespace: {ns}}}\n\
         spec:\n  {budget}\n  selector: {{matchLabels: {{app: {app}}}}}\n"
    )
}

/// A bare pod `name` labelled `app: app`; `pod_extra` is a line of its spec.
pub fn pod(ns: &str, name: &str, app: &str, pod_extra: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}, labels: {{app: {app}}}}}\n\
         spec:\n  {}\n  containers: [{{name: app, image: nginx:1.27}}]\n",
        tolerations(pod_extra).replace("\n      ", "\n  ")
    )
}

/// A 1Gi claim `name`.
pub fn claim(ns: &str, name: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}, namespace: {ns}}}\n\
         spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}\n"
    )
}

/// A pod spec line mounting claim `claim`.
pub fn mounting(claim: &str) -> String {
    format!("volumes: [{{name: data, persistentVolumeClaim: {{claimName: {claim}}}}}]")
}

/// A ConfigMap `name`, with `metadata_extra` in its metadata (`finalizers: [...]`,
/// `ownerReferences: [...]`).
pub fn config_map(ns: &str, name: &str, metadata_extra: &str) -> String {
    let extra = if metadata_extra.is_empty() {
        String::new()
    } else {
        format!(", {metadata_extra}")
    };
    format!(
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {ns}{extra}}}\ndata: {{mode: fast}}\n"
    )
}
