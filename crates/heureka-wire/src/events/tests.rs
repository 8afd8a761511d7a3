//! The event documents: each event kind's JSON, and instance events read back.

use heureka_core::{Instance, InstanceStatus, Origin};
use serde_json::Value;

use super::*;

fn decode(event: &Event) -> Value {
    serde_json::from_slice(&encode_event(event)).expect("an event is valid JSON")
}

fn instance_event(kind: InstanceEventKind, instance: Option<Instance>) -> Event {
    Event {
        seq: 7,
        at: 1_000,
        body: EventBody::Instance(Box::new(InstanceEvent {
            kind,
            app: "ORDERS".into(),
            id: "o1".into(),
            origin: Origin::Client,
            status: InstanceStatus::OutOfService,
            overridden_status: InstanceStatus::OutOfService,
            cause: Some("override"),
            instance,
        })),
    }
}

#[test]
fn instance_event_carries_the_instance_as_the_registry_documents_encode_it() {
    let instance = Instance::new("orders", "o1", "host", "10.0.0.1", 5);
    let event = decode(&instance_event(
        InstanceEventKind::StatusChanged,
        Some(instance.clone()),
    ));
    assert_eq!(event["type"], "status-changed");
    assert_eq!(event["seq"], 7);
    assert_eq!(event["app"], "ORDERS");
    assert_eq!(event["status"], "OUT_OF_SERVICE");
    assert_eq!(event["cause"], "override");
    let document: Value =
        serde_json::from_slice(&crate::encode_instance(&instance, crate::Format::Json)).unwrap();
    assert_eq!(event["instance"], document["instance"]);
}

#[test]
fn removal_event_has_no_instance() {
    let event = decode(&instance_event(InstanceEventKind::Evicted, None));
    assert_eq!(event["type"], "evicted");
    assert!(event.get("instance").is_none());
}

#[test]
fn renewals_event_counts_per_app_and_in_total() {
    let event = decode(&Event {
        seq: 1,
        at: 2,
        body: EventBody::Renewals {
            period_ms: 1_000,
            apps: vec![("A".into(), 2), ("B".into(), 3)],
            self_preservation: SelfPreservationStatus::default(),
        },
    });
    assert_eq!(event["type"], "renewals");
    assert_eq!(event["total"], 5);
    assert_eq!(event["apps"]["B"], 3);
    assert_eq!(event["selfPreservation"]["active"], false);
}

#[test]
fn event_names_follow_the_body() {
    let peer_down = Event {
        seq: 1,
        at: 2,
        body: EventBody::Peer {
            up: false,
            url: "http://b/eureka/".into(),
            error: Some("unreachable".into()),
        },
    };
    assert_eq!(peer_down.name(), "peer-down");
    assert_eq!(decode(&peer_down)["error"], "unreachable");
    let entered = Event {
        seq: 1,
        at: 2,
        body: EventBody::SelfPreservation {
            entered: true,
            status: SelfPreservationStatus::default(),
        },
    };
    assert_eq!(entered.name(), "self-preservation-entered");
    let lagged = Event {
        seq: 1,
        at: 2,
        body: EventBody::Lagged { missed: 4 },
    };
    assert_eq!(decode(&lagged)["missed"], 4);
}

#[test]
fn an_instance_event_reads_back_as_it_was_written() {
    let mut instance = Instance::new("orders", "o1", "host", "10.0.0.1", 5);
    instance.metadata.insert("zone".into(), "east".into());
    for (kind, instance) in [
        (InstanceEventKind::StatusChanged, Some(instance)),
        (InstanceEventKind::Cancelled, None),
    ] {
        let event = instance_event(kind, instance);
        let read = decode_instance_event(&encode_event(&event)).unwrap();
        assert_eq!(read, Some(event));
    }
}

#[test]
fn server_wide_and_unknown_events_read_as_none() {
    let lagged = encode_event(&Event {
        seq: 3,
        at: 4,
        body: EventBody::Lagged { missed: 2 },
    });
    assert_eq!(decode_instance_event(&lagged), Ok(None));
    let future = br#"{"type":"instance-teleported","seq":1,"at":2,"app":"A","id":"a"}"#;
    assert_eq!(decode_instance_event(future), Ok(None));
}

#[test]
fn a_dropped_region_names_its_region_url_and_error() {
    let dropped = Event {
        seq: 1,
        at: 2,
        body: EventBody::Region {
            state: RegionEventKind::Dropped,
            region: "us-west".into(),
            url: "http://w/eureka/".into(),
            error: Some("unreachable".into()),
        },
    };
    assert_eq!(dropped.name(), "region-dropped");
    let event = decode(&dropped);
    assert_eq!(event["region"], "us-west");
    assert_eq!(event["url"], "http://w/eureka/");
    assert_eq!(event["error"], "unreachable");
}
