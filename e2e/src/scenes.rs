//! The scenes the suite builds, as YAML applied by kubectl: a StatefulSet database with claims and
//! a budget, a web Deployment behind a Service reading a ConfigMap key, a Deployment pinned to one
//! node, and a custom resource owning a StatefulSet.

use crate::scene::TOLERATION;

/// The Namespace `namespace`, the first document of every scene.
pub fn namespace_yaml(name: &str) -> String {
    format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n")
}

/// A StatefulSet `db` with claims, a headless Service and a PDB, in `namespace`.
pub fn database(namespace: &str, replicas: u32, min_available: u32) -> String {
    let objects = format!(
        r#"apiVersion: v1
kind: Service
metadata: {{name: db, namespace: {namespace}}}
spec:
  clusterIP: None
  selector: {{app: db}}
  ports: [{{port: 5432}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db, namespace: {namespace}}}
spec:
  serviceName: db
  replicas: {replicas}
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec:
      tolerations: [{TOLERATION}]
      containers:
      - name: postgres
        image: postgres:16
        volumeMounts: [{{name: data, mountPath: /var/lib/postgresql}}]
  volumeClaimTemplates:
  - metadata: {{name: data}}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {{requests: {{storage: 1Gi}}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: db, namespace: {namespace}}}
spec:
  minAvailable: {min_available}
  selector: {{matchLabels: {{app: db}}}}
"#
    );
    format!("{}---\n{objects}", namespace_yaml(namespace))
}

/// A Deployment `name` behind a Service of the same name, its pods reading key `mode` of the
/// ConfigMap `<name>-config`, with a PDB of `min_available`.
pub fn web(namespace: &str, name: &str, replicas: u32, strategy: &str, min_available: u32) -> String {
    let objects = format!(
        r#"apiVersion: v1
kind: ConfigMap
metadata: {{name: {name}-config, namespace: {namespace}}}
data: {{mode: fast, color: blue}}
---
apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  selector: {{app: {name}}}
  ports: [{{port: 80}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  replicas: {replicas}
  strategy: {{type: {strategy}}}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      tolerations: [{TOLERATION}]
      containers:
      - name: nginx
        image: nginx:1.27
        env:
        - name: MODE
          valueFrom: {{configMapKeyRef: {{name: {name}-config, key: mode}}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  minAvailable: {min_available}
  selector: {{matchLabels: {{app: {name}}}}}
"#
    );
    format!("{}---\n{objects}", namespace_yaml(namespace))
}

/// A Deployment `pinned` whose every replica runs on `node`, behind a Service.
pub fn pinned(namespace: &str, node: &str) -> String {
    let objects = format!(
        r#"apiVersion: v1
kind: Service
metadata: {{name: pinned, namespace: {namespace}}}
spec:
  selector: {{app: pinned}}
  ports: [{{port: 80}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: pinned, namespace: {namespace}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: pinned}}}}
  template:
    metadata: {{labels: {{app: pinned}}}}
    spec:
      nodeSelector: {{kubernetes.io/hostname: {node}}}
      tolerations: [{TOLERATION}]
      containers: [{{name: app, image: nginx:1.27}}]
"#
    );
    format!("{}---\n{objects}", namespace_yaml(namespace))
}

/// The `Widget` CustomResourceDefinition (group e2e.suture.dev).
pub const WIDGET_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.e2e.suture.dev}
spec:
  group: e2e.suture.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#;

/// A Widget `name` in `namespace`.
pub fn widget(namespace: &str, name: &str) -> String {
    format!(
        "apiVersion: e2e.suture.dev/v1\nkind: Widget\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec: {{size: 3}}\n"
    )
}

/// A StatefulSet `cache` (3 members, no claims) owned by the Widget `owner` of uid `uid`.
pub fn owned_cache(namespace: &str, owner: &str, uid: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: cache
  namespace: {namespace}
  ownerReferences:
  - {{apiVersion: e2e.suture.dev/v1, kind: Widget, name: {owner}, uid: {uid}, controller: true, blockOwnerDeletion: true}}
spec:
  serviceName: cache
  replicas: 3
  selector: {{matchLabels: {{app: cache}}}}
  template:
    metadata: {{labels: {{app: cache}}}}
    spec:
      tolerations: [{TOLERATION}]
      containers: [{{name: redis, image: redis:7}}]
"#
    )
}

/// A Deployment `app` of two replicas on the simulated nodes, its pods labelled `app=app` with
/// `pod_spec` (YAML lines at the pod spec's indentation, e.g. `serviceAccountName: app`) added.
pub fn app_deployment(namespace: &str, pod_spec: &[&str]) -> String {
    let extra: String = pod_spec.iter().map(|line| format!("      {line}\n")).collect();
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: app, namespace: {namespace}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: app}}}}
  template:
    metadata: {{labels: {{app: app}}}}
    spec:
{extra}      tolerations: [{TOLERATION}]
      containers: [{{name: app, image: registry.example/app:1.0}}]
"#
    )
}
