//! Self-preservation (§6.8): when fewer heartbeats arrive than expected, stop expiring leases,
//! on the theory that the network failed rather than every client at once.
//!
//! The numbers are Eureka's: E, the expected number of clients sending renews; T, the renews per
//! minute below which expiry stops; and a one-minute bucket of counted renews. The caller rolls
//! the bucket every 60 s, so the rule itself never looks at a clock.
//!
//! This file holds the operations (Eureka's `openForTraffic`, the renew bucket the server rolls,
//! `updateRenewsPerMinThreshold`, `isLeaseExpirationEnabled`); the formulas and the counters are
//! `renewal_counters.rs`.

use crate::model::Millis;
use crate::outcomes::SelfPreservation;
use crate::registry::Registry;

impl Registry {
    /// Eureka's `openForTraffic(count)`: sets E (0 is replaced by 1, Spring's default-open-for-traffic-count), T, start time.
    pub fn open_for_traffic(&mut self, count: u32, now: Millis) {
        let expected_clients = count.max(1);
        self.renewals
            .set_expected_clients(expected_clients, &self.policy);
        self.renewals.startup_time = now;
    }

    /// Roll the one-minute renew bucket (called every 60 s).
    pub fn roll_renews_bucket(&mut self) {
        self.renewals.renews_last_min = std::mem::take(&mut self.renewals.renews_this_min);
    }

    /// The 15-minute task: E = instance count if count > pct × E or self-preservation is off.
    ///
    /// Counts this registry's own leases, expired-not-evicted ones included (Eureka counts its
    /// embedded client's copy, which holds the same instances once replication has settled).
    pub fn update_renewal_threshold(&mut self) {
        let count = self.registry_size();
        self.update_renewal_threshold_from(count);
    }

    /// The 15-minute task with an instance count supplied by the caller, e.g. from the
    /// server's own client fetch as Eureka does.
    pub fn update_renewal_threshold_from(&mut self, instance_count: usize) {
        let expected = f64::from(self.renewals.expected_clients);
        let grew_enough = instance_count as f64 > self.policy.renewal_percent_threshold * expected;
        if grew_enough || !self.policy.enable_self_preservation {
            let count = u32::try_from(instance_count).unwrap_or(u32::MAX);
            self.renewals.set_expected_clients(count, &self.policy);
        }
    }

    pub fn self_preservation(&self) -> SelfPreservation {
        SelfPreservation {
            expected_clients: self.renewals.expected_clients,
            renews_threshold: self.renewals.threshold,
            renews_last_min: self.renewals.renews_last_min,
            lease_expiration_enabled: self.renewals.lease_expiration_enabled(&self.policy),
        }
    }

    /// The dashboard's `isBelowRenewThreshold`: renews at or under T, more than
    /// `wait_time_in_ms_when_sync_empty` (5 min by default) after open-for-traffic.
    pub fn is_below_renew_threshold(
        &self,
        now: Millis,
        wait_time_in_ms_when_sync_empty: Millis,
    ) -> bool {
        let renewals = &self.renewals;
        renewals.renews_last_min <= u64::from(renewals.threshold)
            && renewals.startup_time > 0
            && now > renewals.startup_time + wait_time_in_ms_when_sync_empty
    }

    pub(crate) fn lease_expiration_enabled(&self) -> bool {
        self.renewals.lease_expiration_enabled(&self.policy)
    }
}

#[cfg(test)]
mod tests;
