//! Heureka's event stream and dashboard documents (Heureka's own JSON, documented in
//! `docs/events.md`): one JSON object per event, and the dashboard's summary and `lastn` lists.
//!
//! Instance-level events carry the instance exactly as the registry documents encode it
//! (`instance_body`), so a dashboard or webhook reads it with the same code as `/apps`.

use heureka_core::{Instance, InstanceStatus, Millis, Origin};

use crate::audit::AuditEntry;

use crate::json::encode::{instance_body, string};
use crate::numbers::{push_i64, push_u64};

mod decode;

pub use decode::decode_instance_event;

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
    pub const ALL_EVENT_NAMES: [&'static str; 17] = [
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
        "takeover",
        "audit",
        "lagged",
    ];
}

/// `{"type":…,"seq":…,"at":…, …}`.
pub fn encode_event(event: &Event) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(br#"{"type":"#);
    string(&mut out, event.name());
    field_u64(&mut out, "seq", event.seq);
    field_i64(&mut out, "at", event.at);
    match &event.body {
        EventBody::Instance(instance) => instance_fields(&mut out, instance),
        EventBody::Renewals {
            period_ms,
            apps,
            self_preservation,
        } => {
            field_u64(&mut out, "periodMs", *period_ms);
            field_u64(&mut out, "total", apps.iter().map(|(_, n)| n).sum());
            out.extend_from_slice(br#","apps":{"#);
            for (n, (app, count)) in apps.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                string(&mut out, app);
                out.push(b':');
                push_u64(&mut out, *count);
            }
            out.push(b'}');
            out.extend_from_slice(br#","selfPreservation":"#);
            self_preservation_object(&mut out, self_preservation);
        }
        EventBody::SelfPreservation { status, .. } => {
            out.extend_from_slice(br#","selfPreservation":"#);
            self_preservation_object(&mut out, status);
        }
        EventBody::HealthChecks {
            failed,
            checked,
            reason,
            ..
        } => {
            field_u64(&mut out, "failed", *failed);
            field_u64(&mut out, "checked", *checked);
            field_str(&mut out, "reason", reason);
        }
        EventBody::Peer { url, error, .. } => {
            field_str(&mut out, "peer", url);
            if let Some(error) = error {
                field_str(&mut out, "error", error);
            }
        }
        EventBody::Takeover {
            app,
            id,
            previous,
            incoming,
        } => {
            field_str(&mut out, "app", app);
            field_str(&mut out, "id", id);
            field_str(&mut out, "previous", previous);
            field_str(&mut out, "incoming", incoming);
        }
        EventBody::Audit(entry) => crate::audit::audit_fields(&mut out, entry),
        EventBody::Lagged { missed } => field_u64(&mut out, "missed", *missed),
    }
    out.push(b'}');
    out
}

fn instance_fields(out: &mut Vec<u8>, event: &InstanceEvent) {
    field_str(out, "app", &event.app);
    field_str(out, "id", &event.id);
    field_str(
        out,
        "origin",
        match event.origin {
            Origin::Client => "client",
            Origin::Peer => "peer",
        },
    );
    field_str(out, "status", event.status.as_str());
    field_str(out, "overriddenStatus", event.overridden_status.as_str());
    if let Some(cause) = event.cause {
        field_str(out, "cause", cause);
    }
    if let Some(instance) = &event.instance {
        out.extend_from_slice(br#","instance":"#);
        instance_body(out, instance);
    }
}

/// The self-preservation object shared by events and the dashboard summary.
pub fn self_preservation_object(out: &mut Vec<u8>, sp: &SelfPreservationStatus) {
    out.extend_from_slice(br#"{"enabled":"#);
    out.extend_from_slice(bool_text(sp.enabled));
    out.extend_from_slice(br#","active":"#);
    out.extend_from_slice(bool_text(sp.active));
    out.extend_from_slice(br#","belowRenewThreshold":"#);
    out.extend_from_slice(bool_text(sp.below_renew_threshold));
    field_u64(out, "renewsLastMin", sp.renews_last_min);
    field_u64(out, "renewsThreshold", u64::from(sp.renews_threshold));
    field_u64(out, "expectedClients", u64::from(sp.expected_clients));
    out.extend_from_slice(br#","renewalPercentThreshold":"#);
    out.extend_from_slice(format!("{}", sp.renewal_percent_threshold).as_bytes());
    field_u64(
        out,
        "expectedClientRenewalIntervalSeconds",
        u64::from(sp.expected_client_renewal_interval_seconds),
    );
    out.push(b'}');
}

pub(crate) fn bool_text(value: bool) -> &'static [u8] {
    if value {
        b"true"
    } else {
        b"false"
    }
}

pub(crate) fn field_str(out: &mut Vec<u8>, name: &str, value: &str) {
    out.push(b',');
    string(out, name);
    out.push(b':');
    string(out, value);
}

pub(crate) fn field_u64(out: &mut Vec<u8>, name: &str, value: u64) {
    out.push(b',');
    string(out, name);
    out.push(b':');
    push_u64(out, value);
}

pub(crate) fn field_i64(out: &mut Vec<u8>, name: &str, value: i64) {
    out.push(b',');
    string(out, name);
    out.push(b':');
    push_i64(out, value);
}

#[cfg(test)]
mod tests;
