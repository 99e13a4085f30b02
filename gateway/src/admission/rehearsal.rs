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
//! How long: rehearsals go on for a window (`--keep-warm-for`) after the last request judged for
//! real, then stop, and the rehearsing task sleeps until the next judged request wakes it: a
//! quiet cluster's gateway costs nothing, one whose operators are at work stays warm between
//! their requests.
//!
//! Which bodies are kept: the last judged review of each of the [`KEPT_KINDS`] kinds of request
//! (operation and resource) judged most recently, rehearsed in turn, one per period; only reviews
//! read in one pass, no larger than [`MAX_KEPT_BYTES`], and never a Secret's (its body would
//! otherwise stay in memory).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::Notify;

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

/// What is due now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Due {
    /// Rehearse this body.
    Body(Bytes),
    /// Nothing yet: the path was judged within the period, or nothing was kept.
    NotYet,
    /// Nothing until a request is judged again: none was for the window (or ever).
    Dormant,
}

/// What became of one turn of the rehearsing task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rehearsed {
    /// A rehearsal was judged to its end.
    Judged,
    /// None this turn: not idle yet, nothing kept, or the rehearsal was skipped on its way.
    Skipped,
    /// None until a request is judged again ([`Rehearsal::resumed`]).
    Dormant,
}

/// The rehearsal state of one admission path.
#[derive(Debug)]
pub struct Rehearsal {
    /// How long the path may stay idle before a rehearsal (zero: never rehearsed).
    period: Duration,
    /// How long after the last request judged for real rehearsals go on.
    window: Duration,
    state: Mutex<State>,
    /// Wakes the rehearsing task when a request is judged while it is dormant.
    wake: Notify,
}

#[derive(Debug, Default)]
struct State {
    /// The last judged body of each kind, the most recently judged kind last.
    kept: Vec<(KindKey, Bytes)>,
    /// The next kept body to rehearse (counted from the oldest kind).
    turn: usize,
    /// When a request was last judged (a rehearsal included).
    judged_at: Option<Instant>,
    /// When a request was last judged for real (rehearsals excluded).
    requested_at: Option<Instant>,
    /// Whether the rehearsing task was told nothing is due until a request is judged.
    dormant: bool,
}

impl Rehearsal {
    /// Rehearsals after `period` without a judged request, for `window` after the last one
    /// judged for real; a zero `period` turns them off.
    pub fn new(period: Duration, window: Duration) -> Self {
        Self {
            period,
            window,
            state: Mutex::default(),
            wake: Notify::new(),
        }
    }

    /// Rehearsals turned off.
    pub fn off() -> Self {
        Self::new(Duration::ZERO, Duration::ZERO)
    }

    /// Whether rehearsals run at all.
    pub fn enabled(&self) -> bool {
        !self.period.is_zero()
    }

    /// The idle time after which the path is rehearsed.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// Notes a judged request of `kind` whose review is `body` (`None`: not read in one pass);
    /// the body is kept for rehearsals when it is fit to be. Wakes a dormant rehearsing task.
    pub fn judged(&self, body: Option<&Bytes>, kind: Kind<'_>) {
        if !self.enabled() {
            return;
        }
        let secret = kind.group.is_empty() && kind.resource == "secrets";
        let fit = body.filter(|body| body.len() <= MAX_KEPT_BYTES && !secret);
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        state.judged_at = Some(now);
        state.requested_at = Some(now);
        if std::mem::take(&mut state.dormant) {
            self.wake.notify_one();
        }
        let Some(body) = fit else {
            return;
        };
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

    /// What is due at `now`: a body to rehearse if the path has been idle for a period within
    /// the window and a body was kept (each kept kind in turn; the rehearsal counts as judged),
    /// or [`Due::Dormant`] once the window has passed (until [`Self::resumed`]).
    pub fn due(&self, now: Instant) -> Due {
        if !self.enabled() {
            return Due::Dormant;
        }
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let within_window = state
            .requested_at
            .is_some_and(|at| now.saturating_duration_since(at) < self.window);
        if !within_window {
            state.dormant = true;
            return Due::Dormant;
        }
        let idle = state
            .judged_at
            .is_none_or(|at| now.saturating_duration_since(at) >= self.period);
        if !idle || state.kept.is_empty() {
            return Due::NotYet;
        }
        let at = state.turn % state.kept.len();
        state.turn = at + 1;
        state.judged_at = Some(now);
        Due::Body(state.kept[at].1.clone())
    }

    /// Returns once a request was judged after [`Due::Dormant`] was last answered (at once if one
    /// already was).
    pub async fn resumed(&self) {
        self.wake.notified().await;
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
    const WINDOW: Duration = Duration::from_secs(60);

    fn kind<'a>(operation: &'a str, resource: &'a str) -> Kind<'a> {
        Kind {
            operation,
            group: "",
            resource,
            subresource: "",
        }
    }

    /// The first byte of the body due at `at`.
    fn rehearsed(rehearsal: &Rehearsal, at: Instant) -> u8 {
        match rehearsal.due(at) {
            Due::Body(body) => body[0],
            other => panic!("no body due: {other:?}"),
        }
    }

    #[test]
    fn a_judged_body_is_rehearsed_once_the_path_was_idle_for_a_period() {
        let rehearsal = Rehearsal::new(PERIOD, WINDOW);
        let body = Bytes::from_static(b"{\"review\":1}");
        rehearsal.judged(Some(&body), kind("DELETE", "pods"));
        assert_eq!(
            rehearsal.due(Instant::now()),
            Due::NotYet,
            "judged just now: warm"
        );
        let later = Instant::now() + PERIOD;
        assert_eq!(rehearsal.due(later), Due::Body(body.clone()));
        assert_eq!(
            rehearsal.due(later),
            Due::NotYet,
            "the rehearsal itself counts as judged"
        );
        assert_eq!(rehearsal.due(later + PERIOD), Due::Body(body));
    }

    #[test]
    fn the_kinds_judged_last_are_rehearsed_in_turn_each_with_its_latest_body() {
        let rehearsal = Rehearsal::new(PERIOD, WINDOW);
        let body = |n: u8| Bytes::from(vec![n]);
        rehearsal.judged(Some(&body(1)), kind("DELETE", "pods"));
        rehearsal.judged(Some(&body(2)), kind("UPDATE", "statefulsets"));
        rehearsal.judged(Some(&body(3)), kind("DELETE", "pods"));
        let mut at = Instant::now();
        let mut next = || {
            at += PERIOD;
            rehearsed(&rehearsal, at)
        };
        assert_eq!([next(), next(), next(), next()], [2, 3, 2, 3]);
        for n in 4..=8 {
            rehearsal.judged(Some(&body(n)), kind("DELETE", &format!("kind-{n}")));
        }
        let mut at = Instant::now();
        let mut seen: Vec<u8> = (0..KEPT_KINDS)
            .map(|_| {
                at += PERIOD;
                rehearsed(&rehearsal, at)
            })
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, [5, 6, 7, 8], "the {KEPT_KINDS} kinds judged last");
    }

    #[test]
    fn secrets_large_and_unkept_bodies_are_not_kept_but_still_count_as_judged() {
        let rehearsal = Rehearsal::new(PERIOD, WINDOW);
        let pod = Bytes::from_static(b"{\"pod\":1}");
        rehearsal.judged(Some(&pod), kind("DELETE", "pods"));
        let after_pod = Instant::now();
        rehearsal.judged(
            Some(&Bytes::from_static(b"{\"secret\":1}")),
            kind("DELETE", "secrets"),
        );
        let large = Bytes::from(vec![b' '; MAX_KEPT_BYTES + 1]);
        rehearsal.judged(Some(&large), kind("UPDATE", "configmaps"));
        rehearsal.judged(None, kind("UPDATE", "deployments"));
        assert_eq!(
            rehearsal.due(after_pod + PERIOD),
            Due::NotYet,
            "judged after the pod: the unkept requests count as judged"
        );
        assert_eq!(rehearsal.due(Instant::now() + PERIOD), Due::Body(pod.clone()));
        assert_eq!(
            rehearsal.due(Instant::now() + PERIOD * 2),
            Due::Body(pod),
            "the only body kept"
        );
    }

    #[test]
    fn rehearsals_stop_a_window_after_the_last_request_and_a_request_resumes_them() {
        let window = Duration::from_millis(50);
        let rehearsal = Rehearsal::new(PERIOD, window);
        assert_eq!(rehearsal.due(Instant::now()), Due::Dormant, "nothing judged yet");
        let body = Bytes::from_static(b"{}");
        rehearsal.judged(Some(&body), kind("DELETE", "pods"));
        let requested = Instant::now();
        let mut at = requested;
        while at + PERIOD < requested + window {
            at += PERIOD;
            assert_eq!(rehearsal.due(at), Due::Body(body.clone()), "within the window");
        }
        assert_eq!(
            rehearsal.due(requested + window + PERIOD),
            Due::Dormant,
            "rehearsals do not extend the window"
        );
        rehearsal.judged(Some(&body), kind("DELETE", "pods"));
        assert_eq!(rehearsal.due(Instant::now() + PERIOD), Due::Body(body));
    }

    #[tokio::test]
    async fn a_judged_request_wakes_the_dormant_rehearsals_and_only_then() {
        let rehearsal = Rehearsal::new(PERIOD, WINDOW);
        assert_eq!(rehearsal.due(Instant::now()), Due::Dormant);
        let wait = Duration::from_millis(50);
        assert!(
            tokio::time::timeout(wait, rehearsal.resumed()).await.is_err(),
            "nothing judged: still dormant"
        );
        rehearsal.judged(Some(&Bytes::from_static(b"{}")), kind("DELETE", "pods"));
        assert!(
            tokio::time::timeout(wait, rehearsal.resumed()).await.is_ok(),
            "the request judged after dormancy was told wakes the task"
        );
        rehearsal.judged(Some(&Bytes::from_static(b"{}")), kind("DELETE", "pods"));
        assert!(
            tokio::time::timeout(wait, rehearsal.resumed()).await.is_err(),
            "a request while awake leaves no wake-up behind"
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
        let rehearsal = Rehearsal::off();
        rehearsal.judged(Some(&Bytes::from_static(b"{}")), kind("DELETE", "pods"));
        assert!(!rehearsal.enabled());
        assert_eq!(
            rehearsal.due(Instant::now() + Duration::from_secs(60)),
            Due::Dormant
        );
    }
}
