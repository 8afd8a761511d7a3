//! One region's state, owned by its fetcher task and moved on by what each fetch brought, with
//! the time passed in: the view held, the view served, the changes served in deltas, the phase
//! (`starting`, `ready`, `stale`, `dropped`) and the counts. Pure.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use heureka_core::{Applications, Instance, Millis};
use heureka_wire::FetchCounts;

use super::view::View;

/// Where a region stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No fetch has succeeded yet.
    Starting,
    /// The last fetch succeeded.
    Ready,
    /// The last fetch failed; the last view is still served.
    Stale,
    /// The last success is older than `stale-after`: nothing is served.
    Dropped,
}

impl Phase {
    pub(crate) const ALL: [Phase; 4] =
        [Phase::Starting, Phase::Ready, Phase::Stale, Phase::Dropped];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Phase::Starting => "starting",
            Phase::Ready => "ready",
            Phase::Stale => "stale",
            Phase::Dropped => "dropped",
        }
    }
}

/// What kind of fetch was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FetchKind {
    Full,
    Delta,
}

/// How a fetch went, for the counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Ok,
    Failed,
    /// A delta whose `apps__hashcode` disagreed with the view it was applied to.
    Mismatch,
}

impl Outcome {
    pub(crate) const ALL: [Outcome; 3] = [Outcome::Ok, Outcome::Failed, Outcome::Mismatch];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed => "failed",
            Outcome::Mismatch => "mismatch",
        }
    }
}

impl FetchKind {
    pub(crate) const ALL: [FetchKind; 2] = [FetchKind::Full, FetchKind::Delta];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FetchKind::Full => "full",
            FetchKind::Delta => "delta",
        }
    }
}

/// Fetches by kind and outcome: `tally[kind][outcome]`, in the orders of their `ALL`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally([[u64; 3]; 2]);

impl Tally {
    fn count(&mut self, kind: FetchKind, outcome: Outcome) {
        self.0[kind as usize][outcome as usize] += 1;
    }

    pub(crate) fn get(&self, kind: FetchKind, outcome: Outcome) -> u64 {
        self.0[kind as usize][outcome as usize]
    }

    /// The totals `GET {base}/regions` shows.
    pub(crate) fn counts(&self) -> FetchCounts {
        let sum = |kind: FetchKind| self.0[kind as usize].iter().sum();
        FetchCounts {
            full: sum(FetchKind::Full),
            delta: sum(FetchKind::Delta),
            mismatches: self.get(FetchKind::Delta, Outcome::Mismatch),
            failures: self.get(FetchKind::Full, Outcome::Failed)
                + self.get(FetchKind::Delta, Outcome::Failed),
        }
    }
}

/// A change of what a region serves, kept for its deltas: the instance as it is now (or as it
/// was when it went), stamped with when this server saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Changed {
    pub(crate) at: Millis,
    pub(crate) instance: Instance,
}

/// What readers see of a region: replaced whole after every fetch, never changed in place.
#[derive(Clone, Debug)]
pub(crate) struct Published {
    pub(crate) phase: Phase,
    /// Whether a fetch has ever succeeded (Eureka's `isReadyForServingData`).
    pub(crate) ever_ready: bool,
    /// What is served: the view held while ready or stale, nothing otherwise.
    pub(crate) served: Arc<View>,
    /// The changes of what is served within the delta retention, oldest first, each with its
    /// action (`actionType` set).
    pub(crate) changes: Arc<Vec<Instance>>,
    pub(crate) last_success: Option<Millis>,
    pub(crate) last_attempt: Option<Millis>,
    pub(crate) error: Option<String>,
    pub(crate) fetches: Tally,
    /// Moves when `served` or `changes` does, and only then: a fetch that brought nothing new
    /// leaves the merged documents built.
    pub(crate) revision: u64,
}

impl Default for Published {
    fn default() -> Published {
        Published {
            phase: Phase::Starting,
            ever_ready: false,
            served: Arc::default(),
            changes: Arc::default(),
            last_success: None,
            last_attempt: None,
            error: None,
            fetches: Tally::default(),
            revision: 0,
        }
    }
}

/// One region's state, held by its task.
#[derive(Debug)]
pub(crate) struct RegionState {
    phase: Phase,
    ever_ready: bool,
    /// The region's registry as the last successful fetch left it.
    held: View,
    served: Arc<View>,
    changes: VecDeque<Changed>,
    last_success: Option<Millis>,
    last_attempt: Option<Millis>,
    error: Option<String>,
    fetches: Tally,
    revision: u64,
    stale_after_ms: i64,
    retention_ms: i64,
}

impl RegionState {
    pub(crate) fn new(stale_after_ms: i64, retention_ms: i64) -> RegionState {
        RegionState {
            phase: Phase::Starting,
            ever_ready: false,
            held: View::default(),
            served: Arc::default(),
            changes: VecDeque::new(),
            last_success: None,
            last_attempt: None,
            error: None,
            fetches: Tally::default(),
            revision: 0,
            stale_after_ms,
            retention_ms,
        }
    }

    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    /// Whether the next fetch must be full: nothing held yet (or nothing held any more).
    pub(crate) fn needs_full(&self) -> bool {
        self.held.instance_count() == 0 || self.phase == Phase::Dropped
    }

    /// A full document arrived. Returns the phase left, when it changed.
    pub(crate) fn full_fetched(&mut self, document: &Applications, now: Millis) -> Option<Phase> {
        self.fetches.count(FetchKind::Full, Outcome::Ok);
        self.held = View::from_document(document);
        self.succeeded(now)
    }

    /// A delta arrived: applied to a copy of the view held; `Err` when its hashcode
    /// disagrees, and then nothing changes (a full fetch follows).
    pub(crate) fn delta_fetched(
        &mut self,
        delta: &Applications,
        now: Millis,
    ) -> Result<Option<Phase>, ()> {
        let mut next = self.held.clone();
        if !next.apply_delta(delta) {
            self.fetches.count(FetchKind::Delta, Outcome::Mismatch);
            self.last_attempt = Some(now);
            return Err(());
        }
        self.fetches.count(FetchKind::Delta, Outcome::Ok);
        self.held = next;
        Ok(self.succeeded(now))
    }

    /// A fetch failed. Returns the phase left, when it changed.
    pub(crate) fn failed(&mut self, kind: FetchKind, error: String, now: Millis) -> Option<Phase> {
        self.fetches.count(kind, Outcome::Failed);
        self.last_attempt = Some(now);
        self.error = Some(error);
        let before = self.phase;
        if self.phase == Phase::Ready {
            self.phase = Phase::Stale;
        }
        self.expire(now);
        (self.phase != before).then_some(before)
    }

    /// A delta was not answered with 2xx: counted, and a full fetch follows (as in Eureka),
    /// whose outcome moves the phase.
    pub(crate) fn delta_refused(&mut self, now: Millis) {
        self.fetches.count(FetchKind::Delta, Outcome::Failed);
        self.last_attempt = Some(now);
    }

    /// Moves time on: drops the view once the last success is older than `stale-after`, and
    /// forgets changes past the retention. Returns the phase left, when it changed.
    pub(crate) fn tick(&mut self, now: Millis) -> Option<Phase> {
        let before = self.phase;
        self.expire(now);
        (self.phase != before).then_some(before)
    }

    fn expire(&mut self, now: Millis) {
        let old = self
            .last_success
            .is_some_and(|at| now - at > self.stale_after_ms);
        if old && matches!(self.phase, Phase::Ready | Phase::Stale) {
            self.phase = Phase::Dropped;
            self.serve(View::default(), now);
        }
        let kept = self.changes.len();
        while self
            .changes
            .front()
            .is_some_and(|change| now - change.at > self.retention_ms)
        {
            self.changes.pop_front();
        }
        if self.changes.len() != kept {
            self.revision += 1;
        }
    }

    fn succeeded(&mut self, now: Millis) -> Option<Phase> {
        let before = self.phase;
        self.phase = Phase::Ready;
        self.ever_ready = true;
        self.last_success = Some(now);
        self.last_attempt = Some(now);
        self.error = None;
        self.serve(self.held.clone(), now);
        self.expire(now);
        (self.phase != before).then_some(before)
    }

    /// Serves `next`, keeping what differs from what was served as changes.
    fn serve(&mut self, next: View, now: Millis) {
        let differences = self.served.differences(&next);
        self.served = Arc::new(next);
        if differences.is_empty() {
            return;
        }
        self.revision += 1;
        // Only the latest change of an instance is served, as in the local delta: one pass
        // drops the earlier ones (a first full fetch makes every instance a change).
        let changed: HashSet<(&str, &str)> = differences
            .iter()
            .map(|d| (d.instance.app.as_str(), d.instance.id()))
            .collect();
        self.changes.retain(|change| {
            !changed.contains(&(change.instance.app.as_str(), change.instance.id()))
        });
        for difference in differences {
            let mut instance = difference.instance;
            instance.action_type = Some(difference.action);
            self.changes.push_back(Changed { at: now, instance });
        }
    }

    /// What readers see now.
    pub(crate) fn published(&self) -> Published {
        Published {
            phase: self.phase,
            ever_ready: self.ever_ready,
            served: self.served.clone(),
            changes: Arc::new(self.changes.iter().map(|c| c.instance.clone()).collect()),
            last_success: self.last_success,
            last_attempt: self.last_attempt,
            error: self.error.clone(),
            fetches: self.fetches,
            revision: self.revision,
        }
    }
}

#[cfg(test)]
mod tests;
