//! Self-preservation (§6.8): when fewer heartbeats arrive than expected, stop expiring leases,
//! on the theory that the network failed rather than every client at once.
//!
//! The numbers are Eureka's: E, the expected number of clients sending renews; T, the renews per
//! minute below which expiry stops; and a one-minute bucket of counted renews. The caller rolls
//! the bucket every 60 s, so the rule itself never looks at a clock.

use crate::model::Millis;
use crate::registry::{Registry, RegistryPolicy, SelfPreservation};

/// Eureka's `numberOfRenewsPerMinThreshold`:
/// `T = floor(E × (60 / expected_interval) × pct)`.
///
/// The float operations run in the same order as Java's `updateRenewsPerMinThreshold`, so
/// rounding (e.g. 20 × 0.85) lands on the same integer.
pub fn renews_threshold(expected_clients: u32, expected_interval_secs: u32, pct: f64) -> u32 {
    let renews_per_client_per_min = 60.0 / f64::from(expected_interval_secs.max(1));
    (f64::from(expected_clients) * renews_per_client_per_min * pct) as u32
}

/// Eureka's `isLeaseExpirationEnabled`. With T = 0 nothing ever expires: Netflix's server
/// starts that way until its threshold task runs.
pub fn lease_expiration_enabled(
    self_preservation_enabled: bool,
    renews_threshold: u32,
    renews_last_min: u64,
) -> bool {
    !self_preservation_enabled
        || (renews_threshold > 0 && renews_last_min > u64::from(renews_threshold))
}

/// The mutable half of self-preservation, owned by the registry.
#[derive(Debug)]
pub(crate) struct RenewalCounters {
    /// E.
    expected_clients: u32,
    /// T, recomputed whenever E changes.
    threshold: u32,
    /// Renews in the current, still-open minute.
    renews_this_min: u64,
    /// Renews in the previous complete minute: Eureka's `renewsLastMin` (`MeasuredRate`).
    renews_last_min: u64,
    /// Set by open-for-traffic; 0 before. Only the dashboard banner uses it.
    startup_time: Millis,
}

impl RenewalCounters {
    pub(crate) fn new(policy: &RegistryPolicy) -> RenewalCounters {
        let mut counters = RenewalCounters {
            expected_clients: 0,
            threshold: 0,
            renews_this_min: 0,
            renews_last_min: 0,
            startup_time: 0,
        };
        counters.set_expected_clients(policy.expected_number_of_clients_sending_renews, policy);
        counters
    }

    fn set_expected_clients(&mut self, expected_clients: u32, policy: &RegistryPolicy) {
        self.expected_clients = expected_clients;
        self.threshold = renews_threshold(
            expected_clients,
            policy.expected_client_renewal_interval_secs,
            policy.renewal_percent_threshold,
        );
    }

    /// A brand-new registration. E only grows when it is already positive: a Netflix server
    /// that opened with E = 0 stays at 0 until the threshold task runs (Eureka's `register`).
    pub(crate) fn client_registered(&mut self, policy: &RegistryPolicy) {
        if self.expected_clients > 0 {
            self.set_expected_clients(self.expected_clients + 1, policy);
        }
    }

    /// A cancel or an eviction (Eureka's `internalCancel`).
    pub(crate) fn client_cancelled(&mut self, policy: &RegistryPolicy) {
        if self.expected_clients > 0 {
            self.set_expected_clients(self.expected_clients - 1, policy);
        }
    }

    pub(crate) fn count_renew(&mut self) {
        self.renews_this_min += 1;
    }

    pub(crate) fn lease_expiration_enabled(&self, policy: &RegistryPolicy) -> bool {
        lease_expiration_enabled(
            policy.enable_self_preservation,
            self.threshold,
            self.renews_last_min,
        )
    }
}

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
