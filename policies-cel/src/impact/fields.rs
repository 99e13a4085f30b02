//! `impact`'s top-level fields by their CEL names: each converted alone (what a selection of one
//! reads, `eval/lazy_impact.rs`), a chosen set of them as one map (every field when an expression
//! uses `impact` whole), and which fields a compiled program reads ([`FieldsRead`]).

use std::cell::RefCell;

use crate::cel::map_shape::MapShape;
use crate::cel::{FieldsRead, Program, Root, Value};
use crate::impact::Impact;
use crate::impact::cel_value::ToCel;

/// A set of `impact`'s top-level fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ImpactFields(u32);

/// Declares `impact`'s fields once: their CEL names, in [`Impact`]'s order, and the conversion
/// of the chosen ones ([`ToCel`]; checked against `Impact`'s own serialization by the tests below
/// and [`cel_value`](super::cel_value)'s).
macro_rules! impact_fields {
    ($($name:literal => $field:ident),+ $(,)?) => {
        /// Every top-level field of `impact`, as policies name them.
        pub const NAMES: &[&str] = &[$($name),+];

        impl Impact {
            /// The estimate as the CEL `impact` variable, with only `fields` in it.
            pub fn to_value_of(&self, fields: ImpactFields) -> Value {
                let mut values = Vec::with_capacity(fields.len());
                let mut index = 0;
                $(
                    if fields.0 & (1 << index) != 0 {
                        values.push(Some(self.$field.to_cel()));
                    }
                    index += 1;
                )+
                let _ = index;
                with_shape_of(fields, |shape| shape.build(&mut values))
            }

            /// The top-level field `name` of the `impact` variable alone (`None`: no such field).
            pub fn field_to_value(&self, name: &str) -> Option<Value> {
                match name {
                    $($name => Some(self.$field.to_cel()),)+
                    _ => None,
                }
            }
        }
    };
}

impact_fields! {
    "summary" => summary,
    "action" => action,
    "activity" => activity,
    "deleted" => deleted,
    "pods" => pods,
    "volumes" => volumes,
    "workloads" => workloads,
    "services" => services,
    "pdbs" => pdbs,
    "quorum" => quorum,
    "brokenReferences" => broken_references,
    "staleOwners" => stale_owners,
    "unconfirmedDeletions" => unconfirmed_deletions,
    "lostServiceAccounts" => lost_service_accounts,
    "releasedAddresses" => released_addresses,
    "lostClasses" => lost_classes,
    "podSecurityViolations" => pod_security_violations,
    "external" => external,
    "intended" => intended,
    "notes" => notes,
    "modelled" => modelled,
}

/// How many sets of fields each thread keeps the shape of `impact` for (a policy set reads one
/// set; a reload or another set offline, another).
const SHAPES_KEPT: usize = 8;

/// `f` with the shape of an `impact` holding `fields` (by their names, in `impact`'s order), kept
/// by the thread.
fn with_shape_of<R>(fields: ImpactFields, f: impl FnOnce(&MapShape) -> R) -> R {
    thread_local! {
        static SHAPES: RefCell<Vec<(ImpactFields, MapShape)>> = const { RefCell::new(Vec::new()) };
    }
    SHAPES.with_borrow_mut(|shapes| {
        let place = match shapes.iter().position(|(kept, _)| *kept == fields) {
            Some(place) => place,
            None => {
                if shapes.len() == SHAPES_KEPT {
                    shapes.remove(0);
                }
                let names: Vec<&str> = fields.names().collect();
                shapes.push((fields, MapShape::new(&names)));
                shapes.len() - 1
            }
        };
        f(&shapes[place].1)
    })
}

impl ImpactFields {
    /// No field: `impact` is not read.
    pub const NONE: Self = Self(0);
    /// Every field.
    pub const ALL: Self = Self((1 << NAMES.len()) - 1);

    /// The fields `program` reads. A name that is no field of `impact` adds nothing: reading it
    /// is a "no such key" error with or without the others.
    pub fn read_by(program: &Program) -> Self {
        match program.fields_read(Root::Impact) {
            FieldsRead::Whole => Self::ALL,
            FieldsRead::Fields(names) => names
                .iter()
                .filter_map(|name| NAMES.iter().position(|known| known == name))
                .fold(Self::NONE, |fields, index| Self(fields.0 | 1 << index)),
        }
    }

    /// The fields of both.
    #[must_use]
    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// How many fields.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// True when no field is read.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The fields' names, in `impact`'s order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        NAMES
            .iter()
            .enumerate()
            .filter(move |(index, _)| self.0 & (1 << index) != 0)
            .map(|(_, name)| *name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::Env;
    use crate::cel::value::to_json;

    fn read(source: &str) -> ImpactFields {
        ImpactFields::read_by(&Env::admission().compile(source).unwrap())
    }

    /// An estimate with every list filled, from the repository's database cluster.
    fn estimates() -> Vec<Impact> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
        let cluster = root.join("clusters/database");
        let model = crate::cluster::snapshot::load_snapshots(&[cluster.as_path()], &mut |_| {}).unwrap();
        std::fs::read_dir(root.join("reviews"))
            .unwrap()
            .filter_map(|entry| {
                let bytes = std::fs::read(entry.unwrap().path()).unwrap();
                let request = crate::eval::Request::from_wire(&bytes)?;
                Some(crate::impact::estimate(&request, &model))
            })
            .collect()
    }

    #[test]
    fn every_field_converts_as_the_whole_estimate_does() {
        let estimates = estimates();
        assert!(estimates.len() >= 8, "{} reviews read", estimates.len());
        let keys: Vec<String> = match to_json(&Impact::default().to_value()) {
            serde_json::Value::Object(map) => map.keys().cloned().collect(),
            other => panic!("{other}"),
        };
        let mut names: Vec<&str> = NAMES.to_vec();
        names.sort_unstable();
        assert_eq!(keys, names, "NAMES lists every field of Impact, by its CEL name");
        for estimate in &estimates {
            let whole = to_json(&estimate.to_value());
            assert_eq!(to_json(&estimate.to_value_of(ImpactFields::ALL)), whole);
            for name in NAMES {
                let alone = estimate.field_to_value(name).map(|value| to_json(&value));
                assert_eq!(alone.as_ref(), whole.get(name), "{name} alone");
            }
            assert!(estimate.field_to_value("nosuch").is_none());
        }
    }

    #[test]
    fn only_the_fields_read_are_converted() {
        let fields = read("impact.summary.deleted < 3").union(read("impact.?pods.orValue([]).size() < 9"));
        assert_eq!(fields.names().collect::<Vec<_>>(), ["summary", "pods"]);
        let whole = serde_json::to_value(&estimates()[0]).unwrap();
        let converted = to_json(&estimates()[0].to_value_of(fields));
        assert_eq!(converted["summary"], whole["summary"]);
        assert_eq!(converted["pods"], whole["pods"]);
        assert_eq!(converted.as_object().unwrap().len(), 2);
        assert_eq!(read("impact.nosuch.size() > 0"), ImpactFields::NONE);
        assert_eq!(read("object.metadata.name != ''"), ImpactFields::NONE);
        assert_eq!(read("string(impact) != ''"), ImpactFields::ALL);
        assert_eq!(ImpactFields::ALL.len(), NAMES.len());
    }
}
