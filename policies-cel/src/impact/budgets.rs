//! CREATE or UPDATE of a PodDisruptionBudget. A budget stops no pod, but one that asks for more
//! healthy pods than there are is violated from the start: the eviction API then refuses every
//! eviction of its pods, so node drains and voluntary disruptions block. The rule reports the
//! budget's new `desiredHealthy` against today's healthy pods itself
//! ([`Effects::pdb_overrides`]); it counts in `pdbViolations` when the change makes the budget
//! violated (a budget already violated before an UPDATE is only noted).
//!
//! `desiredHealthy` is computed as [`consequences`](super::consequences) computes it: over the
//! selected pods that have not finished, percentages rounded up.

use crate::cluster::object::Spec;
use crate::cluster::{ClusterView, Object};
use crate::impact::consequences::{desired_healthy, healthy};
use crate::impact::create::{previous, slim};
use crate::impact::effects::Effects;
use crate::impact::report::PdbEffect;
use crate::impact::subject::Subject;

/// A budget's numbers over today's pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Numbers {
    pub selected: usize,
    pub desired: usize,
    pub current: usize,
}

impl Numbers {
    fn violated(&self) -> bool {
        self.current < self.desired
    }
}

/// Estimates a CREATE or UPDATE of the subject PodDisruptionBudget.
pub(crate) fn estimate(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let Some(pdb) = slim(subject.object(), "object", effects) else {
        return;
    };
    let Some(new) = numbers(view, &pdb) else {
        effects.note(format!(
            "{} is not a PodDisruptionBudget: no effect is counted",
            pdb.key
        ));
        return;
    };
    let old = match subject.operation {
        "UPDATE" => previous(view, subject, effects).and_then(|o| numbers(view, &o)),
        _ => None,
    };
    let was_violated = old.is_some_and(|o| o.violated());
    effects.pdb_overrides.push(PdbEffect {
        namespace: pdb.key.namespace.as_ref().to_owned(),
        name: pdb.key.name.as_ref().to_owned(),
        desired_healthy: new.desired,
        current_healthy: new.current,
        healthy_after: new.current,
        violated: new.violated() && !was_violated,
    });
    note(&pdb, new, was_violated, effects);
    note_overlaps(view, &pdb, effects);
}

/// The budget's numbers, when `pdb` is a PodDisruptionBudget.
pub(crate) fn numbers(view: &dyn ClusterView, pdb: &Object) -> Option<Numbers> {
    let Spec::PodDisruptionBudget {
        selector,
        min_available,
        max_unavailable,
        ..
    } = &pdb.spec
    else {
        return None;
    };
    let pods = selected(view, pdb, selector);
    Some(Numbers {
        selected: pods.len(),
        desired: desired_healthy(*min_available, *max_unavailable, pods.len()),
        current: pods.iter().filter(|p| healthy(p)).count(),
    })
}

/// The pods a budget covers: those its selector matches that have not finished.
fn selected<'a>(
    view: &'a dyn ClusterView,
    pdb: &Object,
    selector: &crate::cluster::object::Selector,
) -> Vec<&'a Object> {
    view.pods_matching(&pdb.key.namespace, selector)
        .into_iter()
        .filter(|p| p.pod().is_some_and(|s| !s.finished()))
        .collect()
}

/// Explains what the budget means for evictions.
fn note(pdb: &Object, numbers: Numbers, was_violated: bool, effects: &mut Effects) {
    let Numbers {
        selected,
        desired,
        current,
    } = numbers;
    let key = &pdb.key;
    if selected == 0 {
        effects.note(format!("{key} selects no pod"));
    } else if current < desired {
        let already = if was_violated {
            " (it already was before the change)"
        } else {
            ""
        };
        effects.note(format!(
            "{key} wants {desired} healthy pod(s) but {current} of {selected} are: it is violated{already}, every \
             eviction of its pods is refused and node drains block"
        ));
    } else if current == desired {
        effects.note(format!(
            "{key} allows no disruption ({current} healthy, {desired} wanted): evictions of its pods are refused \
             until more are healthy"
        ));
    }
}

/// Notes pods also covered by another budget: the eviction API refuses to evict those.
fn note_overlaps(view: &dyn ClusterView, pdb: &Object, effects: &mut Effects) {
    let Spec::PodDisruptionBudget { selector, .. } = &pdb.spec else {
        return;
    };
    let pods = selected(view, pdb, selector);
    if pods.is_empty() {
        return;
    }
    let covers_one = |other: &Object| match &other.spec {
        Spec::PodDisruptionBudget { selector, .. } => pods.iter().any(|p| selector.matches(&p.labels)),
        _ => false,
    };
    let mut others: Vec<String> = view
        .in_namespace(&pdb.key.namespace)
        .into_iter()
        .filter(|o| &*o.key.kind == "PodDisruptionBudget" && o.key != pdb.key && covers_one(o))
        .map(|o| o.key.to_string())
        .collect();
    if others.is_empty() {
        return;
    }
    others.sort();
    effects.note(format!(
        "{} covers pods that {} also cover(s): the eviction API refuses to evict a pod under several budgets",
        pdb.key,
        others.join(", ")
    ));
}
