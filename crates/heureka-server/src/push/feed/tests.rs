//! The push feed on the write path: one delta per write with the registry's hashcode after it,
//! a stream's start (snapshot, or the deltas it missed), and resuming refused across a gap.

use std::sync::Arc;

use heureka_core::{Instance, InstanceStatus, Origin};
use serde_json::Value;

use super::*;
use crate::clock::Clock;
use crate::config::Config;
use crate::push::message::Follows;
use crate::store::Store;

const EPOCH: i64 = 1_700_000_000_000;

fn config(replay: usize) -> PushConfig {
    PushConfig {
        replay,
        ..Config::default().heureka.push
    }
}

fn store_with(feed: &Arc<PushFeed>) -> Store {
    let registry = Registry::new(heureka_core::RegistryPolicy::default(), EPOCH);
    Store::new(registry, Clock::tokio(EPOCH), vec![feed.clone()])
}

fn register(store: &Store, app: &str, id: &str) {
    let instance = Instance::new(app, id, "host", "10.0.0.1", store.now());
    store.write(|registry, now| registry.register(instance, Origin::Client, now));
}

fn take_out_of_service(store: &Store, app: &str, id: &str) {
    store.write(|registry, now| {
        registry.set_status_override(
            app,
            id,
            InstanceStatus::OutOfService,
            None,
            Origin::Client,
            now,
        )
    });
}

/// A frame's event name and JSON.
fn parse(frame: &Bytes) -> (String, Value) {
    let text = std::str::from_utf8(frame).unwrap();
    let event = text.lines().next().unwrap().trim_start_matches("event: ");
    let data = text
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .unwrap();
    (event.to_owned(), serde_json::from_str(data).unwrap())
}

/// Every delta the receiver holds now, parsed.
fn received(start: &mut Start) -> Vec<(u64, Value)> {
    let mut deltas = Vec::new();
    while let Ok(delta) = start.receiver.try_recv() {
        let (_, json) = parse(&delta.frame_for(&Follows::Every).unwrap());
        deltas.push((delta.id.seq, json));
    }
    deltas
}

#[tokio::test(start_paused = true)]
async fn a_new_stream_starts_with_a_snapshot_of_what_it_follows() {
    let feed = Arc::new(PushFeed::new(&config(16)));
    let store = store_with(&feed);
    register(&store, "orders", "o1");
    register(&store, "billing", "b1");
    let start = feed.start(store.read(), &Follows::from_names(["orders"]), None);
    let (event, json) = parse(&start.first[0]);
    assert_eq!(event, "snapshot");
    let apps = json["applications"]["application"].as_array().unwrap();
    assert_eq!(apps.len(), 1);
    assert_eq!(apps[0]["name"], "ORDERS");
    assert_eq!(start.snapshot_version, Some(store.read().version()));
    assert_eq!(start.covered, 2);
}

#[tokio::test(start_paused = true)]
async fn each_write_is_one_delta_with_the_whole_registrys_hashcode_after_it() {
    let feed = Arc::new(PushFeed::new(&config(16)));
    let store = store_with(&feed);
    register(&store, "billing", "b1");
    let mut start = feed.start(store.read(), &Follows::Every, None);
    register(&store, "orders", "o1");
    take_out_of_service(&store, "orders", "o1");
    store.write(|registry, now| registry.cancel("orders", "o1", Origin::Client, now));
    let deltas = received(&mut start);
    let shown: Vec<(u64, String, String, String)> = deltas
        .iter()
        .map(|(seq, json)| {
            let doc = &json["applications"];
            let instance = &doc["application"][0]["instance"][0];
            (
                *seq,
                doc["apps__hashcode"].as_str().unwrap().to_owned(),
                instance["actionType"].as_str().unwrap().to_owned(),
                instance["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let row = |seq, hash: &str, action: &str, status: &str| {
        (seq, hash.to_owned(), action.to_owned(), status.to_owned())
    };
    assert_eq!(
        shown,
        [
            row(2, "UP_2_", "ADDED", "UP"),
            row(3, "OUT_OF_SERVICE_1_UP_1_", "MODIFIED", "OUT_OF_SERVICE"),
            row(4, "UP_1_", "DELETED", "OUT_OF_SERVICE"),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_that_changes_nothing_is_not_pushed() {
    let feed = Arc::new(PushFeed::new(&config(16)));
    let store = store_with(&feed);
    register(&store, "orders", "o1");
    let mut start = feed.start(store.read(), &Follows::Every, None);
    store.write(|registry, now| registry.renew("orders", "o1", None, None, Origin::Client, now));
    assert!(received(&mut start).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_stream_that_resumes_gets_the_deltas_it_missed_and_no_snapshot() {
    let feed = Arc::new(PushFeed::new(&config(16)));
    let store = store_with(&feed);
    let first = feed.start(store.read(), &Follows::Every, None);
    let last_seen = feed.position(first.covered);
    drop(first);
    register(&store, "orders", "o1");
    register(&store, "orders", "o2");
    let resumed = feed.start(store.read(), &Follows::Every, Some(last_seen));
    let events: Vec<String> = resumed.first.iter().map(|frame| parse(frame).0).collect();
    assert_eq!(events, ["delta", "delta"]);
    assert_eq!(resumed.snapshot_version, None);
}

#[tokio::test(start_paused = true)]
async fn a_stream_further_behind_than_the_kept_deltas_gets_a_snapshot() {
    let feed = Arc::new(PushFeed::new(&config(2)));
    let store = store_with(&feed);
    let first = feed.start(store.read(), &Follows::Every, None);
    let last_seen = feed.position(first.covered);
    for id in ["o1", "o2", "o3"] {
        register(&store, "orders", id);
    }
    let resumed = feed.start(store.read(), &Follows::Every, Some(last_seen));
    assert_eq!(parse(&resumed.first[0]).0, "snapshot");
}

#[tokio::test(start_paused = true)]
async fn a_stream_of_another_process_or_from_the_future_gets_a_snapshot() {
    let feed = Arc::new(PushFeed::new(&config(16)));
    let store = store_with(&feed);
    let first = feed.start(store.read(), &Follows::Every, None);
    let ours = feed.position(first.covered);
    let foreign = StreamPosition {
        stream: ours.stream.wrapping_add(1),
        ..ours
    };
    let ahead = StreamPosition {
        seq: ours.seq + 5,
        ..ours
    };
    for position in [foreign, ahead] {
        let resumed = feed.start(store.read(), &Follows::Every, Some(position));
        assert_eq!(parse(&resumed.first[0]).0, "snapshot");
    }
}

#[tokio::test(start_paused = true)]
async fn writes_made_while_nobody_could_resume_cannot_be_resumed_across() {
    let feed = Arc::new(PushFeed::new(&config(16)));
    let store = store_with(&feed);
    let first = feed.start(store.read(), &Follows::Every, None);
    let last_seen = feed.position(first.covered);
    drop(first);
    feed.ended();
    tokio::time::advance(RESUME_WINDOW + Duration::from_secs(1)).await;
    register(&store, "orders", "o1");
    let resumed = feed.start(store.read(), &Follows::Every, Some(last_seen));
    assert_eq!(parse(&resumed.first[0]).0, "snapshot");
}

#[tokio::test(start_paused = true)]
async fn streams_starting_between_two_writes_share_one_snapshot_and_a_write_ends_it() {
    let feed = Arc::new(PushFeed::new(&config(16)));
    let store = store_with(&feed);
    register(&store, "orders", "o1");
    let first = feed.start(store.read(), &Follows::Every, None);
    let second = feed.start(store.read(), &Follows::Every, None);
    assert_eq!(
        first.first[0].as_ptr(),
        second.first[0].as_ptr(),
        "one encoding"
    );
    register(&store, "orders", "o2");
    let third = feed.start(store.read(), &Follows::Every, None);
    let (_, json) = parse(&third.first[0]);
    assert_eq!(
        json["applications"]["application"][0]["instance"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}
