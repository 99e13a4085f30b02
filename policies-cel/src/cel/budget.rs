//! Bounded evaluation: every step an expression takes is charged against a cost budget, and a
//! wall-clock deadline is checked as cost accrues, so a runaway expression (nested comprehensions
//! over large lists, string blow-ups) ends with an error instead of holding a thread.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::cel::EvalError;

/// The default budget for one policy evaluation, in cost units (one unit per expression node,
/// per comprehension iteration, and per 16 bytes or elements copied). Kubernetes bounds a
/// ValidatingAdmissionPolicy evaluation at 10 million units of cel-go's comparable cost.
pub const DEFAULT_COST_LIMIT: u64 = 10_000_000;

/// How often (in cost units) the deadline is looked at.
const DEADLINE_CHECK_EVERY: u64 = 4096;

/// A cost budget and optional deadline shared by every expression of one evaluation.
#[derive(Debug)]
pub struct Budget {
    limit: u64,
    spent: Cell<u64>,
    next_deadline_check: Cell<u64>,
    deadline: Option<(Instant, Duration)>,
}

impl Budget {
    /// A budget of `limit` cost units with no deadline.
    pub fn new(limit: u64) -> Self {
        Self {
            limit,
            spent: Cell::new(0),
            next_deadline_check: Cell::new(DEADLINE_CHECK_EVERY),
            deadline: None,
        }
    }

    /// Adds a wall-clock limit, counted from now.
    pub fn with_time_limit(mut self, limit: Duration) -> Self {
        self.deadline = Some((Instant::now() + limit, limit));
        self
    }

    /// Cost spent so far.
    pub fn spent(&self) -> u64 {
        self.spent.get()
    }

    /// The cost limit.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Charges `cost` units; fails once the budget or the deadline is exceeded.
    #[inline]
    pub fn charge(&self, cost: u64) -> Result<(), EvalError> {
        let spent = self.spent.get().saturating_add(cost);
        self.spent.set(spent);
        if spent > self.limit {
            return Err(EvalError::CostLimitExceeded { limit: self.limit });
        }
        if spent >= self.next_deadline_check.get() {
            self.next_deadline_check.set(spent + DEADLINE_CHECK_EVERY);
            if let Some((deadline, limit)) = self.deadline
                && Instant::now() > deadline
            {
                return Err(EvalError::TimeLimitExceeded {
                    millis: limit.as_millis() as u64,
                });
            }
        }
        Ok(())
    }

    /// Charges for copying or scanning `len` bytes or elements.
    #[inline]
    pub fn charge_len(&self, len: usize) -> Result<(), EvalError> {
        self.charge(1 + (len as u64) / 16)
    }
}

impl Default for Budget {
    fn default() -> Self {
        Self::new(DEFAULT_COST_LIMIT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_at_the_limit() {
        let budget = Budget::new(10);
        assert!(budget.charge(10).is_ok());
        assert_eq!(budget.charge(1), Err(EvalError::CostLimitExceeded { limit: 10 }));
    }

    #[test]
    fn stops_at_the_deadline() {
        let budget = Budget::new(u64::MAX).with_time_limit(Duration::ZERO);
        std::thread::sleep(Duration::from_millis(1));
        let result = (0..10).try_for_each(|_| budget.charge(DEADLINE_CHECK_EVERY));
        assert!(matches!(result, Err(EvalError::TimeLimitExceeded { .. })));
    }
}
