//! The object types Kubernetes declares for admission expressions: `request`
//! (`kubernetes.AdmissionRequest`) and `namespaceObject` (`kubernetes.Namespace`, the fields
//! Kubernetes keeps of it). Selecting a field these types do not have is a compile error, as
//! it is in kube-apiserver.

use crate::cel::check::types::{ExprType, ObjectType};

fn object(t: &'static ObjectType) -> Option<ExprType> {
    Some(ExprType::Object(t))
}

fn strings() -> ExprType {
    ExprType::list(ExprType::String)
}

fn string_map() -> ExprType {
    ExprType::map(ExprType::String, ExprType::String)
}

pub(crate) static ADMISSION_REQUEST: ObjectType = ObjectType {
    name: "kubernetes.AdmissionRequest",
    field: |name| match name {
        "kind" | "requestKind" => object(&GROUP_VERSION_KIND),
        "resource" | "requestResource" => object(&GROUP_VERSION_RESOURCE),
        "subResource" | "requestSubResource" | "name" | "namespace" | "operation" => Some(ExprType::String),
        "userInfo" => object(&USER_INFO),
        "dryRun" => Some(ExprType::Bool),
        "options" => Some(ExprType::Dyn),
        _ => None,
    },
};

static GROUP_VERSION_KIND: ObjectType = ObjectType {
    name: "kubernetes.GroupVersionKind",
    field: |name| matches!(name, "group" | "version" | "kind").then_some(ExprType::String),
};

static GROUP_VERSION_RESOURCE: ObjectType = ObjectType {
    name: "kubernetes.GroupVersionResource",
    field: |name| matches!(name, "group" | "version" | "resource").then_some(ExprType::String),
};

static USER_INFO: ObjectType = ObjectType {
    name: "kubernetes.UserInfo",
    field: |name| match name {
        "username" | "uid" => Some(ExprType::String),
        "groups" => Some(strings()),
        "extra" => Some(ExprType::map(ExprType::String, strings())),
        _ => None,
    },
};

pub(crate) static NAMESPACE: ObjectType = ObjectType {
    name: "kubernetes.Namespace",
    field: |name| match name {
        "metadata" => object(&NAMESPACE_METADATA),
        "spec" => object(&NAMESPACE_SPEC),
        "status" => object(&NAMESPACE_STATUS),
        _ => None,
    },
};

static NAMESPACE_METADATA: ObjectType = ObjectType {
    name: "kubernetes.NamespaceMetadata",
    field: |name| match name {
        "name" | "generateName" | "namespace" | "UID" | "resourceVersion" => Some(ExprType::String),
        "labels" | "annotations" => Some(string_map()),
        "creationTimestamp" | "deletionTimestamp" => Some(ExprType::Timestamp),
        "deletionGracePeriodSeconds" | "generation" => Some(ExprType::Int),
        "finalizers" => Some(strings()),
        _ => None,
    },
};

static NAMESPACE_SPEC: ObjectType = ObjectType {
    name: "kubernetes.NamespaceSpec",
    field: |name| (name == "finalizers").then(strings),
};

static NAMESPACE_STATUS: ObjectType = ObjectType {
    name: "kubernetes.NamespaceStatus",
    field: |name| match name {
        "conditions" => Some(ExprType::list(ExprType::Object(&NAMESPACE_CONDITION))),
        "phase" => Some(ExprType::String),
        _ => None,
    },
};

static NAMESPACE_CONDITION: ObjectType = ObjectType {
    name: "kubernetes.NamespaceCondition",
    field: |name| match name {
        "status" | "type" | "message" | "reason" => Some(ExprType::String),
        "lastTransitionTime" => Some(ExprType::Timestamp),
        _ => None,
    },
};
