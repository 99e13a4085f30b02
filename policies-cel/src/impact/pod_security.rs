//! Pod Security: the requests after which kube-apiserver's PodSecurity admission refuses the
//! replacements of running pods.
//!
//! An UPDATE of a Namespace that raises its enforce level
//! (`pod-security.kubernetes.io/enforce`) above what its running pods meet. kube-apiserver's
//! PodSecurity admission admits the update — it only warns that existing pods violate the new
//! level — and leaves the pods running, but from then on it refuses every new pod in the
//! namespace that fails the level: the controllers cannot replace a pod they lose (an eviction,
//! a failed node) and a rollout creates nothing, until the label comes down again or every
//! template is fixed.
//!
//! Each running pod (not terminating, not finished) with a controller that the old level admits
//! and the new one refuses is reported in `podSecurityViolations`, with PodSecurity's reasons.
//! The checks are those of the latest version of the standards, evaluated once per pod when the
//! model reads it (the pods of a workload share the result). A pod the old level refused too was
//! admitted before that level was set: the request changes nothing for it.
//!
//! An UPDATE of a workload whose new pod template fails its namespace's enforce level.
//! PodSecurity only warns about a workload's template (it enforces on pods), so the update is
//! admitted and the rollout starts: the controller removes the old pods its strategy lets it
//! remove before a new one is ready, and every new pod is refused (`workloads/rollout.rs` counts
//! those removals, not replaced). Every running pod of the workload is reported in
//! `podSecurityViolations`: none of them can be replaced any more.

use crate::cluster::pod_security::{Check, Level, Violations};
use crate::cluster::{ClusterView, Object, ObjectKey};
use crate::impact::create::{previous, slim};
use crate::impact::effects::Effects;
use crate::impact::report::PodSecurityViolation;
use crate::impact::subject::Subject;
use crate::impact::wording::{RunningPods, running_pods, some_of};

/// The label that sets the level PodSecurity enforces in a namespace.
pub(crate) const ENFORCE_LABEL: &str = "pod-security.kubernetes.io/enforce";
/// The label that pins the version of the standards it enforces.
const ENFORCE_VERSION_LABEL: &str = "pod-security.kubernetes.io/enforce-version";
/// The prefix of every PodSecurity label.
const LABEL_PREFIX: &str = "pod-security.kubernetes.io/";

/// The enforce level a Namespace's labels set.
enum Enforced {
    /// No label: the cluster's default (privileged unless kube-apiserver's PodSecurity
    /// configuration sets another, which the model cannot see).
    Default,
    Level(Level),
    /// A value PodSecurity refuses (it admits no update that sets one).
    Invalid(String),
}

fn enforced(namespace: &Object) -> Enforced {
    match namespace.label(ENFORCE_LABEL) {
        None => Enforced::Default,
        Some(value) => {
            Level::parse(value).map_or_else(|| Enforced::Invalid(value.to_owned()), Enforced::Level)
        }
    }
}

/// Estimates an UPDATE of the subject Namespace.
pub(crate) fn namespace_updated(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let Some(new) = slim(subject.object(), "object", effects) else {
        return;
    };
    let Some(old) = previous(view, subject, effects) else {
        effects.note(format!(
            "{} as it was is unknown: its Pod Security level is not compared",
            subject.key
        ));
        return;
    };
    let name = new.key.name.as_ref().to_owned();
    if other_labels_changed(&old, &new) {
        effects.note(format!(
            "Namespace {name}'s labels change: NetworkPolicies and webhooks that select namespaces by label are not read"
        ));
    }
    let before = match enforced(&old) {
        Enforced::Level(level) => level,
        Enforced::Default | Enforced::Invalid(_) => Level::Privileged,
    };
    let after = match enforced(&new) {
        Enforced::Level(level) => level,
        Enforced::Default => {
            if old.label(ENFORCE_LABEL).is_some() {
                effects.note(format!(
                    "Namespace {name} falls back to the cluster's default Pod Security level (privileged unless kube-apiserver's PodSecurity configuration sets another): counted as privileged"
                ));
            }
            return;
        }
        Enforced::Invalid(value) => {
            effects.note(format!(
                "{ENFORCE_LABEL}={value:?} is no Pod Security level: kube-apiserver's PodSecurity admission refuses the update"
            ));
            return;
        }
    };
    if after <= before {
        return;
    }
    refused_pods(view, &name, before, after, effects);
    if let Some(version) = new.label(ENFORCE_VERSION_LABEL).filter(|v| *v != "latest") {
        effects.note(format!(
            "Namespace {name} pins Pod Security version {version}: the pods were checked against the latest version's standards, which can be stricter"
        ));
    }
}

/// Records the running, controlled pods of `namespace` that `before` admits and `after` refuses.
fn refused_pods(view: &dyn ClusterView, namespace: &str, before: Level, after: Level, effects: &mut Effects) {
    let mut uncontrolled = 0;
    let mut refused: Vec<PodSecurityViolation> = Vec::new();
    for object in view.in_namespace(namespace) {
        let Some(pod) = object.running_pod() else {
            continue;
        };
        let violations = pod.requires.pod_security;
        if violations.allowed_at(after) || !violations.allowed_at(before) {
            continue;
        }
        // A mirror pod (its controller is the Node) is the kubelet's, not created through a
        // controller that would be refused.
        let Some(controller) = object.controller().filter(|c| &*c.kind != "Node") else {
            uncontrolled += 1;
            continue;
        };
        refused.push(PodSecurityViolation {
            namespace: namespace.to_owned(),
            pod: object.key.name.as_ref().to_owned(),
            controller: format!("{} {namespace}/{}", controller.kind, controller.name),
            level: after.as_str().to_owned(),
            reasons: reasons(violations, after),
        });
    }
    if uncontrolled > 0 {
        let (pods, them) = match uncontrolled {
            1 => ("1 running pod without a controller fails".to_owned(), "it"),
            n => (format!("{n} running pods without a controller fail"), "them"),
        };
        effects.note(format!(
            "{pods} Pod Security level {} in Namespace {namespace}: nothing would replace {them} anyway",
            after.as_str()
        ));
    }
    if refused.is_empty() {
        return;
    }
    refused.sort_by(|a, b| a.pod.cmp(&b.pod));
    let controllers = some_of(refused.iter().map(|r| r.controller.as_str()));
    let RunningPods {
        count,
        they_keep,
        none_can,
    } = running_pods(refused.len());
    effects.note(format!(
        "Pod Security level {} in Namespace {namespace} refuses {count} of {controllers}: {they_keep} running, but kube-apiserver admits no new pod that fails the level, so {none_can} be replaced or rolled out until the level comes down or the templates meet it (PodSecurity exemptions in kube-apiserver's configuration are not visible)",
        after.as_str()
    ));
    effects.pod_security.append(&mut refused);
}

/// Labels other than PodSecurity's changed (the model keeps labels sorted: compared in place).
fn other_labels_changed(old: &Object, new: &Object) -> bool {
    !old.labels
        .iter()
        .filter(|(key, _)| !key.starts_with(LABEL_PREFIX))
        .eq(new
            .labels
            .iter()
            .filter(|(key, _)| !key.starts_with(LABEL_PREFIX)))
}

/// Why PodSecurity admission refuses the pods of a workload's new template.
#[derive(Debug)]
pub(crate) struct TemplateRefusal {
    /// The namespace's enforce level.
    pub level: Level,
    /// PodSecurity's reasons the template fails it.
    pub reasons: Vec<String>,
}

/// The enforce level of `namespace`, as the model holds the Namespace (`None` without a level
/// that refuses anything, or without the Namespace).
fn namespace_level(view: &dyn ClusterView, namespace: &str) -> Option<Level> {
    let namespace = view.get(&ObjectKey::new("", "Namespace", "", namespace))?;
    match enforced(namespace) {
        Enforced::Level(level) if level > Level::Privileged => Some(level),
        _ => None,
    }
}

/// The refusal of the subject workload's new pod template (`spec.template` of the request's
/// `object`) by its namespace's enforce level, if it fails it. The template is read only when
/// the namespace enforces a level.
pub(crate) fn template_refused(view: &dyn ClusterView, subject: &Subject) -> Option<TemplateRefusal> {
    let level = namespace_level(view, &subject.key.namespace)?;
    let violations = subject.read_object_at(&["spec", "template"], |template| {
        Violations::of_pod(template.get("metadata"), template.get("spec"))
    })?;
    (!violations.allowed_at(level)).then(|| TemplateRefusal {
        level,
        reasons: reasons(violations, level),
    })
}

/// PodSecurity's reasons the checks `violations` hold fail `level`.
fn reasons(violations: Violations, level: Level) -> Vec<String> {
    violations
        .failed_at(level)
        .into_iter()
        .map(Check::reason)
        .map(str::to_owned)
        .collect()
}

/// Records the running pods of `workload`, whose new template is refused, as pods none of which
/// can be replaced, and says what the rollout does: `removed` of them are gone for good.
pub(crate) fn template_refusal(
    workload: &Object,
    pods: &[&Object],
    removed: usize,
    refusal: &TemplateRefusal,
    effects: &mut Effects,
) {
    let key = &workload.key;
    let level = refusal.level.as_str();
    let rollout = match removed {
        0 => "no old pod is removed for it now".to_owned(),
        1 => "the rollout removes 1 old pod, which is not replaced, and stalls".to_owned(),
        n => format!("the rollout removes {n} old pods, which are not replaced, and stalls"),
    };
    effects.note(format!(
        "the new pod template of {key} fails Pod Security level {level} of Namespace {} ({}): kube-apiserver refuses every pod of it, so {rollout}, and none of its pods can be replaced until the template meets the level",
        key.namespace,
        refusal.reasons.join(", ")
    ));
    let controller = format!("{} {}/{}", key.kind, key.namespace, key.name);
    let mut refused: Vec<PodSecurityViolation> = pods
        .iter()
        .map(|pod| PodSecurityViolation {
            namespace: key.namespace.as_ref().to_owned(),
            pod: pod.key.name.as_ref().to_owned(),
            controller: controller.clone(),
            level: level.to_owned(),
            reasons: refusal.reasons.clone(),
        })
        .collect();
    refused.sort_by(|a, b| a.pod.cmp(&b.pod));
    effects.pod_security.append(&mut refused);
}
