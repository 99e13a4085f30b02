//! Posting-list indexes of the cluster model: key → the objects it leads to, with borrowed
//! key forms so look-ups never allocate.

use std::hash::{Hash, RandomState};

use hashbrown::{Equivalent, HashMap};

use crate::cluster::model::ObjectId;
use crate::cluster::object::Text;

/// The objects an index key leads to, in insertion order. Most keys of the finer indexes
/// (a pod's own label values, its ConfigMaps) lead to a single object, which then costs no
/// allocation.
#[derive(Debug, Clone)]
pub(crate) enum Posting {
    One(ObjectId),
    Many(Vec<ObjectId>),
}

impl Posting {
    pub(crate) fn ids(&self) -> &[ObjectId] {
        match self {
            Posting::One(id) => std::slice::from_ref(id),
            Posting::Many(ids) => ids,
        }
    }

    fn push(&mut self, id: ObjectId) {
        match self {
            Posting::One(first) => *self = Posting::Many(vec![*first, id]),
            Posting::Many(ids) => ids.push(id),
        }
    }

    /// Takes `id` out; true when nothing is left.
    fn pull(&mut self, id: ObjectId) -> bool {
        match self {
            Posting::One(only) => *only == id,
            Posting::Many(ids) => {
                ids.retain(|i| *i != id);
                match ids[..] {
                    [] => true,
                    [only] => {
                        *self = Posting::One(only);
                        false
                    }
                    _ => false,
                }
            }
        }
    }
}

/// An index: key → the objects it leads to.
pub(crate) type Index<K> = HashMap<K, Posting, RandomState>;

pub(crate) fn push<K: Hash + Eq>(index: &mut Index<K>, key: K, id: ObjectId) {
    match index.get_mut(&key) {
        Some(posting) => posting.push(id),
        None => {
            index.insert(key, Posting::One(id));
        }
    }
}

pub(crate) fn pull<K: Hash + Eq, Q: Hash + Equivalent<K> + ?Sized>(
    index: &mut Index<K>,
    key: &Q,
    id: ObjectId,
) {
    if let Some(posting) = index.get_mut(key)
        && posting.pull(id)
    {
        index.remove(key);
    }
}

/// A borrowed `(Text, Text)` key (hashes as the owned one does).
#[derive(Hash)]
pub(crate) struct Pair<'a>(pub &'a str, pub &'a str);

impl Equivalent<(Text, Text)> for Pair<'_> {
    fn equivalent(&self, key: &(Text, Text)) -> bool {
        self.0 == &*key.0 && self.1 == &*key.1
    }
}

/// A borrowed `(Text, Text, Text)` key.
#[derive(Hash)]
pub(crate) struct Triple<'a>(pub &'a str, pub &'a str, pub &'a str);

impl Equivalent<(Text, Text, Text)> for Triple<'_> {
    fn equivalent(&self, key: &(Text, Text, Text)) -> bool {
        self.0 == &*key.0 && self.1 == &*key.1 && self.2 == &*key.2
    }
}

/// A borrowed `(bool, Text, Text)` key.
#[derive(Hash)]
pub(crate) struct Flagged<'a>(pub bool, pub &'a str, pub &'a str);

impl Equivalent<(bool, Text, Text)> for Flagged<'_> {
    fn equivalent(&self, key: &(bool, Text, Text)) -> bool {
        self.0 == key.0 && self.1 == &*key.1 && self.2 == &*key.2
    }
}
