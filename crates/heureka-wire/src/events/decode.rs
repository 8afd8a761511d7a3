//! Reading one event of the stream back, as a watcher does: the instance events only, since
//! those are what a registry watcher acts on; server-wide events are skipped by name.

use heureka_core::{InstanceStatus, Origin};

use super::event::{Event, EventBody, InstanceEvent, InstanceEventKind};
use crate::error::DecodeError;
use crate::json::decode::{parse, read_instance, scalar};
use crate::json::tree::Node;

/// Reads one `data:` line of the event stream into an [`EventBody::Instance`] event. `Ok(None)` for an event that is not about one
/// instance (`renewals`, `self-preservation-*`, `peer-*`, `lagged`) or of a type this version
/// does not know, so a newer server's additions are skipped rather than refused.
pub fn decode_instance_event(body: &[u8]) -> Result<Option<Event>, DecodeError> {
    let root = parse(body)?;
    let Node::Object(entries) = &root else {
        return Err(DecodeError::WrongRoot {
            expected: "a JSON event object",
        });
    };
    let text = |name: &str| {
        entries
            .iter()
            .find(|(key, _)| key == name)
            .and_then(|(_, value)| scalar(value))
            .map(|value| value.text().into_owned())
    };
    let Some(kind) = text("type").as_deref().and_then(kind_from_name) else {
        return Ok(None);
    };
    let instance = match entries.iter().find(|(key, _)| key == "instance") {
        Some((_, Node::Null)) | None => None,
        Some((_, node)) => Some(read_instance(node, 0).map_err(|e| e.within("instance"))?),
    };
    let status = |name: &str| InstanceStatus::from_name_lenient(&text(name).unwrap_or_default());
    let event = InstanceEvent {
        kind,
        app: text("app").ok_or(DecodeError::field("app", "is missing"))?,
        id: text("id").ok_or(DecodeError::field("id", "is missing"))?,
        origin: match text("origin").as_deref() {
            Some("peer") => Origin::Peer,
            _ => Origin::Client,
        },
        status: status("status"),
        overridden_status: status("overriddenStatus"),
        cause: text("cause").as_deref().and_then(cause_from_name),
        instance,
    };
    Ok(Some(Event {
        seq: text("seq").and_then(|seq| seq.parse().ok()).unwrap_or(0),
        at: text("at").and_then(|at| at.parse().ok()).unwrap_or(0),
        body: EventBody::Instance(Box::new(event)),
    }))
}

fn kind_from_name(name: &str) -> Option<InstanceEventKind> {
    Some(match name {
        "registered" => InstanceEventKind::Registered,
        "cancelled" => InstanceEventKind::Cancelled,
        "evicted" => InstanceEventKind::Evicted,
        "status-changed" => InstanceEventKind::StatusChanged,
        "metadata-changed" => InstanceEventKind::MetadataChanged,
        "health-check-failed" => InstanceEventKind::HealthCheckFailed,
        "health-check-recovered" => InstanceEventKind::HealthCheckRecovered,
        _ => return None,
    })
}

fn cause_from_name(name: &str) -> Option<&'static str> {
    ["override", "override-removed", "heartbeat"]
        .into_iter()
        .find(|cause| *cause == name)
}
