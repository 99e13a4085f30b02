//! Posting-list indexes of the cluster model: key → the objects it leads to, with borrowed
//! key forms so look-ups never allocate.

use std::hash::Hash;

use foldhash::fast::RandomState;
use hashbrown::{Equivalent, HashMap};

use crate::cluster::model::ObjectId;
use crate::cluster::object::{ClassKind, Text};

/// The objects an index key leads to, sorted by id (which is insertion order for a model built
/// once; a replaced object reuses its slot and keeps its place). Sorted, a removal is a binary
/// search and a move instead of a scan: a pod replaced under a key holding 150k pods (the kind,
/// a namespace, a shared label) costs microseconds, not a pass over all of them. Most keys of
/// the finer indexes (a pod's own label values, its ConfigMaps) lead to a single object, which
/// then costs no allocation.
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
            Posting::One(first) if *first == id => {}
            Posting::One(first) => {
                *self = Posting::Many(if *first < id {
                    vec![*first, id]
                } else {
                    vec![id, *first]
                })
            }
            Posting::Many(ids) => match ids.last() {
                Some(last) if *last < id => ids.push(id),
                _ => {
                    if let Err(at) = ids.binary_search(&id) {
                        ids.insert(at, id);
                    }
                }
            },
        }
    }

    /// Takes `id` out; true when nothing is left.
    fn pull(&mut self, id: ObjectId) -> bool {
        match self {
            Posting::One(only) => *only == id,
            Posting::Many(ids) => {
                if let Ok(at) = ids.binary_search(&id) {
                    ids.remove(at);
                }
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

/// A (class kind, class name) key, borrowed.
#[derive(Hash)]
pub(crate) struct Classed<'a>(pub ClassKind, pub &'a str);

impl Equivalent<(ClassKind, Text)> for Classed<'_> {
    fn equivalent(&self, key: &(ClassKind, Text)) -> bool {
        self.0 == key.0 && self.1 == &*key.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postings_stay_sorted_and_unique_through_pushes_and_pulls() {
        let mut posting = Posting::One(5);
        for id in [9, 2, 7, 5, 11] {
            posting.push(id);
        }
        assert_eq!(posting.ids(), [2, 5, 7, 9, 11]);
        assert!(!posting.pull(7));
        assert!(!posting.pull(8), "pulling an absent id changes nothing");
        assert_eq!(posting.ids(), [2, 5, 9, 11]);
        for id in [2, 9, 11] {
            assert!(!posting.pull(id));
        }
        assert_eq!(posting.ids(), [5]);
        assert!(posting.pull(5));
    }
}
