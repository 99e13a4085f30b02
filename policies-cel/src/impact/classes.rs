//! DELETE of a PriorityClass or RuntimeClass that running pods name. The pods keep running (a
//! pod's priority is resolved once, when it is created; its runtime handler when its sandbox
//! starts), but kube-apiserver's Priority and RuntimeClass admission refuse a new pod naming a
//! class that does not exist (`no PriorityClass with name … was found`, `pod rejected:
//! RuntimeClass "…" not found`): the controllers cannot replace any pod they lose — an
//! eviction, a failed node, the next rollout — until the class exists again, and a workload
//! shrinks one lost pod at a time.
//!
//! Each running pod (not terminating, not finished) with a controller that names the class is
//! reported in `lostClasses`. A pod without a controller is not: nothing would replace it
//! anyway. Pods are found through the model's class index: the cost follows the pods naming
//! the class, not the cluster's size.

use crate::cluster::object::ClassKind;
use crate::cluster::{ClusterView, Object};
use crate::impact::effects::Effects;
use crate::impact::report::LostClass;
use crate::impact::subject::Subject;
use crate::impact::wording::{RunningPods, running_pods, some_of};

/// Records the running, controlled pods that name the subject class of `kind` (a DELETE).
pub(crate) fn deleted(view: &dyn ClusterView, subject: &Subject, kind: ClassKind, effects: &mut Effects) {
    let class = &subject.key.name;
    let running: Vec<&Object> = view
        .pods_of_class(kind, class)
        .into_iter()
        .filter(|object| object.running_pod().is_some())
        .collect();
    let mut lost: Vec<LostClass> = running
        .iter()
        .filter_map(|pod| {
            let controller = pod.controller()?;
            Some(LostClass {
                namespace: pod.key.namespace.as_ref().to_owned(),
                pod: pod.key.name.as_ref().to_owned(),
                kind: kind.kind().to_owned(),
                class: class.to_string(),
                controller: format!("{} {}/{}", controller.kind, pod.key.namespace, controller.name),
            })
        })
        .collect();
    let uncontrolled = match running.len() - lost.len() {
        0 => None,
        1 => Some(("1 running pod without a controller names".to_owned(), "it")),
        n => Some((format!("{n} running pods without a controller name"), "them")),
    };
    if let Some((uncontrolled, them)) = uncontrolled {
        effects.note(format!(
            "{uncontrolled} {} {class}: nothing would replace {them} anyway",
            kind.kind()
        ));
    }
    if lost.is_empty() {
        return;
    }
    lost.sort_by(|a, b| (&a.namespace, &a.pod).cmp(&(&b.namespace, &b.pod)));
    let controllers = some_of(lost.iter().map(|l| l.controller.as_str()));
    let RunningPods {
        count: pods,
        they_keep: they,
        none_can: none,
    } = running_pods(lost.len());
    effects.note(format!(
        "{} {class} is named by {pods} of {}: {they} running, but kube-apiserver admits no new pod naming a {} that does not exist, so {none} be replaced until it exists again",
        kind.kind(),
        controllers,
        kind.kind()
    ));
    if kind == ClassKind::Priority && global_default(subject) {
        effects.note(format!(
            "PriorityClass {class} is the cluster's global default: pods created without a class carry its name, and their replacements get priority 0 instead of being refused (a pod's template naming it is refused)"
        ));
    }
    effects.lost_classes.append(&mut lost);
}

/// The deleted PriorityClass is the cluster's default (`globalDefault: true` in `oldObject`).
fn global_default(subject: &Subject) -> bool {
    subject
        .old_object()
        .and_then(|class| class.get("globalDefault"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}
