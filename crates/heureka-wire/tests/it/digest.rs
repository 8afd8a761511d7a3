//! The registry digest Heureka peers exchange for anti-entropy: its exact bytes, round trips,
//! what the reader refuses and what it lets through.

use heureka_core::InstanceStatus::{OutOfService, Unknown, Up};
use heureka_core::{PartStamps, Stamp};
use heureka_wire::{decode_registry_digest, encode_registry_digest, DecodeError, InstanceDigest};

use crate::fixtures::{assert_wrong_roots, NOW};

fn live(app: &str, id: &str) -> InstanceDigest {
    InstanceDigest {
        app: app.to_owned(),
        id: id.to_owned(),
        status: Up,
        overridden_status: Unknown,
        last_dirty_timestamp: 1,
        last_updated_timestamp: 2,
        last_renewal_timestamp: 3,
        removed: false,
        stamps: None,
    }
}

/// [`live`] with stamps, one part of each kind of value.
fn stamped(app: &str, id: &str) -> InstanceDigest {
    InstanceDigest {
        stamps: Some(PartStamps {
            registration: stamp(1_714_550_400_000, 0, 7),
            status: stamp(1_714_550_400_000, 1, 7),
            overridden: stamp(i64::MAX, u32::MAX, u32::MAX),
            removed: Stamp::ZERO,
            health: Stamp::ZERO,
        }),
        ..live(app, id)
    }
}

fn stamp(ms: i64, counter: u32, node: u32) -> Stamp {
    Stamp { ms, counter, node }
}

const ONE_LIVE: &str = r#"{"digest":[{"app":"ORDERS","id":"o1","status":"UP","overriddenStatus":"UNKNOWN","lastDirtyTimestamp":1,"lastUpdatedTimestamp":2,"lastRenewalTimestamp":3,"removed":false}]}"#;

const ONE_STAMPED: &str = r#"{"digest":[{"app":"ORDERS","id":"o1","status":"UP","overriddenStatus":"UNKNOWN","lastDirtyTimestamp":1,"lastUpdatedTimestamp":2,"lastRenewalTimestamp":3,"removed":false,"stamps":{"registration":[1714550400000,0,7],"status":[1714550400000,1,7],"overridden":[9223372036854775807,4294967295,4294967295],"removed":[0,0,0]}}]}"#;

fn decode(body: &str) -> Result<Vec<InstanceDigest>, DecodeError> {
    decode_registry_digest(body.as_bytes(), NOW)
}

/// The reason of a refused body, as a 4xx would carry it.
fn refusal(body: &str) -> String {
    decode(body).expect_err("refused").to_string()
}

/// [`ONE_LIVE`] with `from` replaced by `to`.
fn one_live_with(from: &str, to: &str) -> String {
    assert!(ONE_LIVE.contains(from), "{from}");
    ONE_LIVE.replacen(from, to, 1)
}

/// [`ONE_STAMPED`] with `from` replaced by `to`.
fn one_stamped_with(from: &str, to: &str) -> String {
    assert!(ONE_STAMPED.contains(from), "{from}");
    ONE_STAMPED.replacen(from, to, 1)
}

// --- encoding ---------------------------------------------------------------------------------

#[test]
fn empty_digest_is_an_empty_list() {
    assert_eq!(encode_registry_digest(&[]), br#"{"digest":[]}"#);
}

#[test]
fn entry_is_written_with_every_field_in_order() {
    let bytes = encode_registry_digest(&[live("ORDERS", "o1")]);
    assert_eq!(String::from_utf8(bytes).unwrap(), ONE_LIVE);
}

#[test]
fn stamps_are_written_last_when_the_entry_has_them() {
    let bytes = encode_registry_digest(&[stamped("ORDERS", "o1")]);
    assert_eq!(String::from_utf8(bytes).unwrap(), ONE_STAMPED);
}

#[test]
fn tombstone_is_written_with_removed_true() {
    let tombstone = InstanceDigest {
        status: OutOfService,
        overridden_status: OutOfService,
        removed: true,
        ..live("ORDERS", "o1")
    };
    let text = String::from_utf8(encode_registry_digest(&[tombstone])).unwrap();
    assert_eq!(
        text,
        r#"{"digest":[{"app":"ORDERS","id":"o1","status":"OUT_OF_SERVICE","overriddenStatus":"OUT_OF_SERVICE","lastDirtyTimestamp":1,"lastUpdatedTimestamp":2,"lastRenewalTimestamp":3,"removed":true}]}"#
    );
}

#[test]
fn entries_are_comma_separated_in_the_given_order() {
    let text = String::from_utf8(encode_registry_digest(&[
        live("ORDERS", "o2"),
        live("ORDERS", "o1"),
    ]))
    .unwrap();
    let o2 = text.find(r#""id":"o2""#).unwrap();
    let o1 = text.find(r#""id":"o1""#).unwrap();
    assert!(o2 < o1, "{text}");
    assert!(text.contains(r#""removed":false},{"app""#), "{text}");
}

#[test]
fn ids_with_quotes_and_non_ascii_are_escaped_and_read_back() {
    let entry = live("ÜBER", "host:\"quoted\"\\path\n");
    let bytes = encode_registry_digest(std::slice::from_ref(&entry));
    assert!(serde_json::from_slice::<serde_json::Value>(&bytes).is_ok());
    assert_eq!(decode_registry_digest(&bytes, NOW).unwrap(), vec![entry]);
}

// --- round trips ------------------------------------------------------------------------------

#[test]
fn every_status_and_extreme_timestamps_round_trip() {
    let entries: Vec<InstanceDigest> = heureka_core::InstanceStatus::BY_NAME
        .iter()
        .enumerate()
        .map(|(n, status)| InstanceDigest {
            status: *status,
            overridden_status: *status,
            last_dirty_timestamp: i64::MAX,
            last_updated_timestamp: i64::MIN,
            last_renewal_timestamp: 0,
            removed: n % 2 == 0,
            ..live("ORDERS", &format!("o{n}"))
        })
        .collect();
    let bytes = encode_registry_digest(&entries);
    assert_eq!(decode_registry_digest(&bytes, NOW).unwrap(), entries);
}

#[test]
fn entries_with_and_without_stamps_round_trip() {
    let tombstone = InstanceDigest {
        removed: true,
        stamps: Some(PartStamps {
            removed: stamp(1_714_550_500_000, 3, 9),
            ..stamped("ORDERS", "o3").stamps.unwrap()
        }),
        ..live("ORDERS", "o3")
    };
    let entries = vec![stamped("ORDERS", "o1"), live("ORDERS", "o2"), tombstone];
    let bytes = encode_registry_digest(&entries);
    assert_eq!(decode_registry_digest(&bytes, NOW).unwrap(), entries);
}

#[test]
fn stamps_of_zero_are_read_as_zero_not_as_none() {
    let entry = InstanceDigest {
        stamps: Some(PartStamps::default()),
        ..live("ORDERS", "o1")
    };
    let bytes = encode_registry_digest(std::slice::from_ref(&entry));
    assert_eq!(decode_registry_digest(&bytes, NOW).unwrap(), vec![entry]);
}

#[test]
fn empty_digest_round_trips() {
    let bytes = encode_registry_digest(&[]);
    assert_eq!(decode_registry_digest(&bytes, NOW).unwrap(), vec![]);
}

// --- leniency for newer peers -----------------------------------------------------------------

#[test]
fn unknown_fields_are_ignored_in_entries_and_at_the_root() {
    let body = one_live_with(
        r#""removed":false"#,
        r#""removed":false,"zone":"eu-1","n":[1]"#,
    )
    .replacen(r#"{"digest""#, r#"{"version":2,"digest""#, 1);
    assert_eq!(decode(&body).unwrap(), vec![live("ORDERS", "o1")]);
}

#[test]
fn an_older_heurekas_entry_without_stamps_has_none() {
    assert_eq!(decode(ONE_LIVE).unwrap()[0].stamps, None);
    let body = one_live_with(r#""removed":false"#, r#""removed":false,"stamps":null"#);
    assert_eq!(decode(&body).unwrap()[0].stamps, None);
}

#[test]
fn unknown_fields_inside_stamps_are_ignored() {
    let body = one_stamped_with(
        r#""removed":[0,0,0]"#,
        r#""removed":[0,0,0],"lease":[5,5,5]"#,
    );
    assert_eq!(decode(&body).unwrap(), vec![stamped("ORDERS", "o1")]);
}

// --- refusals ---------------------------------------------------------------------------------

#[test]
fn empty_body_is_refused() {
    assert_eq!(decode(""), Err(DecodeError::Empty));
}

#[test]
fn malformed_json_is_refused_with_its_position() {
    assert!(refusal(r#"{"digest":["#).starts_with("invalid JSON at line 1"));
}

#[test]
fn body_without_a_digest_array_is_refused() {
    assert_wrong_roots(
        decode,
        &[
            r#"{}"#,
            r#"{"digest":{}}"#,
            r#"[]"#,
            r#"{"applications":{}}"#,
        ],
    );
}

#[test]
fn entry_that_is_not_an_object_is_refused_by_position() {
    assert_eq!(
        refusal(r#"{"digest":["ORDERS"]}"#),
        "digest[0] is not an object"
    );
}

#[test]
fn missing_field_is_named() {
    let body = one_live_with(r#""lastUpdatedTimestamp":2,"#, "");
    assert_eq!(refusal(&body), "digest[0].lastUpdatedTimestamp is missing");
}

#[test]
fn null_counts_as_missing() {
    let body = one_live_with(r#""id":"o1""#, r#""id":null"#);
    assert_eq!(refusal(&body), "digest[0].id is missing");
}

#[test]
fn empty_id_is_refused() {
    let body = one_live_with(r#""id":"o1""#, r#""id":"""#);
    assert_eq!(refusal(&body), "digest[0].id is empty");
}

#[test]
fn status_must_be_an_exact_name() {
    for status in [r#""up""#, r#""BROKEN""#, "1"] {
        let body = one_live_with(r#""status":"UP""#, &format!(r#""status":{status}"#));
        assert_eq!(
            refusal(&body),
            "digest[0].status is not an instance status",
            "{status}"
        );
    }
}

#[test]
fn timestamps_must_be_json_integers() {
    for value in [r#""1""#, "1.5", "true", "18446744073709551615"] {
        let body = one_live_with(
            r#""lastRenewalTimestamp":3"#,
            &format!(r#""lastRenewalTimestamp":{value}"#),
        );
        assert_eq!(
            refusal(&body),
            "digest[0].lastRenewalTimestamp is not an integer",
            "{value}"
        );
    }
}

#[test]
fn removed_must_be_a_json_boolean() {
    let body = one_live_with(r#""removed":false"#, r#""removed":"false""#);
    assert_eq!(refusal(&body), "digest[0].removed is not a boolean");
}

#[test]
fn one_bad_entry_fails_the_whole_digest_naming_it() {
    let good = &ONE_LIVE[r#"{"digest":["#.len()..ONE_LIVE.len() - 2];
    let bad = good.replacen(r#""app":"ORDERS""#, r#""app":7"#, 1);
    let body = format!(r#"{{"digest":[{good},{good},{bad}]}}"#);
    assert_eq!(refusal(&body), "digest[2].app is not a string");
}

#[test]
fn stamps_must_be_an_object_with_every_part() {
    let body = one_stamped_with(r#""status":[1714550400000,1,7],"#, "");
    assert_eq!(refusal(&body), "digest[0].stamps.status is missing");
    let body = one_live_with(r#""removed":false"#, r#""removed":false,"stamps":[1,0,7]"#);
    assert_eq!(refusal(&body), "digest[0].stamps is not an object");
}

#[test]
fn a_stamp_must_be_three_json_integers_in_range() {
    for (value, reason) in [
        ("[1,0]", "stamps.removed is not a [ms, counter, node] array"),
        (
            "[1,0,0,0]",
            "stamps.removed is not a [ms, counter, node] array",
        ),
        ("{}", "stamps.removed is not a [ms, counter, node] array"),
        (
            r#""1,0,0""#,
            "stamps.removed is not a [ms, counter, node] array",
        ),
        (r#"["1",0,0]"#, "stamps.removed[0] is not an integer"),
        ("[1.5,0,0]", "stamps.removed[0] is not an integer"),
        (
            "[18446744073709551615,0,0]",
            "stamps.removed[0] is not an integer",
        ),
        ("[-1,0,0]", "stamps.removed[0] is negative"),
        ("[1,-1,0]", "stamps.removed[1] is out of range"),
        ("[1,4294967296,0]", "stamps.removed[1] is out of range"),
        ("[1,0,null]", "stamps.removed[2] is not an integer"),
        ("[1,0,true]", "stamps.removed[2] is not an integer"),
        ("[1,0,4294967296]", "stamps.removed[2] is out of range"),
    ] {
        let body = one_stamped_with(r#""removed":[0,0,0]"#, &format!(r#""removed":{value}"#));
        assert_eq!(refusal(&body), format!("digest[0].{reason}"), "{value}");
    }
}
