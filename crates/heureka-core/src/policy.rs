//! What the registry is configured with: the knobs its rules read, built by the server from
//! `eureka.server.*` configuration.

use crate::lease::LeaseExpiry;
use crate::limits::Limits;
use crate::model::Millis;

/// The knobs the registry's rules depend on, built by the server from its configuration.
#[derive(Clone, Debug)]
pub struct RegistryPolicy {
    pub lease_expiry: LeaseExpiry,
    pub enable_self_preservation: bool,
    /// `renewal-percent-threshold`, 0.85.
    pub renewal_percent_threshold: f64,
    /// `expected-client-renewal-interval-seconds`, 30.
    pub expected_client_renewal_interval_secs: u32,
    /// `retention-time-in-m-s-in-delta-queue`, 180 000.
    pub delta_retention_ms: Millis,
    /// `eureka.instance.registry.expected-number-of-clients-sending-renews`, 1.
    pub expected_number_of_clients_sending_renews: u32,
    /// `heureka.replication.tombstone-retention-ms`: how long a removed instance's parts are
    /// kept (`tombstones.rs`), 300 000.
    pub tombstone_retention_ms: Millis,
    /// `heureka.limits.*` (`limits.rs`).
    pub limits: Limits,
}

impl Default for RegistryPolicy {
    fn default() -> Self {
        RegistryPolicy {
            lease_expiry: LeaseExpiry::Documented,
            enable_self_preservation: true,
            renewal_percent_threshold: 0.85,
            expected_client_renewal_interval_secs: 30,
            delta_retention_ms: 180_000,
            expected_number_of_clients_sending_renews: 1,
            tombstone_retention_ms: 300_000,
            limits: Limits::default(),
        }
    }
}
