//! API STUB — replaced by the real implementation.

use crate::model::{Application, Applications, Instance, InstanceStatus, Millis};

/// Who sent a write: a client, or a peer server replicating one (Eureka's `isReplication`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Client,
    Peer,
}

/// How a lease's expiry is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseExpiry {
    /// Expires `durationInSecs` after the last renewal, as Eureka documents it.
    Documented,
    /// Eureka's won't-fix bug: a renewed lease expires 2 × duration after the last renewal.
    LegacyDoubleDuration,
}

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
        }
    }
}

/// Result of a heartbeat, before any HTTP mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RenewOutcome {
    /// 200.
    Renewed,
    /// Unknown instance, or the override rules say `UNKNOWN`: the client must re-register (404).
    NotFound,
    /// The client's `lastDirtyTimestamp` is newer than ours: ask it to re-register (404).
    ClientNewer,
    /// Our copy is newer and the caller is a peer: send ours back (409 + body).
    RegistryNewer(Box<Instance>),
}

/// What one eviction run did, with the numbers behind it (for the log line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvictionReport {
    /// False when self-preservation held eviction back; nothing was evicted then.
    pub lease_expiration_enabled: bool,
    pub registry_size: usize,
    pub expired: usize,
    pub eviction_limit: usize,
    /// `(app, id)` of every evicted lease.
    pub evicted: Vec<(String, String)>,
}

/// The self-preservation numbers, for logs, the dashboard and the status endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SelfPreservation {
    /// E: expected number of clients sending renews.
    pub expected_clients: u32,
    /// T: renews per minute below which expiry stops.
    pub renews_threshold: u32,
    /// Renews counted in the previous complete minute.
    pub renews_last_min: u64,
    /// `isLeaseExpirationEnabled()`: false means the server is in self-preservation.
    pub lease_expiration_enabled: bool,
}

/// The registry: applications → instances → leases, plus the delta queue and the
/// self-preservation counters.
#[derive(Debug)]
pub struct Registry {}

/// `apps__hashcode` over a set of statuses: `STATUS_count_` per status present, by status name.
pub fn apps_hashcode<'a>(statuses: impl IntoIterator<Item = &'a InstanceStatus>) -> String {
    let _ = statuses;
    unimplemented!()
}

#[allow(unused_variables)]
impl Registry {
    pub fn new(policy: RegistryPolicy, now: Millis) -> Registry {
        unimplemented!()
    }
    /// Eureka's `openForTraffic(count)`: sets E (0 is replaced by 1, Spring's default-open-for-traffic-count), T, start time.
    pub fn open_for_traffic(&mut self, count: u32, now: Millis) {
        unimplemented!()
    }
    /// Register or re-register (§6.3). The instance has been validated by the caller.
    pub fn register(&mut self, instance: Instance, origin: Origin, now: Millis) {
        unimplemented!()
    }
    /// Heartbeat (§6.4 + the lastDirtyTimestamp rules of §3.9).
    pub fn renew(
        &mut self,
        app: &str,
        id: &str,
        last_dirty_timestamp: Option<Millis>,
        overridden_status: Option<InstanceStatus>,
        origin: Origin,
        now: Millis,
    ) -> RenewOutcome {
        unimplemented!()
    }
    /// Cancel (§6.5). False when there was no such lease.
    pub fn cancel(&mut self, app: &str, id: &str, origin: Origin, now: Millis) -> bool {
        unimplemented!()
    }
    /// `statusUpdate` (§6.7). False when unknown (404) — including expired-not-evicted leases.
    pub fn set_status_override(&mut self, app: &str, id: &str, status: InstanceStatus, last_dirty_timestamp: Option<Millis>, origin: Origin, now: Millis) -> bool {
        unimplemented!()
    }
    /// `deleteStatusOverride` (§6.7). `new_status` None means UNKNOWN.
    pub fn delete_status_override(&mut self, app: &str, id: &str, new_status: Option<InstanceStatus>, last_dirty_timestamp: Option<Millis>, origin: Origin, now: Millis) -> bool {
        unimplemented!()
    }
    /// Merge metadata in place, then re-register the stored instance (§3.13). False when unknown.
    pub fn update_metadata(&mut self, app: &str, id: &str, entries: Vec<(String, String)>, now: Millis) -> bool {
        unimplemented!()
    }
    /// One eviction run (§6.12). `compensation_ms` as Eureka computes it; `seed` drives the random choice.
    pub fn evict(&mut self, now: Millis, compensation_ms: Millis, seed: u64) -> EvictionReport {
        unimplemented!()
    }
    /// Drops delta-queue items older than the retention window.
    pub fn purge_recently_changed(&mut self, now: Millis) {
        unimplemented!()
    }
    /// Roll the one-minute renew bucket (called every 60 s).
    pub fn roll_renews_bucket(&mut self) {
        unimplemented!()
    }
    /// The 15-minute task: E = instance count if count > pct × E or self-preservation is off.
    pub fn update_renewal_threshold(&mut self) {
        unimplemented!()
    }
    pub fn self_preservation(&self) -> SelfPreservation {
        unimplemented!()
    }
    /// Bumped on every change a reader can see (not on plain renews). Response caches key on it.
    pub fn version(&self) -> u64 {
        unimplemented!()
    }
    /// Full registry (`versions__delta` 1), apps with no instances omitted.
    pub fn applications(&self) -> Applications {
        unimplemented!()
    }
    /// The delta document (§6.9): hash of the full registry, `versions__delta` = a counter.
    pub fn delta(&self) -> Applications {
        unimplemented!()
    }
    /// One application, None if unknown or empty.
    pub fn application(&self, app: &str) -> Option<Application> {
        unimplemented!()
    }
    /// One instance; None if unknown or (when expiration is enabled) expired.
    pub fn instance(&self, app: &str, id: &str, now: Millis) -> Option<Instance> {
        unimplemented!()
    }
    /// First instance with this id across all apps, same filter.
    pub fn instance_by_id(&self, id: &str, now: Millis) -> Option<Instance> {
        unimplemented!()
    }
    /// VIP (or secure VIP when `secure`) selection, `versions__delta` -1.
    pub fn vip(&self, vip: &str, secure: bool) -> Applications {
        unimplemented!()
    }
}
