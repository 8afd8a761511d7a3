//! The numbers behind self-preservation (§6.8): Eureka's formulas for T and for whether leases
//! expire, and the renew counters the registry keeps (E, T, the one-minute buckets). The
//! operations that read and roll them are `self_preservation.rs`.

use crate::model::Millis;
use crate::policy::RegistryPolicy;

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
    pub(crate) expected_clients: u32,
    /// T, recomputed whenever E changes.
    pub(crate) threshold: u32,
    /// Renews in the current, still-open minute.
    pub(crate) renews_this_min: u64,
    /// Renews in the previous complete minute: Eureka's `renewsLastMin` (`MeasuredRate`).
    pub(crate) renews_last_min: u64,
    /// Set by open-for-traffic; 0 before. Only the dashboard banner uses it.
    pub(crate) startup_time: Millis,
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

    pub(crate) fn set_expected_clients(&mut self, expected_clients: u32, policy: &RegistryPolicy) {
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
