//! Heureka's event stream and dashboard documents (Heureka's own JSON, documented in
//! `docs/events.md`): one JSON object per event, and the dashboard's summary and `lastn` lists.
//!
//! Instance-level events carry the instance exactly as the registry documents encode it
//! (`instance_body`), so a dashboard or webhook reads it with the same code as `/apps`.

use heureka_core::Origin;

use crate::audit::audit_fields;
use crate::json::encode::{instance_body, string};
use crate::json::object::{bool_text, field_i64, field_str, field_u64};
use crate::numbers::push_u64;

mod decode;
mod event;

pub use decode::decode_instance_event;
pub use event::{
    Event, EventBody, InstanceEvent, InstanceEventKind, RegionEventKind, SelfPreservationStatus,
};

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
        EventBody::Region {
            region, url, error, ..
        } => {
            field_str(&mut out, "region", region);
            field_str(&mut out, "url", url);
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
        EventBody::Audit(entry) => audit_fields(&mut out, entry),
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

#[cfg(test)]
mod tests;
