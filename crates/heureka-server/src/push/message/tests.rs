//! Push messages as frames: one line of Eureka JSON per message, a stream's part of a delta,
//! stream ids read back.

use heureka_core::{Application, Instance};

use super::*;

fn application(name: &str, ids: &[&str]) -> Application {
    Application {
        name: name.to_owned(),
        instances: ids
            .iter()
            .map(|id| Instance::new(name, id, "host", "10.0.0.1", 0))
            .collect(),
    }
}

fn position(seq: u64) -> StreamPosition {
    StreamPosition { stream: 0xabc, seq }
}

fn delta() -> Delta {
    let apps = vec![
        application("BILLING", &["b1"]),
        application("ORDERS", &["o1"]),
    ];
    Delta::new(position(7), 42, "UP_2_".to_owned(), apps)
}

fn text(frame: &Bytes) -> &str {
    std::str::from_utf8(frame).unwrap()
}

#[test]
fn a_delta_is_one_event_with_its_id_and_one_line_of_json() {
    let frame = delta().frame_for(&Follows::Every).unwrap();
    let lines: Vec<&str> = text(&frame).split('\n').collect();
    assert_eq!(lines[0], "event: delta");
    assert_eq!(lines[1], "id: 0000000000000abc-7");
    assert!(lines[2].starts_with("data: {\"applications\":{\"versions__delta\":\"42\""));
    assert!(lines[2].contains("\"apps__hashcode\":\"UP_2_\""));
    assert_eq!(&lines[3..], ["", ""]);
}

#[test]
fn a_stream_gets_only_the_applications_it_follows() {
    let frame = delta().frame_for(&Follows::from_names(["orders"])).unwrap();
    assert!(text(&frame).contains("ORDERS") && !text(&frame).contains("BILLING"));
    assert_eq!(delta().frame_for(&Follows::from_names(["payments"])), None);
}

#[test]
fn a_snapshot_hashes_its_own_instances() {
    let apps = vec![application("ORDERS", &["o1", "o2"])];
    let frame = snapshot_frame(&position(3), 9, apps);
    assert!(text(&frame).starts_with("event: snapshot\nid: 0000000000000abc-3\n"));
    assert!(text(&frame).contains("\"versions__delta\":\"9\",\"apps__hashcode\":\"UP_2_\""));
}

#[test]
fn a_stream_position_reads_back_and_anything_else_is_none() {
    assert_eq!(
        StreamPosition::parse(&position(12).text()),
        Some(position(12))
    );
    for foreign in ["12", "abc-1", "0000000000000abc-", "0000000000000abc-x", ""] {
        assert_eq!(StreamPosition::parse(foreign), None, "{foreign}");
    }
}

#[test]
fn no_names_follow_every_application_and_names_are_upper_cased() {
    assert_eq!(Follows::from_names([" ", ""]), Follows::Every);
    let follows = Follows::from_names(["orders", "ORDERS", "billing"]);
    assert_eq!(
        follows,
        Follows::Only(vec!["BILLING".to_owned(), "ORDERS".to_owned()])
    );
    assert!(follows.follows("ORDERS") && !follows.follows("PAYMENTS"));
}
