//! Retention: what the registry forgets with time, on the server's purge timer (Eureka's
//! `deltaRetentionTimer`): delta-queue items past `retention-time-in-m-s-in-delta-queue`,
//! overrides idle for an hour, tombstones past their retention, and shared names nothing
//! carries any more.

use crate::model::Millis;
use crate::registry::Registry;

impl Registry {
    /// Drops delta-queue items older than the retention window.
    ///
    /// Bumps [`Registry::version`] when items were dropped, because the delta document changed;
    /// also forgets status overrides that idled out (Eureka's map expires after an hour).
    pub fn purge_recently_changed(&mut self, now: Millis) {
        let purged = self
            .recently_changed
            .purge(now, self.policy.delta_retention_ms);
        if purged > 0 {
            self.versions.other_change();
        }
        self.overrides.purge_idle(now);
        self.tombstones
            .purge(now, self.policy.tombstone_retention_ms);
        // Run with the purge timer, so names nothing carries any more stay at most one round.
        let apps = &self.apps;
        self.names
            .purge_unused(|name| apps.get(name).is_some_and(|leases| leases.is_empty()));
    }
}
