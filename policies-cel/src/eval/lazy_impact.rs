//! The `impact` variable of one request: estimated when a policy first reads it, and made a CEL
//! value one top-level field at a time.
//!
//! Policies select fields of `impact` (`impact.summary.podsDisrupted`, `impact.workloads.filter(...)`)
//! and almost never use it whole. A selected field is converted alone, on its first read by any
//! policy of the request ([`Activation::root_field`](crate::cel::Activation::root_field)), so a
//! field that no policy judging this request reads is never converted, and a selection goes
//! straight to its field instead of through a map of every field the set reads. `impact` is read
//! whole only by an expression that uses it whole (`string(impact)`: selections go through
//! [`LazyImpact::field`]), which reads every field: it is built once, with all of them.

use std::cell::OnceCell;

use crate::cel::{EvalError, Value};
use crate::impact::{Impact, ImpactFields};

/// How many top-level fields `impact` has.
const FIELDS: usize = crate::impact::IMPACT_FIELD_NAMES.len();

/// One request's `impact`, computed on first read.
pub(crate) struct LazyImpact<'a> {
    /// Estimates the request's impact (called at most once), or says why it cannot.
    estimate: &'a dyn Fn() -> Result<Impact, EvalError>,
    estimated: OnceCell<Result<Impact, EvalError>>,
    whole: OnceCell<Value>,
    /// Each field converted, by its place in `impact`'s order.
    fields: [OnceCell<Value>; FIELDS],
}

impl<'a> LazyImpact<'a> {
    /// `impact` from `estimate`.
    pub(crate) fn new(estimate: &'a dyn Fn() -> Result<Impact, EvalError>) -> Self {
        Self {
            estimate,
            estimated: OnceCell::new(),
            whole: OnceCell::new(),
            fields: std::array::from_fn(|_| OnceCell::new()),
        }
    }

    fn estimated(&self) -> &Result<Impact, EvalError> {
        self.estimated.get_or_init(self.estimate)
    }

    /// `impact` as a whole value, or why there is none.
    pub(crate) fn whole(&self) -> Result<Value, EvalError> {
        let estimate = self.estimated().as_ref().map_err(Clone::clone)?;
        let value = self.whole.get_or_init(|| {
            let value = estimate.to_value_of(ImpactFields::ALL);
            crate::stages::mark("impact as CEL");
            value
        });
        Ok(value.clone())
    }

    /// The top-level field `name` of `impact` (`Some(None)`: `impact` has no such field);
    /// `None` when there is no estimate, which [`LazyImpact::whole`] then explains.
    pub(crate) fn field(&self, name: &str) -> Option<Option<Value>> {
        let estimate = self.estimated().as_ref().ok()?;
        let Some(place) = crate::impact::IMPACT_FIELD_NAMES
            .iter()
            .position(|known| *known == name)
        else {
            return Some(None);
        };
        let value = self
            .fields
            .get(place)?
            .get_or_init(|| estimate.field_to_value(name).unwrap_or(Value::Null));
        Some(Some(value.clone()))
    }

    /// The estimate, when one was made (for reports and decision logs).
    pub(crate) fn into_estimate(self) -> Option<Impact> {
        self.estimated.into_inner().and_then(Result::ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::upstream::objects::Key;
    use crate::impact::IMPACT_FIELD_NAMES;

    fn estimate() -> Impact {
        let mut impact = Impact::default();
        impact.summary.deleted = 2;
        impact.action = "delete Pod a/b".into();
        impact.notes = vec!["a note".into()];
        impact
    }

    #[test]
    fn each_field_is_what_the_whole_holds_under_its_name() {
        let made = std::cell::Cell::new(0);
        let compute = || {
            made.set(made.get() + 1);
            Ok(estimate())
        };
        let impact = LazyImpact::new(&compute);
        let Ok(Value::Map(whole)) = impact.whole() else {
            panic!("a map")
        };
        for name in IMPACT_FIELD_NAMES {
            let key = Key::String(std::sync::Arc::new((*name).to_owned()));
            assert_eq!(impact.field(name), Some(whole.map.get(&key).cloned()), "{name}");
        }
        assert_eq!(impact.field("nosuch"), Some(None));
        assert_eq!(made.get(), 1, "estimated once");
        assert_eq!(impact.into_estimate().map(|i| i.summary.deleted), Some(2));
    }

    #[test]
    fn without_an_estimate_a_field_defers_to_the_whole_which_says_why() {
        let compute = || Err(EvalError::Unavailable("impact (no cluster model)".into()));
        let impact = LazyImpact::new(&compute);
        assert_eq!(impact.field("summary"), None);
        assert!(matches!(impact.whole(), Err(EvalError::Unavailable(_))));
        assert!(impact.into_estimate().is_none());
    }

    #[test]
    fn a_field_read_alone_converts_no_other() {
        let compute = || Ok(estimate());
        let impact = LazyImpact::new(&compute);
        assert!(matches!(impact.field("summary"), Some(Some(Value::Map(_)))));
        let converted = impact.fields.iter().filter(|field| field.get().is_some()).count();
        assert_eq!(converted, 1);
        assert!(impact.whole.get().is_none(), "the whole is not built");
    }
}
