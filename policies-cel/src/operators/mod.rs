//! Operators' semantics for their custom kinds, declared in CEL (`OperatorProfile`): which
//! objects a deletion takes with it, what it destroys outside the cluster, and what makes an
//! apparent disruption intended. A built-in catalog ships in the binary
//! ([`catalog`], `policies-cel/operators/*.yaml`); profiles loaded beside policies extend it, and
//! replace a catalog entry of the same name. The estimate applies them with the same built-in
//! semantics as a direct deletion (`impact/operators.rs`).

mod catalog;
pub mod kept;
pub mod profile;
pub mod spec;

use std::collections::HashMap;
use std::sync::Arc;

pub use catalog::catalog;
pub use kept::KeptFields;
pub use profile::Profile;

/// Profiles by the group, then the kind, they describe (looked up from `&str`s, without
/// building a key: the estimate looks the request's kind up on every DELETE).
type ByKind = HashMap<String, HashMap<String, Vec<Arc<Profile>>>>;

/// A set of profiles, found by the kind they describe.
#[derive(Debug, Clone, Default)]
pub struct Profiles {
    all: Arc<Vec<Arc<Profile>>>,
    by_kind: Arc<ByKind>,
    /// Profiles of a group pattern (`*`, `*.upbound.io`) or of every kind (`*`): consulted for an
    /// object carrying one of their finalizers only.
    patterns: Arc<Vec<Arc<Profile>>>,
    kept: KeptFields,
    /// True when a profile has a rule set off by an UPDATE: otherwise an UPDATE reads nothing.
    updates: bool,
    /// True when a pattern profile has one: then an UPDATE of any kind reads its finalizers.
    pattern_updates: bool,
}

impl Profiles {
    /// A set of `profiles`.
    pub fn new(profiles: Vec<Arc<Profile>>) -> Self {
        let mut by_kind = ByKind::new();
        let mut patterns = Vec::new();
        for profile in &profiles {
            if profile.is_pattern() {
                patterns.push(Arc::clone(profile));
                continue;
            }
            by_kind
                .entry(profile.group.clone())
                .or_default()
                .entry(profile.kind.clone())
                .or_default()
                .push(Arc::clone(profile));
        }
        let kept = KeptFields::of(profiles.iter().map(|p| &**p));
        let reacts = |p: &Arc<Profile>| p.deletion.iter().any(|r| r.operations.contains(&"UPDATE"));
        let updates = profiles.iter().any(reacts);
        let pattern_updates = patterns.iter().any(reacts);
        Self {
            all: Arc::new(profiles),
            by_kind: Arc::new(by_kind),
            patterns: Arc::new(patterns),
            kept,
            updates,
            pattern_updates,
        }
    }

    /// This set with `more`: a profile of the same name as one of the set's replaces it.
    pub fn with(&self, more: Vec<Profile>) -> Self {
        if more.is_empty() {
            return self.clone();
        }
        let mut profiles: Vec<Arc<Profile>> = self
            .all
            .iter()
            .filter(|p| !more.iter().any(|m| m.name == p.name))
            .cloned()
            .collect();
        profiles.extend(more.into_iter().map(Arc::new));
        Self::new(profiles)
    }

    /// The profiles of exactly `group`/`kind`.
    pub fn for_kind(&self, group: &str, kind: &str) -> &[Arc<Profile>] {
        if self.by_kind.is_empty() {
            return &[];
        }
        self.by_kind
            .get(group)
            .and_then(|kinds| kinds.get(kind))
            .map_or(&[], Vec::as_slice)
    }

    /// The profiles that apply to an object of `group`/`kind` carrying `finalizers`: those of
    /// its kind, and the pattern profiles naming one of its finalizers.
    pub fn for_object<'a>(&'a self, group: &str, kind: &str, finalizers: &[&str]) -> Vec<&'a Arc<Profile>> {
        let mut found: Vec<&Arc<Profile>> = self.for_kind(group, kind).iter().collect();
        if !finalizers.is_empty() {
            found.extend(
                self.patterns
                    .iter()
                    .filter(|p| p.covers(group, kind) && finalizers.iter().any(|f| p.explains(f))),
            );
        }
        found
    }

    /// Every profile, in load order (the catalog's first).
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Profile>> {
        self.all.iter()
    }

    /// How many profiles the set holds.
    pub fn len(&self) -> usize {
        self.all.len()
    }

    /// True when the set holds none.
    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// True when an UPDATE of `group`/`kind` may set off a profile's rule: a profile of the kind
    /// declares one, or a pattern profile does (it applies by the object's finalizers). An
    /// UPDATE of any other kind reads nothing of its object for the profiles.
    pub fn may_react_to_update(&self, group: &str, kind: &str) -> bool {
        self.pattern_updates || self.declares_updates(group, kind)
    }

    /// True when a profile of exactly `group`/`kind` has a rule an UPDATE sets off: what the
    /// operator does on an UPDATE of the kind is then modelled by its profile.
    pub fn declares_updates(&self, group: &str, kind: &str) -> bool {
        self.updates
            && self
                .for_kind(group, kind)
                .iter()
                .any(|p| p.deletion.iter().any(|r| r.operations.contains(&"UPDATE")))
    }

    /// What the cluster model keeps of the set's kinds.
    pub fn kept(&self) -> &KeptFields {
        &self.kept
    }

    /// True when a profile of `group`/`kind` (or a pattern covering it) names `finalizer`.
    pub fn explains(&self, group: &str, kind: &str, finalizer: &str) -> bool {
        self.for_kind(group, kind).iter().any(|p| p.explains(finalizer))
            || self
                .patterns
                .iter()
                .any(|p| p.covers(group, kind) && p.explains(finalizer))
    }
}
