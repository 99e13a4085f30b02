//! A trial evaluation: one request judged under a small total cost allowance shared by all the
//! policies that judge it, so that a caller can afford to evaluate where blocking is costly (the
//! gateway's async workers, which also serve other connections) and judge the request again
//! elsewhere, with the policies' whole budgets, when the allowance runs out. A trial that ran out
//! (or that its caller abandoned) says so, and its decision must not be used: a policy stopped by
//! the allowance looks to `evaluate()` like one that ran out of its own budget.

use std::cell::Cell;

/// The allowance of one trial evaluation, and what it spent.
#[derive(Debug)]
pub struct Trial {
    allowance: u64,
    spent: Cell<u64>,
    exhausted: Cell<bool>,
    abandoned: Cell<bool>,
}

impl Trial {
    /// A trial of `allowance` cost units (the units of [`crate::cel::DEFAULT_COST_LIMIT`]) over
    /// every policy of one evaluation together.
    pub fn new(allowance: u64) -> Self {
        Self {
            allowance,
            spent: Cell::new(0),
            exhausted: Cell::new(false),
            abandoned: Cell::new(false),
        }
    }

    /// True when some policy was stopped by the allowance: the request needs more than it.
    pub fn exhausted(&self) -> bool {
        self.exhausted.get()
    }

    /// Ends the trial unfinished for a reason of the caller's (a lock it will not wait for), not
    /// for what the request costs.
    pub fn abandon(&self) {
        self.abandoned.set(true);
    }

    /// True when the decision is the request's: the allowance sufficed and the trial was not
    /// abandoned.
    pub fn concluded(&self) -> bool {
        !self.exhausted.get() && !self.abandoned.get()
    }

    /// Cost units spent so far, over every policy.
    pub fn spent(&self) -> u64 {
        self.spent.get()
    }

    /// The cost limit of the next policy run: its own `cost_limit`, or what is left of the
    /// allowance when that is less (then `true`: running out is the trial's doing).
    pub(crate) fn limit(&self, cost_limit: u64) -> (u64, bool) {
        let left = self.allowance.saturating_sub(self.spent.get());
        if left < cost_limit {
            (left, true)
        } else {
            (cost_limit, false)
        }
    }

    /// Settles a policy run that was given `limit` (from [`Self::limit`]) and spent `spent`.
    pub(crate) fn settle(&self, limit: (u64, bool), spent: u64) {
        self.spent
            .set(self.spent.get().saturating_add(spent.min(limit.0)));
        let (limit, bound_by_trial) = limit;
        // A budget that refused a charge has spent beyond its limit.
        if bound_by_trial && spent > limit {
            self.exhausted.set(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowance_is_shared_by_the_runs_and_only_its_own_limit_exhausts_it() {
        let trial = Trial::new(100);
        let first = trial.limit(1_000);
        assert_eq!(first, (100, true));
        trial.settle(first, 60);
        assert!(!trial.exhausted());
        assert_eq!(trial.limit(1_000), (40, true), "what the first run left");
        assert_eq!(
            trial.limit(10),
            (10, false),
            "a policy's own smaller limit is its own"
        );
        trial.settle((10, false), 11);
        assert!(
            !trial.exhausted(),
            "a policy out of its own budget is its verdict"
        );
        let last = trial.limit(1_000);
        trial.settle(last, last.0 + 1);
        assert!(trial.exhausted());
        assert!(!trial.concluded());
        assert_eq!(trial.spent(), 100);
    }

    #[test]
    fn an_abandoned_trial_is_not_concluded_nor_exhausted() {
        let trial = Trial::new(100);
        assert!(trial.concluded());
        trial.abandon();
        assert!(!trial.concluded(), "its decision is not used");
        assert!(
            !trial.exhausted(),
            "the request did not need more than the allowance"
        );
    }
}
