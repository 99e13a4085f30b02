//! What operators do, as their OperatorProfiles describe it: after the request's own rule, the
//! objects it deletes (or creates) are matched with the profiles of their kinds. A deletion rule
//! that holds deletes the objects it selects — each estimated as if deleted directly, with the
//! built-in semantics (its dependents, pods, claims' data; the Services, budgets and quorums
//! they reach are derived once for all) — and records what it destroys outside the cluster.
//! Objects deleted that way are matched in turn (an Application of applications), each once.
//! An UPDATE sets off the rules that declare it (pruning switched on: the objects the operator
//! prunes next), with the object before it as `oldObject`.
//! A deleted custom object carrying a finalizer no profile names makes the estimate unmodelled.
//! A workload scale-down within the range an intent declares (a KEDA ScaledObject's
//! `minReplicaCount: 0`) is recorded as intended.

use serde_json::Value as Json;

use crate::cel::value::{from_json, to_json};
use crate::cel::{Bindings, Budget, DEFAULT_COST_LIMIT, Program, Root, Value};
use crate::cluster::object::builtin_group;
use crate::cluster::{ClusterView, ObjectKey, Spec};
use crate::eval::Found;
use crate::impact::delete;
use crate::impact::effects::Effects;
use crate::impact::report::{ExternalResource, IntendedBy};
use crate::impact::subject::Subject;
use crate::operators::profile::{Cascade, Deletion};
use crate::operators::{Profile, Profiles};

/// Finalizers of Kubernetes' own machinery: the garbage collector's, the namespace controller's
/// and every `kubernetes.io/` protection (pvc-, pv-protection, ...).
fn builtin_finalizer(finalizer: &str) -> bool {
    matches!(finalizer, "orphan" | "foregroundDeletion" | "kubernetes")
        || finalizer.starts_with("kubernetes.io/")
        || finalizer
            .split_once('/')
            .is_some_and(|(domain, _)| domain.ends_with(".k8s.io"))
}

/// Applies the profiles to the request's object and to every object the estimate deletes.
pub(crate) fn apply(view: &dyn ClusterView, subject: &Subject, profiles: &Profiles, effects: &mut Effects) {
    if profiles.is_empty() || !subject.sub_resource.is_empty() && subject.sub_resource != "scale" {
        return;
    }
    match subject.operation {
        "DELETE" | "CREATE" => on_object(view, subject, profiles, effects),
        "UPDATE" => {
            if subject.sub_resource.is_empty()
                && profiles.may_react_to_update(&subject.key.group, &subject.key.kind)
            {
                on_object(view, subject, profiles, effects);
            }
            intents(view, subject, profiles, effects);
        }
        _ => {}
    }
    follow_cascades(view, subject, profiles, effects);
}

/// The profiles of the request's own object, read from the request (the whole object) or, when
/// it carries none, from what the model keeps of it. The object's text is parsed only when a
/// profile could apply or it is a custom object with finalizers: a Pod DELETE reads its
/// finalizers alone.
fn on_object(view: &dyn ClusterView, subject: &Subject, profiles: &Profiles, effects: &mut Effects) {
    let key = &subject.key;
    let deleting = subject.operation == "DELETE";
    let custom = builtin_group(&key.kind) != Some(&*key.group);
    let at = |path: &[&str]| {
        if deleting {
            subject.old_object_at(path)
        } else {
            subject.object_at(path)
        }
    };
    if profiles.for_kind(&key.group, &key.kind).is_empty() {
        let listed: Vec<String> = match at(&["metadata", "finalizers"]) {
            Some(Found::Tree(value)) => strings(value),
            Some(Found::Text(text)) => serde_json::from_str::<Json>(text)
                .map(|v| strings(&v))
                .unwrap_or_default(),
            None => view
                .get(key)
                .and_then(kept_json)
                .map(|kept| finalizers(&kept).into_iter().map(str::to_owned).collect())
                .unwrap_or_default(),
        };
        let listed: Vec<&str> = listed.iter().map(String::as_str).collect();
        if profiles.for_object(&key.group, &key.kind, &listed).is_empty() {
            if deleting && custom {
                unexplained(profiles, key, &listed, effects);
            }
            return;
        }
    }
    let own = if deleting {
        subject.old_object()
    } else {
        subject.object()
    };
    let kept;
    let object = match own.filter(|o| !o.is_null()) {
        Some(object) => object,
        None => match view.get(key).and_then(kept_json) {
            Some(json) => {
                kept = json;
                &kept
            }
            None => return,
        },
    };
    let before = match subject.operation {
        "UPDATE" => subject.old_object().filter(|o| !o.is_null()),
        _ => None,
    };
    let finalizers = finalizers(object);
    for profile in profiles.for_object(&key.group, &key.kind, &finalizers) {
        run_rules(view, profile, key, (object, before), subject.operation, effects);
    }
    if deleting && custom {
        unexplained(profiles, key, &finalizers, effects);
    }
}

/// The strings of a JSON list.
fn strings(value: &Json) -> Vec<String> {
    value
        .as_array()
        .map(|items| items.iter().filter_map(Json::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// What the model keeps of an object of an operator's kind.
fn kept_json(object: &crate::cluster::Object) -> Option<Json> {
    match &object.spec {
        Spec::Kept(kept) => Some((**kept).clone()),
        _ => None,
    }
}

fn finalizers(object: &Json) -> Vec<&str> {
    object
        .get("metadata")
        .and_then(|m| m.get("finalizers"))
        .and_then(Json::as_array)
        .map(|f| f.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default()
}

/// A note, and `modelled: false`, for each finalizer of a deleted custom object that no profile
/// names: an operator acts on the deletion and what it does is unknown.
fn unexplained(profiles: &Profiles, key: &ObjectKey, finalizers: &[&str], effects: &mut Effects) {
    for finalizer in finalizers {
        if builtin_finalizer(finalizer) || profiles.explains(&key.group, &key.kind, finalizer) {
            continue;
        }
        effects.unmodelled = true;
        effects.note(format!(
            "{key} carries finalizer {finalizer}: an operator acts on this deletion; its consequences are not modelled (no OperatorProfile names it)"
        ));
    }
}

/// Deleted objects of operators' kinds reached by the request's cascade (or by a profile's),
/// each matched with its profiles once, from what the model keeps of it.
fn follow_cascades(view: &dyn ClusterView, subject: &Subject, profiles: &Profiles, effects: &mut Effects) {
    let mut next = 0;
    while let Some((key, _)) = effects.deleted.get(next) {
        next += 1;
        if *key == subject.key {
            continue;
        }
        let Some(object) = view.get(key) else { continue };
        let Some(kept) = kept_json(object) else { continue };
        let key = key.clone();
        let finalizers = finalizers(&kept);
        for profile in profiles.for_object(&key.group, &key.kind, &finalizers) {
            run_rules(view, profile, &key, (&kept, None), "DELETE", effects);
        }
        if builtin_group(&key.kind) != Some(&*key.group) {
            unexplained(profiles, &key, &finalizers, effects);
        }
    }
}

/// One run of a profile's expressions: `object` (and `oldObject`, null but on an UPDATE) bound,
/// the model as `cluster`.
struct Run<'a> {
    view: &'a dyn ClusterView,
    profile: &'a Profile,
    object: Value,
    old_object: Value,
}

impl Run<'_> {
    fn eval(&self, program: &Program, field: &str, effects: &mut Effects) -> Option<Json> {
        let bindings = Bindings::new()
            .with(Root::Object, self.object.clone())
            .with(Root::OldObject, self.old_object.clone())
            .with_cluster(self.view);
        match program.eval(&bindings, &Budget::new(DEFAULT_COST_LIMIT)) {
            Ok(value) => Some(to_json(&value)),
            Err(error) => {
                effects.unmodelled = true;
                effects.note(format!(
                    "OperatorProfile {}: {field} could not be evaluated ({error}): its consequences are not counted",
                    self.profile.name
                ));
                None
            }
        }
    }
}

/// The deletion rules of `profile` that hold for `object` (of `key`; on an UPDATE with the
/// object before it), for `operation`.
fn run_rules(
    view: &dyn ClusterView,
    profile: &Profile,
    key: &ObjectKey,
    (object, before): (&Json, Option<&Json>),
    operation: &str,
    effects: &mut Effects,
) {
    let mut rules = profile
        .deletion
        .iter()
        .filter(|r| r.operations.contains(&operation))
        .peekable();
    if rules.peek().is_none() {
        return;
    }
    let run = Run {
        view,
        profile,
        object: from_json(object),
        old_object: before.map_or(Value::Null, from_json),
    };
    for rule in rules {
        let field = |part: &str| format!("deletion rule {}: {part}", rule.name);
        let holds = match &rule.when {
            Some(when) => run.eval(when, &field("when"), effects) == Some(Json::Bool(true)),
            None => true,
        };
        if holds {
            apply_rule(&run, rule, key, effects);
        }
    }
}

fn apply_rule(run: &Run<'_>, rule: &Deletion, key: &ObjectKey, effects: &mut Effects) {
    for cascade in &rule.cascade {
        let Some(reason) = run
            .eval(
                &cascade.reason,
                &format!("deletion rule {}: reason", rule.name),
                effects,
            )
            .and_then(|r| r.as_str().map(str::to_owned))
        else {
            continue;
        };
        for target in selected(run, rule, cascade, key, effects) {
            match run.view.get(&target) {
                Some(object) => delete::delete_object(run.view, object, reason.clone(), effects),
                None => effects.note(format!(
                    "{target} is selected by OperatorProfile {} ({reason}) but is not in the cluster model",
                    run.profile.name
                )),
            }
        }
    }
    if let Some(external) = &rule.external {
        let field = format!("deletion rule {}: external", rule.name);
        let Some(Json::Array(items)) = run.eval(external, &field, effects) else {
            return;
        };
        for item in items {
            let text = |name: &str| {
                item.get(name)
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let resource = ExternalResource {
                provider: text("provider"),
                kind: text("kind"),
                id: text("id"),
                data_loss: item.get("dataLoss").and_then(Json::as_bool).unwrap_or(false),
                by: key.display(),
                reason: match text("reason") {
                    reason if reason.is_empty() => format!("destroyed by {}", run.profile.operator),
                    reason => reason,
                },
            };
            if !effects.external.contains(&resource) {
                effects.external.push(resource);
            }
        }
    }
}

/// The objects a cascade selects, in order, without the object itself.
fn selected(
    run: &Run<'_>,
    rule: &Deletion,
    cascade: &Cascade,
    own: &ObjectKey,
    effects: &mut Effects,
) -> Vec<ObjectKey> {
    let field = |part: &str| format!("deletion rule {}: cascade {part}", rule.name);
    let mut keys = Vec::new();
    if let Some(objects) = &cascade.objects
        && let Some(Json::Array(items)) = run.eval(objects, &field("objects"), effects)
    {
        for item in items {
            let text = |name: &str| item.get(name).and_then(Json::as_str).unwrap_or_default();
            if text("kind").is_empty() || text("name").is_empty() {
                continue;
            }
            keys.push(ObjectKey::new(
                text("group"),
                text("kind"),
                text("namespace"),
                text("name"),
            ));
        }
    }
    if let (Some(labels), Some(namespaces)) = (&cascade.labels, &cascade.namespaces) {
        let labels = run.eval(labels, &field("labels"), effects);
        let namespaces = run.eval(namespaces, &field("namespaces"), effects);
        if let (Some(Json::Object(labels)), Some(Json::Array(namespaces))) = (labels, namespaces) {
            let wanted: Vec<(&str, &str)> = labels
                .iter()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                .collect();
            for namespace in namespaces.iter().filter_map(Json::as_str) {
                let mut found: Vec<ObjectKey> = run
                    .view
                    .in_namespace(namespace)
                    .into_iter()
                    .filter(|o| o.controller().is_none())
                    .filter(|o| {
                        wanted
                            .iter()
                            .all(|(k, v)| o.labels.iter().any(|(ok, ov)| &**ok == *k && &**ov == *v))
                    })
                    .map(|o| o.key.clone())
                    .collect();
                found.sort();
                keys.extend(found);
            }
        }
    }
    if let Some(names) = &cascade.names
        && let Some(Json::Object(selection)) = run.eval(names, &field("names"), effects)
    {
        keys.extend(by_name_pattern(run, &selection, effects));
    }
    keys.retain(|key| key != own);
    keys.dedup();
    keys
}

/// The objects of a kind whose whole name matches a pattern (in the namespaces given, else
/// everywhere), but those a controller owns; in name order.
fn by_name_pattern(
    run: &Run<'_>,
    selection: &serde_json::Map<String, Json>,
    effects: &mut Effects,
) -> Vec<ObjectKey> {
    let text = |name: &str| selection.get(name).and_then(Json::as_str).unwrap_or_default();
    let (kind, pattern) = (text("kind"), text("pattern"));
    if kind.is_empty() || pattern.is_empty() {
        return Vec::new();
    }
    let pattern = match regex::Regex::new(&format!("^(?:{pattern})$")) {
        Ok(pattern) => pattern,
        Err(error) => {
            effects.unmodelled = true;
            effects.note(format!(
                "OperatorProfile {}: the name pattern {pattern:?} is not a regular expression ({error}): its cascade is not counted",
                run.profile.name
            ));
            return Vec::new();
        }
    };
    let namespaces: Option<Vec<&str>> = selection
        .get("namespaces")
        .and_then(Json::as_array)
        .map(|list| list.iter().filter_map(Json::as_str).collect());
    let mut found: Vec<ObjectKey> = run
        .view
        .of_kind(text("group"), kind)
        .into_iter()
        .filter(|o| namespaces.as_ref().is_none_or(|n| n.contains(&&*o.key.namespace)))
        .filter(|o| o.controller().is_none() && pattern.is_match(&o.key.name))
        .map(|o| o.key.clone())
        .collect();
    found.sort();
    found
}

/// A workload UPDATE (its spec or its `scale`) to a replica count an intent declares: recorded
/// as intended.
fn intents(view: &dyn ClusterView, subject: &Subject, profiles: &Profiles, effects: &mut Effects) {
    let key = &subject.key;
    if !matches!(&*key.kind, "Deployment" | "StatefulSet" | "ReplicaSet") {
        return;
    }
    let Some(replicas) = subject
        .read_object_at(&["spec", "replicas"], Json::as_i64)
        .flatten()
    else {
        return;
    };
    // Only a scale-down is what an autoscaler declares: a rollout at the same size (a Recreate
    // that stops every pod) or a scale-up is not.
    let before = match subject.old_object_at(&["spec", "replicas"]) {
        Some(Found::Tree(value)) => value.as_i64(),
        Some(Found::Text(text)) => text.trim().parse::<i64>().ok(),
        None => None,
    };
    if before.is_none_or(|before| replicas >= before) {
        return;
    }
    for profile in profiles
        .iter()
        .filter(|p| !p.intents.is_empty() && !p.is_pattern())
    {
        for declaring in view.of_kind(&profile.group, &profile.kind) {
            if declaring.key.namespace != key.namespace {
                continue;
            }
            let Some(kept) = kept_json(declaring) else {
                continue;
            };
            let run = Run {
                view,
                profile,
                object: from_json(&kept),
                old_object: Value::Null,
            };
            for intent in &profile.intents {
                let field = |part: &str| format!("intent {}: {part}", intent.name);
                if let Some(when) = &intent.when
                    && run.eval(when, &field("when"), effects) != Some(Json::Bool(true))
                {
                    continue;
                }
                let Some(target) = run.eval(&intent.target, &field("target"), effects) else {
                    continue;
                };
                let text = |name: &str| target.get(name).and_then(Json::as_str);
                let group = text("group").unwrap_or("apps");
                if group != &*key.group || text("kind") != Some(&key.kind) || text("name") != Some(&key.name)
                {
                    continue;
                }
                let Some(min) = run
                    .eval(&intent.min_replicas, &field("minReplicas"), effects)
                    .and_then(|m| m.as_i64())
                else {
                    continue;
                };
                let max = match &intent.max_replicas {
                    Some(max) => run
                        .eval(max, &field("maxReplicas"), effects)
                        .and_then(|m| m.as_i64()),
                    None => None,
                };
                if replicas < min || max.is_some_and(|max| replicas > max) {
                    continue;
                }
                let Some(reason) = run
                    .eval(&intent.reason, &field("reason"), effects)
                    .and_then(|r| r.as_str().map(str::to_owned))
                else {
                    continue;
                };
                effects.intended.push(IntendedBy {
                    by: declaring.key.display(),
                    profile: profile.name.clone(),
                    reason,
                });
            }
        }
    }
}
