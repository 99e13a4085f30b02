//! The walk of a path of field names through a kind's JSON schema: a built-in kind's, as
//! `schemars` renders k8s-openapi's types ([`crate::lint::builtin`]), or a CRD version's
//! `openAPIV3Schema` ([`crate::lint::crds`]).
//!
//! What schemars emits for k8s-openapi types: the kind itself inline at the root, every other
//! named type under `$defs` and reached by `{"$ref": "#/$defs/io.k8s...."}` (with a sibling
//! `description`), lists as `{"type": "array", "items": ...}`, string maps as
//! `{"type": "object", "additionalProperties": ...}`, `IntOrString` and `Quantity` as
//! `{"x-kubernetes-int-or-string": true}`, `Time` as a string, `RawExtension` as a bare
//! `{"type": "object"}`. The walker also accepts the nullable forms schemars uses for `Option`
//! (`anyOf` with `{"type": "null"}`, `"type": [..., "null"]`). Anything it cannot see into (a
//! scalar, an int-or-string, a free-form object, a real union) stops the walk: nothing below it
//! is judged.
//!
//! What CRD schemas add: `x-kubernetes-preserve-unknown-fields: true` (any field, nothing judged
//! below), `x-kubernetes-int-or-string`, value-validation `anyOf`/`oneOf` beside the node's own
//! `properties` (the node's properties are what is declared, as in a structural schema), and
//! `x-kubernetes-embedded-resource` (an object whose `apiVersion`, `kind` and `metadata` are
//! implicit).

use serde_json::Value;

/// A place in a kind's schema: the schema at that place and the document holding its `$defs`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'a> {
    root: &'a Value,
    node: &'a Value,
}

/// What selecting a field of a place finds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Field<'a> {
    /// The field is declared (or a map's key): its place.
    Found(At<'a>),
    /// Nothing can be said: the place is a scalar, an int-or-string, a free-form object...
    Unknown,
    /// The place is an object whose properties do not include the field.
    Undefined,
}

/// What a place holds, once `$ref`s and nullability are seen through.
enum Shape<'a> {
    Object(&'a serde_json::Map<String, Value>),
    Map(Option<&'a Value>),
    List(Option<&'a Value>),
    Opaque,
}

/// How many `$ref`/`anyOf` hops are followed before giving up (schemas are not that deep).
const MAX_HOPS: usize = 32;

impl<'a> At<'a> {
    /// The root of a schema document (a kind's schema).
    pub(crate) fn root(root: &'a Value) -> Self {
        Self { root, node: root }
    }

    fn at(self, node: &'a Value) -> Self {
        Self {
            root: self.root,
            node,
        }
    }

    /// The schema this place stands for: `$ref`s followed, a nullable `anyOf`/`oneOf` unwrapped.
    /// `None` when it cannot be resolved (a dangling reference, a real union).
    fn resolved(self) -> Option<&'a Value> {
        let mut node = self.node;
        for _ in 0..MAX_HOPS {
            if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
                node = self.root.pointer(reference.strip_prefix('#')?)?;
                continue;
            }
            // A structural schema declares its fields beside any value-validation union.
            let declares = ["properties", "items", "additionalProperties"]
                .iter()
                .any(|key| node.get(key).is_some());
            let union = ["anyOf", "oneOf"]
                .iter()
                .filter(|_| !declares)
                .find_map(|key| node.get(key).and_then(Value::as_array));
            if let Some(variants) = union {
                let mut real = variants.iter().filter(|v| !is_null(v));
                match (real.next(), real.next()) {
                    (Some(only), None) => {
                        node = only;
                        continue;
                    }
                    _ => return None,
                }
            }
            return Some(node);
        }
        None
    }

    fn shape(self) -> Shape<'a> {
        let Some(node) = self.resolved() else {
            return Shape::Opaque;
        };
        let flag = |key: &str| node.get(key).and_then(Value::as_bool).unwrap_or(false);
        if flag("x-kubernetes-int-or-string") || flag("x-kubernetes-preserve-unknown-fields") {
            return Shape::Opaque;
        }
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            return Shape::Object(properties);
        }
        match node.get("additionalProperties") {
            Some(Value::Bool(false)) | None => {}
            Some(values) => return Shape::Map(values.is_object().then_some(values)),
        }
        if has_type(node, "array") {
            return Shape::List(node.get("items").filter(|items| items.is_object()));
        }
        Shape::Opaque
    }

    /// Selecting `name` (as written in CEL, possibly escaped as Kubernetes escapes property
    /// names: `__namespace__`, `__dash__`...).
    pub(crate) fn field(self, name: &str) -> Field<'a> {
        if self.is_embedded() && ["apiVersion", "kind", "metadata"].contains(&name) {
            return Field::Unknown;
        }
        match self.shape() {
            Shape::Object(properties) => {
                match properties.get(name).or_else(|| properties.get(&unescape(name))) {
                    Some(field) => Field::Found(self.at(field)),
                    None => Field::Undefined,
                }
            }
            Shape::Map(Some(values)) => Field::Found(self.at(values)),
            Shape::Map(None) | Shape::List(_) | Shape::Opaque => Field::Unknown,
        }
    }

    /// An object embedding a whole Kubernetes object (`x-kubernetes-embedded-resource`).
    fn is_embedded(self) -> bool {
        self.resolved()
            .and_then(|node| node.get("x-kubernetes-embedded-resource"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// An element of a list or a value of a map (`x[i]`, `x[k]`).
    pub(crate) fn element(self) -> Option<Self> {
        match self.shape() {
            Shape::List(items) | Shape::Map(items) => items.map(|node| self.at(node)),
            Shape::Object(_) | Shape::Opaque => None,
        }
    }

    /// The items of a list (what a one-variable macro's variable holds over it).
    pub(crate) fn items(self) -> Option<Self> {
        match self.shape() {
            Shape::List(items) => items.map(|node| self.at(node)),
            _ => None,
        }
    }

    /// True when the place is a map (a one-variable macro iterates over its string keys).
    pub(crate) fn is_map(self) -> bool {
        matches!(self.shape(), Shape::Map(_))
    }
}

fn is_null(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

fn has_type(schema: &Value, wanted: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == wanted,
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(wanted)),
        _ => false,
    }
}

/// CEL's reserved words, which Kubernetes escapes as `__word__` in property names.
const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The property name a CEL field name stands for, undoing Kubernetes' escaping.
fn unescape(name: &str) -> String {
    if let Some(word) = name.strip_prefix("__").and_then(|n| n.strip_suffix("__"))
        && RESERVED.contains(&word)
    {
        return word.to_owned();
    }
    name.replace("__underscores__", "\u{0}")
        .replace("__dash__", "-")
        .replace("__dot__", ".")
        .replace("__slash__", "/")
        .replace('\u{0}', "__")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::builtin::BuiltinKind;

    fn kind(resource: &str) -> &'static Value {
        BuiltinKind::find("apps", "v1", resource)
            .or_else(|| BuiltinKind::find("", "v1", resource))
            .unwrap()
            .schema()
    }

    fn walk<'a>(root: &'a Value, path: &[&str]) -> Field<'a> {
        let mut at = At::root(root);
        for (i, name) in path.iter().enumerate() {
            match at.field(name) {
                Field::Found(next) if i + 1 < path.len() => at = next,
                other => return other,
            }
        }
        Field::Found(at)
    }

    #[test]
    #[ignore = "prints the schema schemars generates, to look at"]
    fn print_a_schema() {
        println!("{}", serde_json::to_string_pretty(kind("deployments")).unwrap());
    }

    #[test]
    fn a_declared_path_is_found_and_a_typo_is_not() {
        let deployment = kind("deployments");
        assert!(matches!(walk(deployment, &["spec", "replicas"]), Field::Found(_)));
        assert!(matches!(
            walk(deployment, &["spec", "template", "spec", "hostNetwork"]),
            Field::Found(_)
        ));
        assert!(matches!(
            walk(deployment, &["spec", "replicsa"]),
            Field::Undefined
        ));
        assert!(matches!(
            walk(deployment, &["metadata", "namespace"]),
            Field::Found(_)
        ));
        assert!(matches!(
            walk(deployment, &["metadata", "__namespace__"]),
            Field::Found(_)
        ));
    }

    #[test]
    fn lists_and_maps() {
        let pod = kind("pods");
        let Field::Found(containers) = walk(pod, &["spec", "containers"]) else {
            panic!("containers")
        };
        let container = containers.items().unwrap();
        assert!(matches!(container.field("image"), Field::Found(_)));
        assert!(matches!(container.field("imgae"), Field::Undefined));
        assert!(matches!(
            containers.element().unwrap().field("name"),
            Field::Found(_)
        ));
        // Any key of a map is fine; below a string value nothing is judged.
        assert!(matches!(
            walk(pod, &["metadata", "labels", "app"]),
            Field::Found(_)
        ));
        assert!(matches!(
            walk(pod, &["metadata", "labels", "app", "x"]),
            Field::Unknown
        ));
        let Field::Found(labels) = walk(pod, &["metadata", "labels"]) else {
            panic!("labels")
        };
        assert!(labels.is_map() && labels.items().is_none());
    }

    #[test]
    fn int_or_string_and_quantity_leaves_stop_the_walk() {
        let deployment = kind("deployments");
        let surge = ["spec", "strategy", "rollingUpdate", "maxSurge", "anything"];
        assert!(matches!(walk(deployment, &surge), Field::Unknown));
        let Field::Found(containers) = walk(kind("pods"), &["spec", "containers"]) else {
            panic!("containers")
        };
        let limits = containers.items().unwrap().field("resources");
        let Field::Found(resources) = limits else {
            panic!("resources")
        };
        let Field::Found(cpu) = resources.field("limits").found().unwrap().field("cpu") else {
            panic!("cpu")
        };
        assert!(matches!(cpu.field("value"), Field::Unknown));
    }

    #[test]
    fn nullable_and_referenced_forms() {
        let document = serde_json::json!({
            "type": "object",
            "properties": {
                "a": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]},
                "b": {"type": ["array", "null"], "items": {"$ref": "#/$defs/A"}},
                "u": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            },
            "$defs": {"A": {"type": "object", "properties": {"x": {"type": "string"}}}},
        });
        assert!(matches!(walk(&document, &["a", "x"]), Field::Found(_)));
        assert!(matches!(walk(&document, &["a", "y"]), Field::Undefined));
        let Field::Found(b) = walk(&document, &["b"]) else {
            panic!("b")
        };
        assert!(matches!(b.items().unwrap().field("y"), Field::Undefined));
        assert!(matches!(walk(&document, &["u", "y"]), Field::Unknown));
    }

    #[test]
    fn crd_forms() {
        let document = serde_json::json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
                    "properties": {
                        "a": {"type": "string"},
                        "b": {"type": "string"},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "port": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true},
                        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                                     "properties": {"spec": {"type": "object"}}},
                    },
                },
            },
        });
        assert!(matches!(walk(&document, &["spec", "a"]), Field::Found(_)));
        assert!(matches!(walk(&document, &["spec", "c"]), Field::Undefined));
        assert!(matches!(
            walk(&document, &["spec", "free", "x", "y"]),
            Field::Unknown
        ));
        assert!(matches!(walk(&document, &["spec", "port", "x"]), Field::Unknown));
        assert!(matches!(
            walk(&document, &["spec", "template", "metadata", "name"]),
            Field::Unknown
        ));
        assert!(matches!(
            walk(&document, &["spec", "template", "sepc"]),
            Field::Undefined
        ));
    }

    impl<'a> Field<'a> {
        fn found(self) -> Option<At<'a>> {
            match self {
                Field::Found(at) => Some(at),
                _ => None,
            }
        }
    }
}
