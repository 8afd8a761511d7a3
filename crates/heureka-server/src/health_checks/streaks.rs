//! From probe results to verdicts (pure, time passed in): consecutive failures before DOWN,
//! consecutive passes before back, and the guard against this server's own network.
//!
//! The guard is to health checks what self-preservation is to heartbeats. When this server's
//! network fails, every probe fails at once, and marking every instance DOWN would stop all
//! traffic in the cluster for a fault that is ours. So when more than
//! `self-suspicion-percent` of the instances that were passing have failed their latest probe
//! (and at least [`MIN_SUSPICIOUS_FAILURES`] of them), the server marks none DOWN until the
//! share falls again. It needs `failures-before-down` ≥ 2 to see a whole interval of probes
//! before the first verdict: with 1, the first instances probed are marked before the pattern
//! shows.

use heureka_core::{Health, Millis};

/// Fewer failures than this never look like our own network: two dead instances of three
/// are two dead instances.
pub(crate) const MIN_SUSPICIOUS_FAILURES: usize = 3;

/// The thresholds, from `heureka.health-checks.*`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Thresholds {
    pub(crate) failures_before_down: u32,
    pub(crate) successes_before_up: u32,
    pub(crate) self_suspicion_percent: u32,
}

/// One instance's run of results, as this server probed it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Streak {
    pub(crate) failures: u32,
    pub(crate) successes: u32,
    /// Whether the latest probe passed; `None` before the first.
    pub(crate) last_passed: Option<bool>,
    /// Since when its probes have been failing without a pass.
    pub(crate) failing_since: Option<Millis>,
}

impl Streak {
    /// Books a probe's result at `now`.
    pub(crate) fn record(&mut self, passed: bool, now: Millis) {
        self.last_passed = Some(passed);
        if passed {
            self.successes = self.successes.saturating_add(1);
            self.failures = 0;
            self.failing_since = None;
        } else {
            self.failures = self.failures.saturating_add(1);
            self.successes = 0;
            self.failing_since.get_or_insert(now);
        }
    }

    /// The verdict to write now, if the streak has earned a change from `current`: never a
    /// failing one while the server suspects itself.
    pub(crate) fn flip(
        &self,
        current: Health,
        thresholds: &Thresholds,
        suspected: bool,
    ) -> Option<Health> {
        match current {
            Health::Passing
                if self.failures >= thresholds.failures_before_down.max(1) && !suspected =>
            {
                Some(Health::Failing)
            }
            Health::Failing if self.successes >= thresholds.successes_before_up.max(1) => {
                Some(Health::Passing)
            }
            _ => None,
        }
    }
}

/// Whether the latest results look like this server's own network failing: of the instances
/// still passing (by verdict) that have been probed, how many failed their latest probe.
pub(crate) fn suspects_itself(failed: usize, probed: usize, percent: u32) -> bool {
    failed >= MIN_SUSPICIOUS_FAILURES && failed * 100 > probed * percent as usize
}

#[cfg(test)]
mod tests;
