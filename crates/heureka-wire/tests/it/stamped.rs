//! The stamped batch Heureka peers replicate with, and its answer: exact bytes, round trips
//! with and without the optional parts, and each refusal naming its element and field.

use heureka_core::InstanceStatus::{Down, OutOfService, Up};
use heureka_core::{Health, PartStamps, Parts, Stamp, StampedCopy};
use heureka_wire::ReplicationAction::{
    Cancel, DeleteStatusOverride, Heartbeat, Register, StatusUpdate,
};
use heureka_wire::{
    decode_stamped_batch, decode_stamped_response, encode_stamped_batch, encode_stamped_response,
    DecodeError, StampedItem, StampedResult,
};

use crate::fixtures::{assert_wrong_roots, every_item, everything, orders, NOW};

fn stamp(ms: i64, counter: u32, node: u32) -> Stamp {
    Stamp { ms, counter, node }
}

/// Registered at 1000 on node 7, overridden OUT_OF_SERVICE at 2000, never removed.
fn stamps() -> PartStamps {
    PartStamps {
        registration: stamp(1000, 0, 7),
        status: stamp(1000, 1, 7),
        overridden: stamp(2000, 0, 7),
        removed: Stamp::ZERO,
        health: Stamp::ZERO,
    }
}

/// A full copy: registration, own status, override, a lease.
fn full() -> StampedCopy {
    StampedCopy {
        app: "ORDERS".to_owned(),
        id: "o1".to_owned(),
        parts: Parts {
            registration: Some(orders()),
            own_status: Up,
            overridden: Some(OutOfService),
            health: Health::Passing,
            stamps: stamps(),
        },
        leased: true,
    }
}

/// What a heartbeat carries: the stamps, no registration, no override.
fn bare() -> StampedCopy {
    StampedCopy {
        parts: Parts {
            registration: None,
            overridden: None,
            ..full().parts
        },
        ..full()
    }
}

/// A cancelled instance: no registration, no lease, the cancel stamped.
fn tombstone() -> StampedCopy {
    StampedCopy {
        app: "ORDERS".to_owned(),
        id: "o2".to_owned(),
        parts: Parts {
            registration: None,
            own_status: Down,
            overridden: None,
            health: Health::Passing,
            stamps: PartStamps {
                removed: stamp(3000, 0, 9),
                ..stamps()
            },
        },
        leased: false,
    }
}

fn item(action: heureka_wire::ReplicationAction, copy: StampedCopy) -> StampedItem {
    StampedItem { action, copy }
}

const STAMPS: &str = r#""stamps":{"registration":[1000,0,7],"status":[1000,1,7],"overridden":[2000,0,7],"removed":[0,0,0]}"#;

/// [`bare`] as a heartbeat element, the smallest complete one.
fn heartbeat_element() -> String {
    format!(
        r#"{{"action":"Heartbeat","appName":"ORDERS","id":"o1","leased":true,"ownStatus":"UP",{STAMPS}}}"#
    )
}

fn items(body: &[u8]) -> Vec<StampedItem> {
    every_item(decode_stamped_batch(body, NOW))
}

/// The one element of a batch, decoded.
fn one(element: &str) -> Result<StampedItem, DecodeError> {
    let body = format!(r#"{{"stampedList":[{element}]}}"#);
    let mut all = decode_stamped_batch(body.as_bytes(), NOW).unwrap();
    assert_eq!(all.len(), 1);
    all.pop().unwrap()
}

/// Why the one element of a batch cannot be applied.
fn element_error(element: &str) -> String {
    one(element).expect_err("refused").to_string()
}

/// [`heartbeat_element`] with `from` replaced by `to`.
fn heartbeat_with(from: &str, to: &str) -> String {
    let element = heartbeat_element();
    assert!(element.contains(from), "{from}");
    element.replacen(from, to, 1)
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap()
}

// --- encoding ---------------------------------------------------------------------------------

#[test]
fn empty_batch_and_answer_are_empty_lists() {
    assert_eq!(encode_stamped_batch(&[]), br#"{"stampedList":[]}"#);
    assert_eq!(encode_stamped_response(&[]), br#"{"responseList":[]}"#);
}

#[test]
fn heartbeat_is_written_without_instance_and_override() {
    assert_eq!(
        text(encode_stamped_batch(&[item(Heartbeat, bare())])),
        format!(r#"{{"stampedList":[{}]}}"#, heartbeat_element())
    );
}

#[test]
fn a_failing_verdict_is_written_with_its_stamp() {
    let mut copy = bare();
    copy.parts.health = Health::Failing;
    copy.parts.stamps.health = stamp(2500, 0, 8);

    assert_eq!(
        text(encode_stamped_batch(&[item(Heartbeat, copy.clone())])),
        r#"{"stampedList":[{"action":"Heartbeat","appName":"ORDERS","id":"o1","leased":true,"ownStatus":"UP","health":"FAILING","stamps":{"registration":[1000,0,7],"status":[1000,1,7],"overridden":[2000,0,7],"removed":[0,0,0],"health":[2500,0,8]}}]}"#
    );
    assert_eq!(
        items(&encode_stamped_batch(&[item(Heartbeat, copy.clone())])),
        vec![item(Heartbeat, copy)]
    );
}

#[test]
fn a_copy_without_a_verdict_reads_as_passing_and_never_stamped() {
    let read = one(&heartbeat_element()).unwrap();

    assert_eq!(read.copy.parts.health, Health::Passing);
    assert_eq!(read.copy.parts.stamps.health, Stamp::ZERO);
}

#[test]
fn a_verdict_that_is_not_passing_or_failing_is_refused() {
    let element = heartbeat_with(
        r#""ownStatus":"UP","#,
        r#""ownStatus":"UP","health":"SICK","#,
    );

    assert_eq!(
        element_error(&element),
        "stampedList[0].health is not PASSING or FAILING"
    );
}

#[test]
fn tombstone_is_written_unleased_with_its_cancel_stamp() {
    assert_eq!(
        text(encode_stamped_batch(&[item(Cancel, tombstone())])),
        r#"{"stampedList":[{"action":"Cancel","appName":"ORDERS","id":"o2","leased":false,"ownStatus":"DOWN","stamps":{"registration":[1000,0,7],"status":[1000,1,7],"overridden":[2000,0,7],"removed":[3000,0,9]}}]}"#
    );
}

#[test]
fn register_is_written_with_override_stamps_and_the_instance_last() {
    let body = text(encode_stamped_batch(&[item(Register, full())]));
    let instance = text(heureka_wire::encode_instance(
        &orders(),
        heureka_wire::Format::Json,
    ));
    let instance = &instance[r#"{"instance":"#.len()..instance.len() - 1];
    assert_eq!(
        body,
        format!(
            r#"{{"stampedList":[{{"action":"Register","appName":"ORDERS","id":"o1","leased":true,"ownStatus":"UP","overriddenStatus":"OUT_OF_SERVICE",{STAMPS},"instanceInfo":{instance}}}]}}"#
        )
    );
}

#[test]
fn answer_copy_is_the_copy_without_an_action() {
    let body = text(encode_stamped_response(&[
        StampedResult::status(200),
        StampedResult {
            status_code: 409,
            copy: Some(bare()),
        },
    ]));
    let copy = &heartbeat_element()[r#"{"action":"Heartbeat","#.len()..];
    assert_eq!(
        body,
        format!(
            r#"{{"responseList":[{{"statusCode":200}},{{"statusCode":409,"copy":{{{copy}}}]}}"#
        )
    );
}

#[test]
fn extreme_stamps_are_written_in_full() {
    let mut copy = bare();
    copy.parts.stamps.registration = stamp(i64::MAX, u32::MAX, u32::MAX);
    let body = text(encode_stamped_batch(&[item(Heartbeat, copy)]));
    assert!(
        body.contains(r#""registration":[9223372036854775807,4294967295,4294967295]"#),
        "{body}"
    );
}

#[test]
fn names_with_quotes_and_non_ascii_are_escaped_and_read_back() {
    let copy = StampedCopy {
        app: "ÜBER\"\\".to_owned(),
        id: "host:\"quoted\"\n".to_owned(),
        ..tombstone()
    };
    let batch = [item(Cancel, copy)];
    let bytes = encode_stamped_batch(&batch);
    assert!(serde_json::from_slice::<serde_json::Value>(&bytes).is_ok());
    assert_eq!(items(&bytes), batch);
}

// --- round trips ------------------------------------------------------------------------------

#[test]
fn every_kind_of_batch_round_trips() {
    let mut metadata_change = full();
    metadata_change.parts.registration = Some(everything());
    let mut override_removed = bare();
    override_removed.parts.registration = Some(orders());
    for batch in [
        vec![item(Register, full()), item(Register, metadata_change)],
        vec![item(Heartbeat, bare()), item(Heartbeat, full())],
        vec![item(Cancel, tombstone())],
        vec![
            item(StatusUpdate, bare()),
            item(DeleteStatusOverride, override_removed),
        ],
        vec![],
    ] {
        assert_eq!(items(&encode_stamped_batch(&batch)), batch);
    }
}

#[test]
fn answers_round_trip() {
    for results in [
        vec![
            StampedResult::status(200),
            StampedResult {
                status_code: 409,
                copy: Some(full()),
            },
            StampedResult {
                status_code: 409,
                copy: Some(tombstone()),
            },
            StampedResult {
                status_code: 404,
                copy: Some(bare()),
            },
            StampedResult::status(500),
        ],
        vec![],
    ] {
        let bytes = encode_stamped_response(&results);
        assert_eq!(decode_stamped_response(&bytes).unwrap(), results);
    }
}

// --- leniency ---------------------------------------------------------------------------------

#[test]
fn unknown_fields_and_nulls_of_optional_parts_are_skipped() {
    let element = heartbeat_with(
        r#""ownStatus":"UP""#,
        r#""ownStatus":"UP","overriddenStatus":null,"instanceInfo":null,"zone":{"a":[1]}"#,
    );
    assert_eq!(one(&element).unwrap(), item(Heartbeat, bare()));
    let body = format!(r#"{{"version":2,"stampedList":[{}]}}"#, heartbeat_element());
    assert_eq!(items(body.as_bytes()), vec![item(Heartbeat, bare())]);
}

#[test]
fn app_name_is_upper_cased() {
    let element = heartbeat_with(r#""appName":"ORDERS""#, r#""appName":"orders""#);
    assert_eq!(one(&element).unwrap().copy.app, "ORDERS");
}

#[test]
fn a_repeated_key_takes_its_last_value() {
    let element = heartbeat_with(r#""id":"o1""#, r#""id":"o9","id":"o1""#);
    assert_eq!(one(&element).unwrap(), item(Heartbeat, bare()));
}

// --- refusals of a whole body -----------------------------------------------------------------

#[test]
fn unreadable_bodies_are_refused_whole() {
    assert_eq!(decode_stamped_batch(b"", NOW), Err(DecodeError::Empty));
    assert_eq!(decode_stamped_response(b" "), Err(DecodeError::Empty));
    assert!(matches!(
        decode_stamped_batch(br#"{"stampedList":["#, NOW),
        Err(DecodeError::Malformed(_))
    ));
    assert_wrong_roots(
        |body| decode_stamped_batch(body.as_bytes(), NOW),
        &[
            r#"{}"#,
            r#"{"stampedList":{}}"#,
            r#"[]"#,
            r#"{"replicationList":[]}"#,
        ],
    );
    assert!(matches!(
        decode_stamped_response(br#"{"stampedList":[]}"#),
        Err(DecodeError::WrongRoot { .. })
    ));
}

// --- refusals of one element ------------------------------------------------------------------

#[test]
fn a_bad_element_fails_alone_naming_its_index() {
    let good = heartbeat_element();
    let bad = heartbeat_with(r#""ownStatus":"UP""#, r#""ownStatus":"up""#);
    let body = format!(r#"{{"stampedList":[{good},{bad},{good}]}}"#);
    let all = decode_stamped_batch(body.as_bytes(), NOW).unwrap();
    assert_eq!(all[0], Ok(item(Heartbeat, bare())));
    assert_eq!(
        all[1].as_ref().unwrap_err().to_string(),
        "stampedList[1].ownStatus is not an instance status"
    );
    assert_eq!(all[2], Ok(item(Heartbeat, bare())));
}

#[test]
fn an_element_that_is_not_an_object_is_refused() {
    let all = decode_stamped_batch(br#"{"stampedList":[7]}"#, NOW).unwrap();
    assert_eq!(
        all[0].as_ref().unwrap_err().to_string(),
        "stampedList[0] is not an object"
    );
}

#[test]
fn the_action_must_be_there_and_known_exactly() {
    let element = heartbeat_with(r#""action":"Heartbeat","#, "");
    assert_eq!(element_error(&element), "stampedList[0].action is missing");
    for action in [r#""heartbeat""#, r#""Renew""#, "1", "[]"] {
        let element = heartbeat_with(r#""Heartbeat""#, action);
        assert_eq!(
            element_error(&element),
            "stampedList[0].action is not a known action",
            "{action}"
        );
    }
}

#[test]
fn app_name_and_id_must_be_non_empty_strings() {
    for (from, to, reason) in [
        (r#""appName":"ORDERS","#, "", "appName is missing"),
        (
            r#""appName":"ORDERS""#,
            r#""appName":null"#,
            "appName is missing",
        ),
        (
            r#""appName":"ORDERS""#,
            r#""appName":"""#,
            "appName is empty",
        ),
        (r#""id":"o1","#, "", "id is missing"),
        (r#""id":"o1""#, r#""id":1"#, "id is not a string"),
    ] {
        assert_eq!(
            element_error(&heartbeat_with(from, to)),
            format!("stampedList[0].{reason}"),
            "{to}"
        );
    }
}

#[test]
fn leased_must_be_a_json_boolean() {
    let element = heartbeat_with(r#""leased":true,"#, "");
    assert_eq!(element_error(&element), "stampedList[0].leased is missing");
    for value in [r#""true""#, "1"] {
        let element = heartbeat_with(r#""leased":true"#, &format!(r#""leased":{value}"#));
        assert_eq!(
            element_error(&element),
            "stampedList[0].leased is not a boolean"
        );
    }
}

#[test]
fn statuses_must_be_exact_names() {
    let element = heartbeat_with(r#""ownStatus":"UP","#, "");
    assert_eq!(
        element_error(&element),
        "stampedList[0].ownStatus is missing"
    );
    for value in [r#""up""#, r#""BROKEN""#, "0"] {
        let element = heartbeat_with(r#""ownStatus":"UP""#, &format!(r#""ownStatus":{value}"#));
        assert_eq!(
            element_error(&element),
            "stampedList[0].ownStatus is not an instance status"
        );
        let element = heartbeat_with(
            r#""ownStatus":"UP""#,
            &format!(r#""ownStatus":"UP","overriddenStatus":{value}"#),
        );
        assert_eq!(
            element_error(&element),
            "stampedList[0].overriddenStatus is not an instance status"
        );
    }
}

#[test]
fn stamps_must_be_there_with_every_part() {
    let element = heartbeat_with(&format!(",{STAMPS}"), "");
    assert_eq!(element_error(&element), "stampedList[0].stamps is missing");
    let element = heartbeat_with(STAMPS, r#""stamps":[1000,0,7]"#);
    assert_eq!(
        element_error(&element),
        "stampedList[0].stamps is not an object"
    );
    for part in ["registration", "status", "overridden", "removed"] {
        let stamps = STAMPS.replacen(&format!(r#""{part}":"#), r#""other":"#, 1);
        let element = heartbeat_with(STAMPS, &stamps);
        assert_eq!(
            element_error(&element),
            format!("stampedList[0].stamps.{part} is missing")
        );
    }
}

#[test]
fn a_stamp_must_be_three_json_integers_in_range() {
    for (value, reason) in [
        ("[1000,1]", "status is not a [ms, counter, node] array"),
        ("[1000,1,7,0]", "status is not a [ms, counter, node] array"),
        ("1000", "status is not a [ms, counter, node] array"),
        (r#"["1000",1,7]"#, "status[0] is not an integer"),
        ("[1e3,1,7]", "status[0] is not an integer"),
        ("[-1,1,7]", "status[0] is negative"),
        ("[1000,1.0,7]", "status[1] is not an integer"),
        ("[1000,4294967296,7]", "status[1] is out of range"),
        ("[1000,-1,7]", "status[1] is out of range"),
        ("[1000,1,null]", "status[2] is not an integer"),
        ("[1000,1,99999999999]", "status[2] is out of range"),
    ] {
        let element = heartbeat_with(r#""status":[1000,1,7]"#, &format!(r#""status":{value}"#));
        assert_eq!(
            element_error(&element),
            format!("stampedList[0].stamps.{reason}"),
            "{value}"
        );
    }
}

#[test]
fn a_register_must_carry_its_instance() {
    let element = heartbeat_with(r#""Heartbeat""#, r#""Register""#);
    assert_eq!(
        element_error(&element),
        "stampedList[0].instanceInfo is missing"
    );
}

#[test]
fn an_unreadable_instance_is_named_inside_the_element() {
    let element = heartbeat_with(
        r#""ownStatus":"UP""#,
        r#""ownStatus":"UP","instanceInfo":{"port":{"$":"eighty"}}"#,
    );
    let error = element_error(&element);
    assert!(
        error.starts_with("stampedList[0].instanceInfo.port"),
        "{error}"
    );
    let element = heartbeat_with(
        r#""ownStatus":"UP""#,
        r#""ownStatus":"UP","instanceInfo":7"#,
    );
    assert_eq!(
        element_error(&element),
        "stampedList[0].instanceInfo is not an object"
    );
}

// --- refusals of an answer --------------------------------------------------------------------

#[test]
fn one_bad_answer_fails_the_whole_answer_naming_it() {
    let copy = &heartbeat_element()[r#"{"action":"Heartbeat","#.len()..];
    let bad = copy.replacen(r#""removed":[0,0,0]"#, r#""removed":[0,0]"#, 1);
    let body =
        format!(r#"{{"responseList":[{{"statusCode":200}},{{"statusCode":409,"copy":{{{bad}}}]}}"#);
    assert_eq!(
        decode_stamped_response(body.as_bytes())
            .unwrap_err()
            .to_string(),
        "responseList[1].copy.stamps.removed is not a [ms, counter, node] array"
    );
}

#[test]
fn an_answers_status_code_must_be_a_json_integer_in_range() {
    for (element, reason) in [
        ("{}", ".statusCode is missing"),
        (r#"{"statusCode":"200"}"#, ".statusCode is not an integer"),
        (r#"{"statusCode":70000}"#, ".statusCode is out of range"),
        (r#"{"statusCode":200,"copy":[]}"#, ".copy is not an object"),
        ("200", " is not an object"),
    ] {
        let body = format!(r#"{{"responseList":[{element}]}}"#);
        assert_eq!(
            decode_stamped_response(body.as_bytes())
                .unwrap_err()
                .to_string(),
            format!("responseList[0]{reason}"),
            "{element}"
        );
    }
}
