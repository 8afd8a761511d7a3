//! The audit entry's JSON: the list the dashboard reads and the `audit` event.

use serde_json::Value;

use super::*;
use crate::{encode_event, Event, EventBody};

fn override_set() -> AuditEntry {
    AuditEntry {
        address: Some("10.1.2.3".into()),
        app: Some("ORDERS".into()),
        id: Some("o1".into()),
        status: Some("OUT_OF_SERVICE".into()),
        ..AuditEntry::new(AuditAction::StatusOverrideSet, 1_000, "admin", 200)
    }
}

fn list(entries: &[AuditEntry]) -> Value {
    serde_json::from_slice(&encode_audit_entries(entries.iter())).expect("valid JSON")
}

#[test]
fn an_entry_says_who_from_where_what_when_and_the_outcome() {
    let entry = &list(&[override_set()])["entries"][0];
    assert_eq!(entry["at"], 1_000);
    assert_eq!(entry["action"], "status-override-set");
    assert_eq!(entry["principal"], "admin");
    assert_eq!(entry["address"], "10.1.2.3");
    assert_eq!(entry["app"], "ORDERS");
    assert_eq!(entry["id"], "o1");
    assert_eq!(entry["status"], "OUT_OF_SERVICE");
    assert_eq!(entry["outcome"], 200);
    assert_eq!(entry["applied"], true);
    assert_eq!(entry["count"], 1);
}

#[test]
fn absent_fields_are_left_out_and_a_4xx_is_not_applied() {
    let refused = AuditEntry {
        count: 20,
        ..AuditEntry::new(AuditAction::CredentialsRefused, 5, "anonymous", 401)
    };
    let entry = &list(&[refused])["entries"][0];
    for absent in [
        "address",
        "app",
        "id",
        "asg",
        "status",
        "user",
        "metadataKeys",
    ] {
        assert!(entry.get(absent).is_none(), "{absent} in {entry}");
    }
    assert_eq!(entry["applied"], false);
    assert_eq!(entry["count"], 20);
}

#[test]
fn an_entry_names_its_namespace_default_unless_told() {
    assert_eq!(
        list(&[override_set()])["entries"][0]["namespace"],
        "default"
    );
    let in_team_a = AuditEntry {
        namespace: "team-a".into(),
        ..override_set()
    };
    assert_eq!(list(&[in_team_a])["entries"][0]["namespace"], "team-a");
}

#[test]
fn a_metadata_update_lists_its_keys() {
    let entry = AuditEntry {
        metadata_keys: vec!["zone".into(), "version".into()],
        ..AuditEntry::new(AuditAction::MetadataUpdated, 5, "admin", 200)
    };
    assert_eq!(
        list(&[entry])["entries"][0]["metadataKeys"],
        serde_json::json!(["zone", "version"])
    );
}

#[test]
fn the_list_keeps_the_order_it_is_given() {
    let older = override_set();
    let newer = AuditEntry {
        at: 2_000,
        ..override_set()
    };
    let entries = list(&[newer, older]);
    assert_eq!(entries["entries"][0]["at"], 2_000);
    assert_eq!(entries["entries"][1]["at"], 1_000);
}

#[test]
fn the_audit_event_carries_the_entrys_fields() {
    let event = Event {
        seq: 9,
        at: 1_000,
        body: EventBody::Audit(Box::new(override_set())),
    };
    let json: Value = serde_json::from_slice(&encode_event(&event)).unwrap();
    assert_eq!(event.name(), "audit");
    assert_eq!(json["type"], "audit");
    assert_eq!(json["seq"], 9);
    assert_eq!(json["action"], "status-override-set");
    assert_eq!(json["principal"], "admin");
    assert_eq!(json["outcome"], 200);
}
