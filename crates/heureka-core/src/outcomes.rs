//! What registry operations report back, as plain values the server maps to HTTP answers,
//! log lines and dashboard numbers. Protocol outcomes are types here, never errors.

use crate::model::Instance;

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

impl RenewOutcome {
    /// Eureka's status code for this heartbeat (spec §3.9), on the REST endpoint and in a peer
    /// batch's answer alike. A plain number: the server turns it into HTTP.
    pub fn status_code(&self) -> u16 {
        match self {
            RenewOutcome::Renewed => 200,
            // Both ask the client to register again, which is all a 404 says to it.
            RenewOutcome::NotFound | RenewOutcome::ClientNewer => 404,
            RenewOutcome::RegistryNewer(_) => 409,
        }
    }
}

/// Eureka's status code for a write addressed to one instance (cancel, setting or removing a
/// status override, a metadata update), on the REST endpoint and in a peer batch's answer
/// alike: 200, or 404 when the registry holds no such instance (`found` is what the
/// registry's call returned).
pub fn instance_write_status_code(found: bool) -> u16 {
    if found {
        200
    } else {
        404
    }
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

#[cfg(test)]
mod tests;
