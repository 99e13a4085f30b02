//! What the policy and params watches share: an object as the policy set is given it, without
//! the fields every status update changes ([`stable_text`]), and a re-list gathered into one
//! edit ([`Listing`]), so that neither a status-only update nor an identical re-list rebuilds
//! the set.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::live::watch::Change;

/// A watched object as the policy set is given it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stable {
    pub name: String,
    /// Empty for cluster-scoped objects.
    pub namespace: String,
    /// The object's JSON text without status or resourceVersion.
    pub text: String,
}

/// `json`'s name, namespace and text without status or resourceVersion (a status change would
/// otherwise rebuild the set on every update); `None` without a name.
pub fn stable_text(mut json: Value) -> Option<Stable> {
    let name = json["metadata"]["name"].as_str()?.to_owned();
    let namespace = json["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if let Some(object) = json.as_object_mut() {
        object.remove("status");
    }
    if let Some(meta) = json["metadata"].as_object_mut() {
        meta.remove("resourceVersion");
    }
    Some(Stable {
        name,
        namespace,
        text: json.to_string(),
    })
}

/// A watch's change once a list's objects are gathered.
#[derive(Debug, Clone, PartialEq)]
pub enum Update<T> {
    /// A complete list: every object of the kind, by key (the others are gone).
    Listed(BTreeMap<String, T>),
    /// An object was added or modified.
    Applied(String, T),
    /// An object was deleted.
    Deleted { namespace: String, name: String },
}

/// Gathers the objects of the list in progress, keyed as the sink keys them.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing<T> {
    listed: Option<BTreeMap<String, T>>,
}

impl<T> Default for Listing<T> {
    fn default() -> Self {
        Self { listed: None }
    }
}

impl<T> Listing<T> {
    /// Takes one change; `entry` keys an object (`None`: the object is left out). Objects of a
    /// list are kept until the list is done, then come out together.
    pub fn feed(
        &mut self,
        change: Change,
        entry: impl FnOnce(Value) -> Option<(String, T)>,
    ) -> Option<Update<T>> {
        match change {
            Change::Listing => {
                self.listed = Some(BTreeMap::new());
                None
            }
            Change::Listed(json) => {
                if let Some(listed) = self.listed.as_mut()
                    && let Some((key, value)) = entry(json)
                {
                    listed.insert(key, value);
                }
                None
            }
            Change::ListDone => Some(Update::Listed(self.listed.take().unwrap_or_default())),
            Change::Applied(json) => entry(json).map(|(key, value)| Update::Applied(key, value)),
            Change::Deleted { namespace, name } => Some(Update::Deleted { namespace, name }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_and_resource_version_are_left_out() {
        let object = json!({"kind": "ConfigMap",
            "metadata": {"name": "limits", "namespace": "ops", "resourceVersion": "7"},
            "data": {"max": "5"}, "status": {"seen": 1}});
        let stable = stable_text(object).unwrap();
        assert_eq!(
            (stable.name.as_str(), stable.namespace.as_str()),
            ("limits", "ops")
        );
        assert_eq!(
            serde_json::from_str::<Value>(&stable.text).unwrap(),
            json!({"kind": "ConfigMap", "metadata": {"name": "limits", "namespace": "ops"},
                "data": {"max": "5"}})
        );
        assert_eq!(stable_text(json!({"metadata": {}})), None);
    }

    #[test]
    fn a_list_comes_out_whole() {
        let mut listing = Listing::default();
        let entry = |json: Value| stable_text(json).map(|s| (s.name, s.text));
        let named = |name: &str| json!({"metadata": {"name": name}});
        assert_eq!(listing.feed(Change::Listing, entry), None);
        assert_eq!(listing.feed(Change::Listed(named("a")), entry), None);
        assert_eq!(listing.feed(Change::Listed(json!({})), entry), None);
        let Some(Update::Listed(listed)) = listing.feed(Change::ListDone, entry) else {
            panic!("no list");
        };
        assert_eq!(listed.keys().collect::<Vec<_>>(), ["a"]);
        // Outside a list, a listed object goes nowhere.
        assert_eq!(listing.feed(Change::Listed(named("b")), entry), None);
        assert_eq!(
            listing.feed(Change::Applied(named("c")), entry),
            Some(Update::Applied("c".into(), r#"{"metadata":{"name":"c"}}"#.into()))
        );
    }
}
