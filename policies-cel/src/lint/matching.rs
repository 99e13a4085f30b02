//! Matches that can never select a request: resource rules with nothing in a list, operations a
//! resource does not have (CONNECT on deployments), resources in a group that does not serve
//! them, exclusions that cover every rule, and ValidatingAdmissionPolicies no binding names (in
//! a set that has bindings: in a cluster such a policy never runs).

use std::collections::HashSet;

use serde_json::Value;

use crate::eval::prefilter::resource_listed;
use crate::policy::path::{FieldPath, Seg};

use crate::lint::catalog::ResourceCatalog;
use crate::lint::finding::{Code, Severity};
use crate::lint::objects::{Object, ObjectKind};
use crate::lint::sink::{Says, Sink};

const OPERATIONS: [&str; 5] = ["CREATE", "UPDATE", "DELETE", "CONNECT", "*"];
/// Subresources reached with CONNECT (and only with it).
const CONNECT_SUBRESOURCES: [&str; 4] = ["exec", "attach", "portforward", "proxy"];

/// Judges the match rules of every policy and binding, and the bindings themselves.
pub(crate) fn check(sink: &mut Sink<'_>, objects: &[Object], catalog: &dyn ResourceCatalog) {
    let spec = FieldPath::root().key("spec");
    for object in objects {
        let (rel, what) = match object.kind() {
            ObjectKind::ValidatingAdmissionPolicy | ObjectKind::SafetyPolicy => {
                (spec.key("matchConstraints"), "policy")
            }
            ObjectKind::Binding => (spec.key("matchResources"), "binding"),
            ObjectKind::CustomResourceDefinition | ObjectKind::OperatorProfile | ObjectKind::Other => {
                continue;
            }
        };
        if object.get(&rel).is_some() {
            Rules {
                sink: &mut *sink,
                object,
                catalog,
                what,
            }
            .check(&rel);
        }
    }
    unbound(sink, objects);
    disjoint_bindings(sink, objects);
}

struct Rules<'s, 'a> {
    sink: &'s mut Sink<'a>,
    object: &'s Object,
    catalog: &'s dyn ResourceCatalog,
    what: &'static str,
}

impl Rules<'_, '_> {
    fn report(&mut self, rel: &FieldPath, severity: Severity, message: String, help: Option<String>) {
        let line = self.object.line_of(rel);
        let file = &self.sink.files[self.object.file];
        let place = match rel.0.as_slice() {
            [.., Seg::Key(list), Seg::Index(_)] => match self.object.get(rel).and_then(Value::as_str) {
                Some(item) => file.item(line, Some(list), item),
                None => file.field(line, None),
            },
            [.., Seg::Key(key)] => file.field(line, Some(key)),
            _ => file.field(line, None),
        };
        let mut says = Says::new(severity, Code::UnreachableMatch, message)
            .field(self.object.path(rel))
            .policy(self.object.name());
        if let Some(help) = help {
            says = says.help(help);
        }
        self.sink.push(self.object.file, place, says);
    }

    fn check(&mut self, rel: &FieldPath) {
        let rules_at = rel.key("resourceRules");
        let Some(Value::Array(rules)) = self.object.get(&rules_at).cloned() else {
            return;
        };
        if rules.is_empty() {
            // Suture reads an empty list as no restriction (every request), as it reads an
            // absent one; kube-apiserver refuses a ValidatingAdmissionPolicy without rules.
            if self.what == "policy" && self.object.kind() == ObjectKind::ValidatingAdmissionPolicy {
                self.report(
                    &rules_at,
                    Severity::Error,
                    "resourceRules is empty: kube-apiserver refuses a ValidatingAdmissionPolicy whose matchConstraints names no resource (Suture would judge every request with it)".into(),
                    None,
                );
            }
            return;
        }
        let mut live = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            if self.rule(&rules_at.index(i), rule) {
                live.push(rule.clone());
            }
        }
        if live.is_empty() {
            self.report(
                &rules_at,
                Severity::Error,
                format!(
                    "no rule of resourceRules can match: the {} never selects a request",
                    self.what
                ),
                None,
            );
            return;
        }
        let excludes_at = rel.key("excludeResourceRules");
        if let Some(Value::Array(excludes)) = self.object.get(&excludes_at).cloned()
            && live.iter().all(|rule| excludes.iter().any(|ex| covers(ex, rule)))
        {
            self.report(
                &excludes_at,
                Severity::Error,
                format!(
                    "excludeResourceRules cover every rule of resourceRules: the {} never selects a request",
                    self.what
                ),
                None,
            );
        }
    }

    /// Judges one rule; true when it can match something.
    fn rule(&mut self, at: &FieldPath, rule: &Value) -> bool {
        let list = |field: &str| strings(rule.get(field));
        for field in ["apiGroups", "apiVersions", "operations", "resources"] {
            if let Some(items) = list(field)
                && items.is_empty()
            {
                self.report(
                    &at.key(field),
                    Severity::Warning,
                    format!("{field} is empty: this rule matches nothing"),
                    None,
                );
                return false;
            }
        }
        let groups = list("apiGroups").unwrap_or_default();
        let operations = list("operations").unwrap_or_default();
        let resources = list("resources").unwrap_or_default();

        let mut live_operations = 0;
        for (i, operation) in operations.iter().enumerate() {
            let at = at.key("operations").index(i);
            if !OPERATIONS.contains(&operation.as_str()) {
                let message = format!(
                    "unknown operation `{operation}`: admission operations are CREATE, UPDATE, DELETE, CONNECT (or *)"
                );
                self.report(&at, Severity::Warning, message, None);
            } else if operation == "CONNECT" && !resources.iter().any(|r| connectable(r)) {
                let message = format!(
                    "CONNECT never applies to {}: only the exec, attach, portforward and proxy subresources are reached with CONNECT",
                    quoted(&resources)
                );
                self.report(&at, Severity::Warning, message, None);
            } else if operation != "CONNECT"
                && operation != "*"
                && !resources.is_empty()
                && resources.iter().all(|r| connect_only(r))
            {
                let message = format!(
                    "{operation} never applies to {}: they are reached with CONNECT only",
                    quoted(&resources)
                );
                self.report(&at, Severity::Warning, message, None);
            } else {
                live_operations += 1;
            }
        }
        if live_operations == 0 && !operations.is_empty() {
            return false;
        }

        if groups.iter().any(|g| g == "*") {
            return true;
        }
        let mut live_resources = 0;
        for (i, resource) in resources.iter().enumerate() {
            let base = resource.split('/').next().unwrap_or(resource);
            let served = match self.catalog.groups_serving(base) {
                Some(serving) if !base.contains('*') => Some(serving),
                _ => None,
            };
            match served {
                Some(serving)
                    if !serving.iter().any(|g| groups.contains(g))
                        && groups.iter().all(|g| self.catalog.knows_group(g)) =>
                {
                    let shown = |g: &String| {
                        if g.is_empty() {
                            "\"\" (core)".to_owned()
                        } else {
                            format!("`{g}`")
                        }
                    };
                    let message = format!(
                        "`{base}` is served by the API group {}, which this rule's apiGroups ({}) do not name: it never matches",
                        serving.iter().map(shown).collect::<Vec<_>>().join(" or "),
                        groups.iter().map(shown).collect::<Vec<_>>().join(", ")
                    );
                    self.report(&at.key("resources").index(i), Severity::Warning, message, None);
                }
                _ => live_resources += 1,
            }
        }
        live_resources > 0 || resources.is_empty()
    }
}

/// A list of strings (`None` when the field is absent or not a list).
fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    value?.as_array().map(|items| {
        items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    })
}

fn quoted(items: &[String]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Could a request to `resource` be a CONNECT?
fn connectable(resource: &str) -> bool {
    match resource.split_once('/') {
        None => resource == "*",
        Some((_, sub)) => sub == "*" || CONNECT_SUBRESOURCES.contains(&sub),
    }
}

/// Is `resource` reached with CONNECT only?
fn connect_only(resource: &str) -> bool {
    resource
        .split_once('/')
        .is_some_and(|(_, sub)| CONNECT_SUBRESOURCES.contains(&sub))
}

/// True when the exclusion `ex` matches every request the rule `rule` matches.
fn covers(ex: &Value, rule: &Value) -> bool {
    if strings(ex.get("resourceNames")).is_some_and(|names| !names.is_empty()) {
        return false;
    }
    let superset = |field: &str, wildcard_covers: &dyn Fn(&str) -> bool| {
        let theirs = strings(ex.get(field)).unwrap_or_default();
        let ours = strings(rule.get(field)).unwrap_or_default();
        ours.iter()
            .all(|item| theirs.contains(item) || theirs.iter().any(|t| t == "*" && wildcard_covers(item)))
    };
    let any = |_: &str| true;
    let scope_ok = match ex.get("scope").and_then(Value::as_str) {
        None | Some("*") => true,
        Some(scope) => rule.get("scope").and_then(Value::as_str) == Some(scope),
    };
    // A rule's resource is covered when an exclusion lists every request it can match: taken
    // as a request, a `*` in the rule is matched only by a `*` in the exclusion.
    let resources_ok = {
        let theirs = strings(ex.get("resources")).unwrap_or_default();
        let ours = strings(rule.get("resources")).unwrap_or_default();
        ours.iter().all(|r| {
            let (resource, subresource) = r.split_once('/').unwrap_or((r, ""));
            resource_listed(&theirs, resource, subresource)
        })
    };
    scope_ok
        && resources_ok
        && superset("apiGroups", &any)
        && superset("apiVersions", &any)
        && superset("operations", &any)
}

/// Bindings whose resourceRules share no request with their policy's: a request must match both.
fn disjoint_bindings(sink: &mut Sink<'_>, objects: &[Object]) {
    let rules_at = |field: &str| FieldPath::root().key("spec").key(field).key("resourceRules");
    for binding in objects.iter().filter(|o| o.kind() == ObjectKind::Binding) {
        let binding_at = rules_at("matchResources");
        let Some(Value::Array(theirs)) = binding.get(&binding_at) else {
            continue;
        };
        let Some(policy_name) = binding.value.pointer("/spec/policyName").and_then(Value::as_str) else {
            continue;
        };
        let policy = objects
            .iter()
            .find(|o| o.kind() == ObjectKind::ValidatingAdmissionPolicy && o.name() == Some(policy_name));
        let Some(Value::Array(ours)) = policy.and_then(|p| p.get(&rules_at("matchConstraints"))) else {
            continue;
        };
        if theirs.is_empty() || ours.is_empty() || theirs.iter().any(|t| ours.iter().any(|o| overlaps(t, o)))
        {
            continue;
        }
        let place = sink.files[binding.file].field(binding.line_of(&binding_at), Some("resourceRules"));
        let says = Says::new(
            Severity::Error,
            Code::UnreachableMatch,
            format!(
                "no rule of this binding's resourceRules overlaps a rule of policy `{policy_name}`: a request must match both, so the binding never selects one"
            ),
        )
        .field(binding.path(&binding_at))
        .policy(binding.name());
        sink.push(binding.file, place, says);
    }
}

/// Could a request match both rules? (A list that is absent or holds a wildcard overlaps all.)
fn overlaps(a: &Value, b: &Value) -> bool {
    ["apiGroups", "apiVersions", "operations", "resources"]
        .iter()
        .all(|field| match (strings(a.get(*field)), strings(b.get(*field))) {
            (Some(x), Some(y)) => {
                let wild = |list: &[String]| list.iter().any(|i| i.contains('*'));
                wild(&x) || wild(&y) || x.iter().any(|i| y.contains(i))
            }
            _ => true,
        })
}

/// ValidatingAdmissionPolicies that no binding names, when the set has bindings.
fn unbound(sink: &mut Sink<'_>, objects: &[Object]) {
    let bound: HashSet<&str> = objects
        .iter()
        .filter(|o| o.kind() == ObjectKind::Binding)
        .filter_map(|o| o.value.pointer("/spec/policyName").and_then(Value::as_str))
        .collect();
    if bound.is_empty() {
        return;
    }
    let name_at = FieldPath::root().key("metadata").key("name");
    for object in objects
        .iter()
        .filter(|o| o.kind() == ObjectKind::ValidatingAdmissionPolicy)
    {
        let Some(name) = object.name() else { continue };
        if bound.contains(name) {
            continue;
        }
        let place = sink.files[object.file].field(object.line_of(&name_at), Some("name"));
        let says = Says::new(
            Severity::Warning,
            Code::UnboundPolicy,
            format!("no binding names policy `{name}`: in a cluster it never runs"),
        )
        .help("offline, Suture binds an unbound ValidatingAdmissionPolicy to everything with action Deny; add a ValidatingAdmissionPolicyBinding with spec.policyName: ".to_owned() + name)
        .field(object.path(&name_at))
        .policy(Some(name));
        sink.push(object.file, place, says);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(resources: &[&str]) -> Value {
        json!({"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": resources})
    }

    #[test]
    fn exclusions_cover_resources_as_the_rule_matcher_reads_them() {
        let covers = |ex: &[&str], ours: &[&str]| covers(&rule(ex), &rule(ours));
        // Every subresource of pods, every resource's status.
        assert!(covers(&["pods/*"], &["pods/exec"]));
        assert!(covers(&["*/status"], &["deployments/status"]));
        assert!(covers(&["pods/*"], &["pods", "pods/exec"]));
        assert!(covers(&["*"], &["deployments"]));
        assert!(covers(&["*/*"], &["*/*", "pods/exec"]));
        // `*` names no subresource; a wildcard in the rule is covered only by one.
        assert!(!covers(&["*"], &["pods/exec"]));
        assert!(!covers(&["pods"], &["pods/exec"]));
        assert!(!covers(&["pods/*"], &["*/exec"]));
        assert!(!covers(&["*/status"], &["deployments/*"]));
        assert!(!covers(&["*/status"], &["deployments/scale"]));
    }
}
