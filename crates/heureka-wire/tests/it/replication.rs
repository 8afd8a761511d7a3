//! The peer replication batch and its answer (protocol spec §7.4), against bodies recorded from
//! the real Spring Cloud Eureka server (`tests/data/replication/`, see its README).
//!
//! `ours_*.json` are what our encoder writes; each was posted to the Java server, whose answers
//! are the `java_response_*.json` files. `java_batch_*.json` are batches the Java server sent to
//! a recording peer.

use heureka_core::{Instance, InstanceStatus};
use heureka_wire::{
    decode_replication_batch, decode_replication_response, encode_replication_batch,
    encode_replication_response, DecodeError, ReplicationAction, ReplicationItem,
    ReplicationResult,
};

use crate::fixtures::{data, every_item, everything, orders, text, NOW};

/// The `lastDirtyTimestamp` of [`orders`].
const DIRTY: i64 = 1_714_550_399_000;

/// Compares with `tests/data/replication/{name}`; with `HEUREKA_BLESS=1`, rewrites the file.
fn golden(name: &str, bytes: Vec<u8>) {
    let path = format!(
        "{}/tests/data/replication/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    if std::env::var_os("HEUREKA_BLESS").is_some() {
        std::fs::write(&path, &bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    assert_eq!(text(bytes), text(data(&format!("replication/{name}"))));
}

/// `golden` for a replication batch as our sender writes it.
fn golden_batch(name: &str, batch: &[ReplicationItem]) {
    golden(name, encode_replication_batch(batch));
}

fn recorded(name: &str) -> Vec<u8> {
    data(&format!("replication/{name}"))
}

fn items(body: &[u8]) -> Vec<ReplicationItem> {
    every_item(decode_replication_batch(body, NOW))
}

/// The one element of a recorded batch.
fn the_one_item(name: &str) -> ReplicationItem {
    let Ok([item]) = <[ReplicationItem; 1]>::try_from(items(&recorded(name))) else {
        panic!("one element")
    };
    item
}

fn codes(results: &[ReplicationResult]) -> Vec<u16> {
    results.iter().map(|r| r.status_code).collect()
}

fn unknown_instance() -> Instance {
    let mut i = orders();
    i.instance_id = Some("10.0.0.9:orders:8080".to_owned());
    i
}

fn with_dirty(instance: &Instance, last_dirty_timestamp: i64) -> Instance {
    let mut i = instance.clone();
    i.last_dirty_timestamp = last_dirty_timestamp;
    i
}

// --- the batches we sent to the Java server ---------------------------------------------------

fn register_batch() -> Vec<ReplicationItem> {
    vec![
        ReplicationItem::register(orders()),
        ReplicationItem::register(everything()),
    ]
}

/// Same copy, an older one (409), a newer one (404), an instance the peer does not hold (404),
/// and one with the sender's override.
fn heartbeat_batch() -> Vec<ReplicationItem> {
    vec![
        ReplicationItem::heartbeat(&orders(), None),
        ReplicationItem::heartbeat(&with_dirty(&orders(), DIRTY - 1000), None),
        ReplicationItem::heartbeat(&with_dirty(&orders(), DIRTY + 1000), None),
        ReplicationItem::heartbeat(&unknown_instance(), None),
        ReplicationItem::heartbeat(&everything(), Some(InstanceStatus::OutOfService)),
    ]
}

fn status_batch() -> Vec<ReplicationItem> {
    let mut out_of_service = orders();
    out_of_service.status = InstanceStatus::OutOfService;
    vec![
        ReplicationItem::status_update(&out_of_service),
        ReplicationItem::status_update(&unknown_instance()),
    ]
}

fn delete_override_batch() -> Vec<ReplicationItem> {
    let mut removed = orders();
    removed.status = InstanceStatus::Unknown;
    vec![ReplicationItem::delete_status_override(&removed)]
}

fn cancel_batch() -> Vec<ReplicationItem> {
    vec![
        ReplicationItem::cancel("ORDERS", "10.0.0.5:orders:8080"),
        ReplicationItem::cancel("ORDERS", "10.0.0.5:orders:8080"),
        ReplicationItem::cancel("BILLING_SVC", "i-0abc"),
    ]
}

/// What the recording peer answered to the Java server's heartbeat: "my copy is newer", with an
/// override and a metadata entry the Java server did not have.
fn conflict_response() -> Vec<ReplicationResult> {
    let mut newer = with_dirty(&orders(), DIRTY + 5000);
    newer.status = InstanceStatus::OutOfService;
    newer.overridden_status = InstanceStatus::OutOfService;
    newer
        .metadata
        .insert("adopted".to_owned(), "from-peer".to_owned());
    vec![ReplicationResult {
        status_code: 409,
        entity: Some(newer),
    }]
}

#[test]
fn register_batch_is_written_as_javas_sender_writes_it() {
    golden_batch("ours_register.json", &register_batch());
}

#[test]
fn heartbeat_batch_is_written_as_javas_sender_writes_it() {
    golden_batch("ours_heartbeats.json", &heartbeat_batch());
}

#[test]
fn status_batches_are_written_as_javas_sender_writes_them() {
    for (name, batch) in [
        ("ours_status.json", status_batch()),
        ("ours_delete_override.json", delete_override_batch()),
    ] {
        golden_batch(name, &batch);
    }
}

#[test]
fn cancel_batch_is_written_as_javas_sender_writes_it() {
    golden_batch("ours_cancel.json", &cancel_batch());
}

#[test]
fn answers_are_written_as_javas_receiver_writes_them() {
    golden(
        "ours_response_conflict.json",
        encode_replication_response(&conflict_response()),
    );
    golden(
        "ours_response_not_found.json",
        encode_replication_response(&[ReplicationResult::status(404)]),
    );
}

// --- what the Java server sends and answers ----------------------------------------------------

#[test]
fn javas_register_is_read_with_the_instance_it_was_given() {
    let items = items(&recorded("java_batch_register.json"));
    // The Java server forwards the body it was given, with its own `lastUpdatedTimestamp`.
    let updated = items[0].instance.as_ref().unwrap().last_updated_timestamp;
    assert!(updated > orders().last_updated_timestamp);
    let mut expected = orders();
    expected.last_updated_timestamp = updated;
    assert_eq!(items, vec![ReplicationItem::register(expected)]);
}

#[test]
fn javas_heartbeat_carries_status_and_dirty_timestamp_only() {
    assert_eq!(
        items(&recorded("java_batch_heartbeat.json")),
        vec![ReplicationItem::heartbeat(&orders(), None)]
    );
}

#[test]
fn javas_heartbeat_under_an_override_carries_it() {
    let heartbeat = the_one_item("java_batch_heartbeat_override.json");
    assert_eq!(heartbeat.action, ReplicationAction::Heartbeat);
    assert_eq!(heartbeat.overridden_status, Some(InstanceStatus::Down));
    assert_eq!(heartbeat.status, Some(InstanceStatus::Down));
}

#[test]
fn javas_override_changes_carry_the_stored_status() {
    let update = the_one_item("java_batch_status_update.json");
    assert_eq!(update.action, ReplicationAction::StatusUpdate);
    assert_eq!(update.status, Some(InstanceStatus::Down));
    assert_eq!(update.last_dirty_timestamp, Some(DIRTY + 5000));
    assert_eq!(update.instance, None);

    let removal = the_one_item("java_batch_delete_override.json");
    assert_eq!(removal.action, ReplicationAction::DeleteStatusOverride);
    assert_eq!(removal.status, Some(InstanceStatus::Unknown));
    assert_eq!(removal.last_dirty_timestamp, Some(DIRTY + 5000));
}

#[test]
fn javas_metadata_change_is_a_register_of_the_changed_instance() {
    let item = the_one_item("java_batch_metadata.json");
    assert_eq!(item.action, ReplicationAction::Register);
    let instance = item.instance.as_ref().unwrap();
    assert_eq!(
        instance.metadata.get("zone").map(String::as_str),
        Some("z1")
    );
    assert_eq!(instance.metadata.len(), 3);
}

#[test]
fn javas_cancel_carries_only_the_names() {
    assert_eq!(
        items(&recorded("java_batch_cancel.json")),
        vec![ReplicationItem::cancel("ORDERS", "10.0.0.5:orders:8080")]
    );
}

/// The strongest check of field order and inclusion: Java's own batches, read and written
/// again, are the same bytes. (Not the metadata batch: Java writes a `HashMap` in hash order,
/// we write metadata sorted, which its reader does not mind.)
#[test]
fn javas_batches_are_written_again_byte_for_byte() {
    for name in [
        "java_batch_register.json",
        "java_batch_heartbeat.json",
        "java_batch_heartbeat_override.json",
        "java_batch_status_update.json",
        "java_batch_delete_override.json",
        "java_batch_cancel.json",
    ] {
        let body = recorded(name);
        assert_eq!(
            text(encode_replication_batch(&items(&body))),
            text(body),
            "{name}"
        );
    }
}

#[test]
fn javas_answers_to_our_batches_are_read_element_by_element() {
    let answer = |name: &str| decode_replication_response(&recorded(name)).unwrap();
    assert_eq!(codes(&answer("java_response_register.json")), [200, 200]);
    assert_eq!(codes(&answer("java_response_status.json")), [200, 404]);
    assert_eq!(codes(&answer("java_response_delete_override.json")), [200]);
    assert_eq!(codes(&answer("java_response_cancel.json")), [200, 404, 200]);

    let heartbeats = answer("java_response_heartbeats.json");
    assert_eq!(codes(&heartbeats), [200, 409, 404, 404, 200]);
    let entities: Vec<bool> = heartbeats.iter().map(|r| r.entity.is_some()).collect();
    assert_eq!(entities, [false, true, false, false, false]);
}

#[test]
fn a_conflict_carries_the_receivers_copy() {
    let heartbeats =
        decode_replication_response(&recorded("java_response_heartbeats.json")).unwrap();
    let copy = heartbeats[1].entity.as_ref().unwrap();
    assert_eq!(copy.id(), "10.0.0.5:orders:8080");
    assert_eq!(copy.last_dirty_timestamp, DIRTY);
    assert_eq!(copy.status, InstanceStatus::Up);
    assert_eq!(copy.metadata, orders().metadata);
}

#[test]
fn javas_answers_are_written_again_byte_for_byte() {
    for name in [
        "java_response_register.json",
        "java_response_heartbeats.json",
        "java_response_status.json",
        "java_response_delete_override.json",
        "java_response_cancel.json",
    ] {
        let body = recorded(name);
        let results = decode_replication_response(&body).unwrap();
        assert_eq!(
            text(encode_replication_response(&results)),
            text(body),
            "{name}"
        );
    }
}

// --- round trips ----------------------------------------------------------------------------------

#[test]
fn every_batch_survives_encoding_and_decoding() {
    for batch in [
        register_batch(),
        heartbeat_batch(),
        status_batch(),
        delete_override_batch(),
        cancel_batch(),
        vec![],
    ] {
        assert_eq!(items(&encode_replication_batch(&batch)), batch);
    }
}

#[test]
fn answers_survive_encoding_and_decoding() {
    let results = [
        conflict_response(),
        vec![
            ReplicationResult::status(200),
            ReplicationResult::status(500),
        ],
        vec![],
    ];
    for results in results {
        let body = encode_replication_response(&results);
        assert_eq!(decode_replication_response(&body).unwrap(), results);
    }
}

#[test]
fn an_empty_batch_is_an_empty_list() {
    assert_eq!(
        text(encode_replication_batch(&[])),
        r#"{"replicationList":[]}"#
    );
    assert_eq!(
        text(encode_replication_response(&[])),
        r#"{"responseList":[]}"#
    );
}

#[test]
fn action_names_are_javas_enum_constants() {
    let names: Vec<&str> = ReplicationAction::ALL.iter().map(|a| a.as_str()).collect();
    assert_eq!(
        names,
        [
            "Register",
            "Heartbeat",
            "Cancel",
            "StatusUpdate",
            "DeleteStatusOverride"
        ]
    );
    for action in ReplicationAction::ALL {
        assert_eq!(ReplicationAction::from_name(action.as_str()), Some(action));
    }
    assert_eq!(ReplicationAction::from_name("heartbeat"), None);
}

// --- leniency and errors --------------------------------------------------------------------------

fn one(element: &str) -> Result<ReplicationItem, DecodeError> {
    let body = format!(r#"{{"replicationList":[{element}]}}"#);
    let mut results = decode_replication_batch(body.as_bytes(), NOW).unwrap();
    assert_eq!(results.len(), 1);
    results.remove(0)
}

fn element_error(element: &str) -> String {
    one(element).unwrap_err().to_string()
}

#[test]
fn unknown_properties_and_nulls_are_skipped() {
    let item = one(
        r#"{"appName":"orders","id":"a","lastDirtyTimestamp":null,"overriddenStatus":null,
            "status":"UP","instanceInfo":null,"action":"Heartbeat","futureField":{"x":[1]}}"#,
    )
    .unwrap();
    assert_eq!(item.app_name, "ORDERS", "app names are upper-cased");
    assert_eq!(item.last_dirty_timestamp, None);
    assert_eq!(item.overridden_status, None);
    assert_eq!(item.instance, None);
}

#[test]
fn a_timestamp_may_be_a_numeric_string() {
    // Java's `Long` property accepts "5" too (checked against the Java server).
    let item = one(r#"{"appName":"A","id":"a","lastDirtyTimestamp":"5","action":"Heartbeat"}"#);
    assert_eq!(item.unwrap().last_dirty_timestamp, Some(5));
}

#[test]
fn an_instance_without_timestamps_gets_parse_time() {
    let item = one(r#"{"appName":"A","id":"h","action":"Register",
            "instanceInfo":{"hostName":"h","app":"A","ipAddr":"1.2.3.4"}}"#)
    .unwrap();
    let instance = item.instance.unwrap();
    assert_eq!(instance.last_dirty_timestamp, NOW);
    assert_eq!(instance.last_updated_timestamp, NOW);
}

#[test]
fn an_element_that_cannot_be_applied_fails_alone() {
    let body = br#"{"replicationList":[
        {"appName":"A","id":"a","action":"Cancel"},
        {"appName":"A","id":"b"},
        {"appName":"A","id":"c","action":"Cancel"}
    ]}"#;
    let results = decode_replication_batch(body, NOW).unwrap();
    assert_eq!(results.len(), 3, "one result per element, in order");
    assert_eq!(results[0], Ok(ReplicationItem::cancel("A", "a")));
    assert_eq!(
        results[1].as_ref().unwrap_err().to_string(),
        "replicationList[1].action is missing"
    );
    assert_eq!(results[2], Ok(ReplicationItem::cancel("A", "c")));
}

#[test]
fn an_unknown_action_fails_its_element_not_the_batch() {
    // Java answers 400 to the whole batch; we let a newer peer's other elements through.
    assert_eq!(
        element_error(r#"{"appName":"A","id":"a","action":"Bogus"}"#),
        "replicationList[0].action is not a known action"
    );
    assert_eq!(
        element_error(r#"{"appName":"A","id":"a","action":"cancel"}"#),
        "replicationList[0].action is not a known action"
    );
}

#[test]
fn names_are_required() {
    assert_eq!(
        element_error(r#"{"id":"a","action":"Cancel"}"#),
        "replicationList[0].appName is missing"
    );
    assert_eq!(
        element_error(r#"{"appName":"A","id":"","action":"Cancel"}"#),
        "replicationList[0].id is missing"
    );
}

#[test]
fn a_register_needs_its_instance() {
    // Java's receiver fails this element with a 500 too (checked against the Java server).
    assert_eq!(
        element_error(r#"{"appName":"A","id":"a","action":"Register"}"#),
        "replicationList[0].instanceInfo is missing"
    );
}

#[test]
fn an_unreadable_instance_names_its_field() {
    assert_eq!(
        element_error(
            r#"{"appName":"A","id":"a","action":"Register","instanceInfo":{"port":{"$":"x"}}}"#
        ),
        "replicationList[0].instanceInfo.port.$ is not a number"
    );
    assert_eq!(
        element_error(r#"{"appName":"A","id":"a","action":"Register","instanceInfo":7}"#),
        "replicationList[0].instanceInfo is not an object"
    );
}

#[test]
fn statuses_must_be_exact_names() {
    // Read leniently, "FOO" would become an override of UNKNOWN; Java's receiver fails it.
    assert_eq!(
        element_error(r#"{"appName":"A","id":"a","status":"FOO","action":"StatusUpdate"}"#),
        "replicationList[0].status is not an instance status"
    );
    assert_eq!(
        element_error(r#"{"appName":"A","id":"a","overriddenStatus":"up","action":"Heartbeat"}"#),
        "replicationList[0].overriddenStatus is not an instance status"
    );
}

#[test]
fn bad_values_name_their_field() {
    assert_eq!(
        element_error(r#"{"appName":"A","id":"a","lastDirtyTimestamp":"soon","action":"Cancel"}"#),
        "replicationList[0].lastDirtyTimestamp is not a number"
    );
    assert_eq!(
        element_error(r#"{"appName":["A"],"id":"a","action":"Cancel"}"#),
        "replicationList[0].appName is not a single value"
    );
    assert_eq!(element_error("42"), "replicationList[0] is not an object");
}

#[test]
fn a_malformed_batch_is_one_error() {
    let error = |body: &[u8]| decode_replication_batch(body, NOW).unwrap_err();
    assert_eq!(
        error(br#"{"replicationList":[{"appName":"A""#).to_string(),
        "invalid JSON at line 1 column 34: EOF while parsing an object"
    );
    assert_eq!(error(b"  "), DecodeError::Empty);
    let wrong_root = DecodeError::WrongRoot {
        expected: r#"a JSON object {"replicationList":[…]}"#,
    };
    for body in [
        &br#"{"replicationList":{"appName":"A"}}"#[..],
        br#"{"replicationList":null}"#,
        br#"{"responseList":[]}"#,
        br#"[]"#,
    ] {
        assert_eq!(error(body), wrong_root, "{}", String::from_utf8_lossy(body));
    }
}

#[test]
fn an_unreadable_answer_is_one_error() {
    let error = |body: &str| {
        decode_replication_response(body.as_bytes())
            .unwrap_err()
            .to_string()
    };
    for (body, message) in [
        (
            r#"{"responseList":[{"statusCode":200},{}]}"#,
            "responseList[1].statusCode is missing",
        ),
        (
            r#"{"responseList":[{"statusCode":"ok"}]}"#,
            "responseList[0].statusCode is not a number",
        ),
        (
            r#"{"responseList":[{"statusCode":70000}]}"#,
            "responseList[0].statusCode is out of range",
        ),
        (
            r#"{"responseList":[{"statusCode":409,"responseEntity":{"countryId":"x"}}]}"#,
            "responseList[0].responseEntity.countryId is not a number",
        ),
        (
            r#"{"replicationList":[]}"#,
            r#"expected a JSON object {"responseList":[…]} at the root of the body"#,
        ),
    ] {
        assert_eq!(error(body), message);
    }
}

#[test]
fn an_answer_may_carry_unknown_properties_and_a_string_code() {
    let results =
        decode_replication_response(br#"{"responseList":[{"statusCode":"404","x":1}],"y":2}"#)
            .unwrap();
    assert_eq!(results, [ReplicationResult::status(404)]);
}
