//! The built-in policy pack, embedded in both binaries: SafetyPolicies over the `impact` estimate
//! that keep operators' service accounts from the ways a bad reconcile turns into an outage —
//! live data loss, broken disruption budgets, workloads and Services left without ready pods,
//! lost quorum, blast radius (namespaces, CRDs, large cascades), removed config keys and
//! deletions on a stale view, and disruption faster than a budget across requests (`history`). docs/pack.md describes each one and how to tune or disable it
//! (a [`params::SafetyPackParams`] object).

pub mod params;

use std::sync::OnceLock;

use crate::cel::KubernetesVersion;
use crate::policy::{Action, LoadError, Loader, Policy, PolicySet};

/// The pack's files as (name, YAML text), in a fixed order.
const FILES: &[(&str, &str)] = &[
    ("pack/data-loss.yaml", include_str!("../../pack/data-loss.yaml")),
    (
        "pack/disruption-budget.yaml",
        include_str!("../../pack/disruption-budget.yaml"),
    ),
    (
        "pack/availability.yaml",
        include_str!("../../pack/availability.yaml"),
    ),
    (
        "pack/statefulset-quorum.yaml",
        include_str!("../../pack/statefulset-quorum.yaml"),
    ),
    (
        "pack/namespace-delete.yaml",
        include_str!("../../pack/namespace-delete.yaml"),
    ),
    ("pack/crd-delete.yaml", include_str!("../../pack/crd-delete.yaml")),
    (
        "pack/blast-radius.yaml",
        include_str!("../../pack/blast-radius.yaml"),
    ),
    (
        "pack/broken-references.yaml",
        include_str!("../../pack/broken-references.yaml"),
    ),
    (
        "pack/stale-owner.yaml",
        include_str!("../../pack/stale-owner.yaml"),
    ),
    (
        "pack/disruption-rate.yaml",
        include_str!("../../pack/disruption-rate.yaml"),
    ),
];

/// The pack's files as (name, YAML text), e.g. to list them or write them out for editing.
pub fn files() -> &'static [(&'static str, &'static str)] {
    FILES
}

/// The pack, loaded and compiled.
pub fn builtin() -> Result<PolicySet, LoadError> {
    builtin_loader()?.finish()
}

/// A loader holding the pack, to which more policies or params can be added. The pack is
/// compiled once per process (milliseconds of CEL parsing and checking) and copied from then on:
/// the gateway reloads its policies on every change, and `kubectl suture test` loads them for
/// every suite.
pub fn builtin_loader() -> Result<Loader, LoadError> {
    builtin_loader_at(KubernetesVersion::DEFAULT)
}

/// [`builtin_loader`] compiling for Kubernetes `version` (each version's pack compiled once per
/// process); further policies added to it compile for the same version.
pub fn builtin_loader_at(version: KubernetesVersion) -> Result<Loader, LoadError> {
    const VERSIONS: usize =
        (KubernetesVersion::NEWEST.minor() - KubernetesVersion::OLDEST.minor()) as usize + 1;
    static COMPILED: [OnceLock<Loader>; VERSIONS] = [const { OnceLock::new() }; VERSIONS];
    let slot = usize::from(version.minor() - KubernetesVersion::OLDEST.minor());
    let compiled = &COMPILED[slot.min(VERSIONS - 1)];
    if let Some(loader) = compiled.get() {
        return Ok(loader.clone());
    }
    let loader = FILES.iter().try_fold(
        Loader::new().kubernetes_version(version),
        |loader, (name, text)| loader.add_str(name, text),
    )?;
    Ok(compiled.get_or_init(|| loader).clone())
}

/// True when `policy` is one of the pack's (loaded from its embedded files).
pub fn is_pack_policy(policy: &Policy) -> bool {
    FILES.iter().any(|(name, _)| policy.source.file == *name)
}

/// Gives every pack policy of `set` the one action `action`, whatever its file says: how a team
/// runs the pack in Audit, then Warn, then Deny (`suture-gateway --pack-action`). The other
/// policies keep theirs.
pub fn set_action(set: &mut PolicySet, action: Action) {
    for policy in &mut set.policies {
        if is_pack_policy(policy) && policy.actions != [action] {
            let mut changed = (**policy).clone();
            changed.actions = vec![action];
            *policy = std::sync::Arc::new(changed);
        }
    }
}

#[cfg(test)]
mod action_tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_pack_runs_in_audit_and_other_policies_keep_their_action() {
        let own = "apiVersion: suture.dev/v1alpha1\nkind: SafetyPolicy\nmetadata: {name: own}\nspec:\n  validations: [{expression: 'true'}]\n";
        let mut set = builtin_loader()
            .unwrap()
            .add_str("own.yaml", own)
            .unwrap()
            .finish()
            .unwrap();
        set_action(&mut set, Action::Audit);
        for policy in &set.policies {
            let expected = if policy.name == "own" {
                Action::Deny
            } else {
                Action::Audit
            };
            assert_eq!(policy.actions, [expected], "{}", policy.name);
        }
        assert_eq!(
            set.policies.iter().filter(|p| is_pack_policy(p)).count(),
            files().len()
        );
    }
}
