//! matchCondition answers shared by the policies that judge one request. A matchCondition reads
//! only the request's roots (`object`, `oldObject`, `request`, `params`, `namespaceObject`,
//! `authorizer`, and Suture's `impact`, `cluster`, `history`), never a composited variable, so
//! the same expression over the same params object has one answer per request: the built-in
//! pack's ten policies share their scope condition, which reads a SafetyPackParams object when
//! one is loaded. Only definite answers (true or false) are kept; an error is evaluated again
//! where it arises, so each policy reports it under its own failure policy.

use std::cell::RefCell;
use std::sync::Arc;

use crate::cel::Value;

/// One request's matchCondition answers, by expression and params object.
#[derive(Debug, Default)]
pub(crate) struct MatchMemo {
    answers: RefCell<Vec<(Arc<str>, usize, bool)>>,
}

/// Which params object a run has: the object's place in the policy set (the set outlives the
/// request), or 0 for none.
pub(crate) fn params_key(params: Option<&Value>) -> usize {
    params.map_or(0, |value| std::ptr::from_ref(value) as usize)
}

impl MatchMemo {
    /// The answer already computed for `source` over the params object `params`.
    pub(crate) fn get(&self, source: &Arc<str>, params: usize) -> Option<bool> {
        self.answers
            .borrow()
            .iter()
            .find(|(s, p, _)| *p == params && (Arc::ptr_eq(s, source) || **s == **source))
            .map(|(_, _, answer)| *answer)
    }

    /// Keeps `answer` for `source` over `params`.
    pub(crate) fn put(&self, source: &Arc<str>, params: usize, answer: bool) {
        self.answers
            .borrow_mut()
            .push((Arc::clone(source), params, answer));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_kept_per_expression_and_params_object() {
        let memo = MatchMemo::default();
        let source: Arc<str> = Arc::from("params == null");
        let same_text: Arc<str> = Arc::from("params == null");
        let (first, second) = (Value::Null, Value::Bool(true));
        let (a, b) = (params_key(Some(&first)), params_key(Some(&second)));
        assert_eq!(memo.get(&source, a), None);
        memo.put(&source, a, true);
        assert_eq!(
            memo.get(&same_text, a),
            Some(true),
            "the same text, compiled twice"
        );
        assert_eq!(memo.get(&source, b), None, "another params object");
        assert_eq!(memo.get(&Arc::from("true"), a), None, "another expression");
        assert_eq!(params_key(None), 0);
    }
}
