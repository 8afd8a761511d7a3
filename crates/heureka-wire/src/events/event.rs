//! The events of the stream as values: what happened, to which instance or to the server, and
//! each event's name in Eureka's and Spring's vocabulary.

use heureka_core::{Instance, InstanceStatus, Millis, Origin};

use crate::audit::AuditEntry;

/// One event of the stream. `seq` increases by one per event the server sends, in the order
/// the registry made the changes.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub seq: u64,
    pub at: Millis,
    pub body: EventBody,
}

#[derive(Clone, Debug, PartialEq)]
pub enum EventBody {
    Instance(Box<InstanceEvent>),
    /// Heartbeats of one period, counted per application (never one event per heartbeat).
    Renewals {
        period_ms: u64,
        /// Upper-cased application names and their renewals in the period, sorted by name.
        apps: Vec<(String, u64)>,
        self_preservation: SelfPreservationStatus,
    },
    /// Expiry stopped (`entered`) or resumed.
    SelfPreservation {
        entered: bool,
        status: SelfPreservationStatus,
    },
    /// The health checks suspected this server's own network (most checks failing at
    /// once) and stopped marking instances DOWN (`suspended`), or resumed.
    HealthChecks {
        suspended: bool,
        /// Of the checks in the last round, how many failed, and why it suspects itself.
        failed: u64,
        checked: u64,
        reason: String,
    },
    /// A peer accepted a batch again (`up`) or stopped accepting them.
    Peer {
        up: bool,
        url: String,
        error: Option<String>,
    },
    /// A remote region's view began to be served (`Ready`: its first successful fetch, or one
    /// after it was dropped), a fetch failed after a success (`Stale`: its last view is still
    /// served), or its last success grew older than `heureka.regions.stale-after` (`Dropped`:
    /// no longer served).
    Region {
        state: RegionEventKind,
        region: String,
        /// The region's server, without credentials.
        url: String,
        error: Option<String>,
    },
    /// A client registered an instance id that a live lease held at another endpoint; the
    /// `registered` event that follows carries the instance as it is now.
    Takeover {
        app: String,
        id: String,
        /// Where the instance was, and where the registration moved it: `ip:port (host)`.
        previous: String,
        incoming: String,
    },
    /// An administrative act, or a minute's refusals from one address and user
    /// (`audit.rs`); the event's `at` is the entry's.
    Audit(Box<AuditEntry>),
    /// The subscriber fell behind and `missed` events were dropped for it: re-fetch.
    Lagged {
        missed: u64,
    },
}

/// How a remote region's state changed (see [`EventBody::Region`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionEventKind {
    Ready,
    Stale,
    Dropped,
}

/// What happened to one instance, in Eureka's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstanceEventKind {
    Registered,
    Cancelled,
    Evicted,
    /// An override set or removed, or a status the override rules changed on a heartbeat.
    StatusChanged,
    MetadataChanged,
    /// The server's health checks found the instance failing (it reads DOWN now).
    HealthCheckFailed,
    /// The server's health checks found the instance passing again.
    HealthCheckRecovered,
}

#[derive(Clone, Debug, PartialEq)]
pub struct InstanceEvent {
    pub kind: InstanceEventKind,
    pub app: String,
    pub id: String,
    pub origin: Origin,
    /// The status after the change (for a removal, as the instance was when it went).
    pub status: InstanceStatus,
    pub overridden_status: InstanceStatus,
    /// For `status-changed`: `override`, `override-removed` or `heartbeat`.
    pub cause: Option<&'static str>,
    /// The instance as `/apps` shows it after the change; absent for removals.
    pub instance: Option<Instance>,
}

/// The self-preservation numbers (spec §6.8) and the two switches derived from them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SelfPreservationStatus {
    /// `eureka.server.enable-self-preservation`.
    pub enabled: bool,
    /// Expiry is off now (`!isLeaseExpirationEnabled()`).
    pub active: bool,
    /// Spring's dashboard rule `isBelowRenewThreshold` (renews ≤ threshold, after the wait).
    pub below_renew_threshold: bool,
    pub renews_last_min: u64,
    pub renews_threshold: u32,
    pub expected_clients: u32,
    pub renewal_percent_threshold: f64,
    pub expected_client_renewal_interval_seconds: u32,
}

impl Event {
    /// The SSE event name: Eureka's and Spring's vocabulary, kebab-cased.
    pub fn name(&self) -> &'static str {
        match &self.body {
            EventBody::Instance(event) => event.kind.name(),
            EventBody::Renewals { .. } => "renewals",
            EventBody::SelfPreservation { entered: true, .. } => "self-preservation-entered",
            EventBody::SelfPreservation { entered: false, .. } => "self-preservation-left",
            EventBody::HealthChecks {
                suspended: true, ..
            } => "health-checks-suspended",
            EventBody::HealthChecks {
                suspended: false, ..
            } => "health-checks-resumed",
            EventBody::Peer { up: true, .. } => "peer-up",
            EventBody::Peer { up: false, .. } => "peer-down",
            EventBody::Region { state, .. } => match state {
                RegionEventKind::Ready => "region-ready",
                RegionEventKind::Stale => "region-stale",
                RegionEventKind::Dropped => "region-dropped",
            },
            EventBody::Takeover { .. } => "takeover",
            EventBody::Audit(_) => "audit",
            EventBody::Lagged { .. } => "lagged",
        }
    }
}

impl InstanceEventKind {
    pub fn name(self) -> &'static str {
        match self {
            InstanceEventKind::Registered => "registered",
            InstanceEventKind::Cancelled => "cancelled",
            InstanceEventKind::Evicted => "evicted",
            InstanceEventKind::StatusChanged => "status-changed",
            InstanceEventKind::MetadataChanged => "metadata-changed",
            InstanceEventKind::HealthCheckFailed => "health-check-failed",
            InstanceEventKind::HealthCheckRecovered => "health-check-recovered",
        }
    }

    /// Every event name, instance-level or not, for validating configured filters.
    pub const ALL_EVENT_NAMES: [&'static str; 20] = [
        "registered",
        "cancelled",
        "evicted",
        "status-changed",
        "metadata-changed",
        "health-check-failed",
        "health-check-recovered",
        "health-checks-suspended",
        "health-checks-resumed",
        "renewals",
        "self-preservation-entered",
        "self-preservation-left",
        "peer-up",
        "peer-down",
        "region-ready",
        "region-stale",
        "region-dropped",
        "takeover",
        "audit",
        "lagged",
    ];
}
