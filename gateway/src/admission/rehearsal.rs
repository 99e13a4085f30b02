//! Keeping the judged path warm (`--keep-warm`): an operator's requests come seconds apart, and
//! by then the rest of the machine (and on a cloud VM, whatever the host ran on the idle vCPU)
//! has evicted the code and data that judging one touches; a cold judged request takes several
//! times what the same work takes warm. When no request was judged for a period, the gateway
//! rehearses one it judged last: reads its body again, passes it through self-protection and the
//! plan, and judges it on the async worker within the inline allowance, then drops the answer.
//! A rehearsal records nothing: no decision line, no request or policy metric (only
//! `suture_gateway_rehearsals_total`), no ledger record, no heavy-lane timing
//! (`Evaluator::rehearse`; a kind whose inline trial runs out is marked as a request's would be,
//! and not rehearsed while marked). Its price is CPU: one judged request's warm work per period
//! while the gateway is idle, none under load.
//!
//! Which bodies are kept: the last judged review of each of the [`KEPT_KINDS`] kinds of request
//! (operation and resource) judged most recently, rehearsed in turn, one per period; only reviews
//! read in one pass, no larger than [`MAX_KEPT_BYTES`], and never a Secret's (its body would
//! otherwise stay in memory).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;

/// The largest body kept for rehearsals: a larger one costs too much to judge again unasked.
pub const MAX_KEPT_BYTES: usize = 64 * 1024;

/// How many kinds of request keep a body: an operator's requests of a few kinds (deleting pods,
/// scaling its StatefulSet) each find their own policies and model data warm, while one
/// rehearsal per period keeps the CPU price of one.
pub const KEPT_KINDS: usize = 4;

/// A kind of request: its operation and resource (with subresource).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind<'a> {
    pub operation: &'a str,
    pub group: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
}

/// The rehearsal state of one admission path.
#[derive(Debug)]
pub struct Rehearsal {
    /// How long the path may stay idle before a rehearsal (zero: never rehearsed).
    period: Duration,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The last judged body of each kind, the most recently judged kind last.
    kept: Vec<(KindKey, Bytes)>,
    /// The next kept body to rehearse (counted from the oldest kind).
    turn: usize,
    /// When a request was last judged (a rehearsal included).
    judged_at: Option<Instant>,
}

impl Rehearsal {
    /// Rehearsals after `period` without a judged request; `Duration::ZERO` turns them off.
    pub fn new(period: Duration) -> Self {
        Self {
            period,
            state: Mutex::default(),
        }
    }

    /// Whether rehearsals run at all.
    pub fn enabled(&self) -> bool {
        !self.period.is_zero()
    }

    /// The idle time after which the path is rehearsed.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// Notes a judged request of `kind` whose review is `body` (read in one pass); the body is
    /// kept for rehearsals when it is fit to be.
    pub fn judged(&self, body: &Bytes, kind: Kind<'_>) {
        if !self.enabled() {
            return;
        }
        let fit = body.len() <= MAX_KEPT_BYTES && !(kind.group.is_empty() && kind.resource == "secrets");
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.judged_at = Some(Instant::now());
        if !fit {
            return;
        }
        let key = match state.kept.iter().position(|(key, _)| key.is(&kind)) {
            Some(at) => state.kept.remove(at).0,
            None => {
                if state.kept.len() == KEPT_KINDS {
                    state.kept.remove(0);
                }
                KindKey::of(&kind)
            }
        };
        state.kept.push((key, body.clone()));
    }

    /// The body to rehearse now (`now`), if the path has been idle for a period and a body was
    /// kept: each kept kind in turn. The rehearsal counts as a judged request.
    pub fn due(&self, now: Instant) -> Option<Bytes> {
        if !self.enabled() {
            return None;
        }
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let idle = state
            .judged_at
            .is_none_or(|at| now.saturating_duration_since(at) >= self.period);
        if !idle || state.kept.is_empty() {
            return None;
        }
        let at = state.turn % state.kept.len();
        state.turn = at + 1;
        state.judged_at = Some(now);
        Some(state.kept[at].1.clone())
    }
}

/// A kept [`Kind`], owned (built only when a kind is first kept).
#[derive(Debug, PartialEq, Eq)]
struct KindKey {
    operation: String,
    group: String,
    resource: String,
    subresource: String,
}

impl KindKey {
    fn of(kind: &Kind<'_>) -> Self {
        Self {
            operation: kind.operation.to_owned(),
            group: kind.group.to_owned(),
            resource: kind.resource.to_owned(),
            subresource: kind.subresource.to_owned(),
        }
    }

    /// Whether this is the key of `kind`.
    fn is(&self, kind: &Kind<'_>) -> bool {
        self.operation == kind.operation
            && self.group == kind.group
            && self.resource == kind.resource
            && self.subresource == kind.subresource
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERIOD: Duration = Duration::from_millis(5);

    fn kind<'a>(operation: &'a str, resource: &'a str) -> Kind<'a> {
        Kind {
            operation,
            group: "",
            resource,
            subresource: "",
        }
    }

    #[test]
    fn a_judged_body_is_rehearsed_once_the_path_was_idle_for_a_period() {
        let rehearsal = Rehearsal::new(PERIOD);
        let body = Bytes::from_static(b"{\"review\":1}");
        let start = Instant::now();
        assert_eq!(rehearsal.due(start), None, "nothing judged yet");
        rehearsal.judged(&body, kind("DELETE", "pods"));
        assert_eq!(rehearsal.due(Instant::now()), None, "judged just now: warm");
        let later = Instant::now() + PERIOD;
        assert_eq!(rehearsal.due(later), Some(body.clone()));
        assert_eq!(
            rehearsal.due(later),
            None,
            "the rehearsal itself counts as judged"
        );
        assert_eq!(rehearsal.due(later + PERIOD), Some(body));
    }

    #[test]
    fn the_kinds_judged_last_are_rehearsed_in_turn_each_with_its_latest_body() {
        let rehearsal = Rehearsal::new(PERIOD);
        let body = |n: u8| Bytes::from(vec![n]);
        rehearsal.judged(&body(1), kind("DELETE", "pods"));
        rehearsal.judged(&body(2), kind("UPDATE", "statefulsets"));
        rehearsal.judged(&body(3), kind("DELETE", "pods"));
        let mut at = Instant::now();
        let mut next = || {
            at += PERIOD;
            rehearsal.due(at).unwrap()[0]
        };
        assert_eq!([next(), next(), next(), next()], [2, 3, 2, 3]);
        for n in 4..=8 {
            rehearsal.judged(&body(n), kind("DELETE", &format!("kind-{n}")));
        }
        let mut at = Instant::now();
        let mut seen: Vec<u8> = (0..KEPT_KINDS)
            .map(|_| {
                at += PERIOD;
                rehearsal.due(at).unwrap()[0]
            })
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, [5, 6, 7, 8], "the {KEPT_KINDS} kinds judged last");
    }

    #[test]
    fn secrets_and_large_bodies_are_not_kept_but_still_count_as_judged() {
        let rehearsal = Rehearsal::new(PERIOD);
        let pod = Bytes::from_static(b"{\"pod\":1}");
        rehearsal.judged(&pod, kind("DELETE", "pods"));
        rehearsal.judged(&Bytes::from_static(b"{\"secret\":1}"), kind("DELETE", "secrets"));
        let large = Bytes::from(vec![b' '; MAX_KEPT_BYTES + 1]);
        rehearsal.judged(&large, kind("UPDATE", "configmaps"));
        assert_eq!(rehearsal.due(Instant::now()), None, "judged just now");
        assert_eq!(rehearsal.due(Instant::now() + PERIOD), Some(pod.clone()));
        assert_eq!(
            rehearsal.due(Instant::now() + PERIOD * 2),
            Some(pod),
            "the only body kept"
        );
    }

    #[test]
    fn a_kinds_key_is_matched_part_by_part() {
        let pods = kind("DELETE", "pods");
        assert!(KindKey::of(&pods).is(&pods));
        assert!(!KindKey::of(&pods).is(&kind("DELETE", "pod")));
        assert!(!KindKey::of(&pods).is(&kind("DELETEpods", "")));
        let scale = Kind {
            subresource: "scale",
            ..kind("UPDATE", "statefulsets")
        };
        assert!(!KindKey::of(&scale).is(&kind("UPDATE", "statefulsets")));
    }

    #[test]
    fn a_zero_period_keeps_nothing() {
        let rehearsal = Rehearsal::new(Duration::ZERO);
        rehearsal.judged(&Bytes::from_static(b"{}"), kind("DELETE", "pods"));
        assert!(!rehearsal.enabled());
        assert_eq!(rehearsal.due(Instant::now() + Duration::from_secs(60)), None);
    }
}
