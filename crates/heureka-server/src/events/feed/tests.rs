//! The event hub on paused Tokio time: what each write, the renewals flush and the
//! self-preservation observation send, and what a subscriber that falls behind is told.

use std::pin::Pin;
use std::time::Duration;

use heureka_core::{Instance, InstanceStatus, Origin};
use serde_json::Value;
use tokio::task::JoinSet;
use tokio_stream::{Stream, StreamExt};

use crate::clock::Clock;
use crate::config::Config;
use crate::events::stream::{subscriber_events, Outgoing};
use crate::state::{AppState, SharedState};

const EPOCH: i64 = 1_700_000_000_000;

fn state(config: &Config) -> SharedState {
    AppState::new(config, Clock::tokio(EPOCH), 8761).expect("no persistence here")
}

/// A server with its background tasks running (until the `JoinSet` is dropped), and a
/// subscriber to its events for `apps` (empty: every app), subscribed before the tasks start.
fn running_with_subscriber(
    apps: Vec<String>,
) -> (
    SharedState,
    Pin<Box<impl Stream<Item = Outgoing>>>,
    JoinSet<()>,
) {
    let config = Config::default();
    let state = state(&config);
    let events = Box::pin(subscriber_events(&state.events.feed, apps, false));
    let tasks = crate::tasks::spawn_all(&state.store, &state.events.feed, &config);
    (state, events, tasks)
}

fn register(state: &SharedState, app: &str, id: &str) {
    let instance = Instance::new(app, id, "host", "10.0.0.1", state.store.now());
    state
        .store
        .write(|registry, now| registry.register(instance, Origin::Client, now));
}

fn renew(state: &SharedState, app: &str, id: &str) {
    state
        .store
        .write(|registry, now| registry.renew(app, id, None, None, Origin::Client, now));
}

/// Every event the subscriber has been sent so far, without waiting for more.
async fn drain(events: &mut (impl Stream<Item = Outgoing> + Unpin)) -> Vec<(String, Value)> {
    let mut received = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(Duration::from_millis(1), events.next()).await
    {
        received.push((
            event.name.to_owned(),
            serde_json::from_slice(&event.json).unwrap(),
        ));
    }
    received
}

fn names(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(name, _)| name.as_str()).collect()
}

/// The body of the one self-preservation event among `received`, which must be `expected`.
fn only_self_preservation_event<'a>(received: &'a [(String, Value)], expected: &str) -> &'a Value {
    let events: Vec<_> = received
        .iter()
        .filter(|(name, _)| name.starts_with("self-preservation"))
        .collect();
    assert_eq!(events.len(), 1, "{received:?}");
    assert_eq!(events[0].0, expected);
    &events[0].1
}

#[tokio::test(start_paused = true)]
async fn heartbeats_are_sent_as_one_renewals_event_per_second_counted_per_app() {
    let (state, mut events, _tasks) = running_with_subscriber(Vec::new());
    register(&state, "orders", "o1");
    register(&state, "billing", "b1");
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    drain(&mut events).await;
    for _ in 0..3 {
        renew(&state, "ORDERS", "o1");
    }
    renew(&state, "BILLING", "b1");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let received = drain(&mut events).await;
    assert_eq!(names(&received), ["renewals"]);
    assert_eq!(received[0].1["apps"]["ORDERS"], 3);
    assert_eq!(received[0].1["apps"]["BILLING"], 1);
    assert_eq!(received[0].1["total"], 4);
}

#[tokio::test(start_paused = true)]
async fn an_app_filter_keeps_that_apps_events_and_its_renewal_count() {
    let (state, mut events, _tasks) = running_with_subscriber(vec!["ORDERS".into()]);
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    drain(&mut events).await;
    register(&state, "orders", "o1");
    register(&state, "billing", "b1");
    renew(&state, "BILLING", "b1");
    renew(&state, "ORDERS", "o1");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let received = drain(&mut events).await;
    assert_eq!(names(&received), ["registered", "renewals"]);
    assert_eq!(received[0].1["app"], "ORDERS");
    assert_eq!(received[1].1["apps"], serde_json::json!({"ORDERS": 1}));
}

#[tokio::test(start_paused = true)]
async fn self_preservation_is_left_and_entered_as_the_minute_rolls_show_renewals_come_and_go() {
    let (state, mut events, _tasks) = running_with_subscriber(Vec::new());
    // E = 2 (the default 1, plus this registration), T = floor(2 × 2 × 0.85) = 3.
    register(&state, "orders", "o1");
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_secs(10)).await;
        renew(&state, "ORDERS", "o1");
    }
    tokio::time::sleep(Duration::from_secs(11)).await;
    let received = drain(&mut events).await;
    let left = only_self_preservation_event(&received, "self-preservation-left");
    assert_eq!(left["selfPreservation"]["renewsLastMin"], 5);
    assert_eq!(left["selfPreservation"]["renewsThreshold"], 3);
    tokio::time::sleep(Duration::from_secs(60)).await;
    let received = drain(&mut events).await;
    let entered = only_self_preservation_event(&received, "self-preservation-entered");
    assert_eq!(entered["selfPreservation"]["renewsLastMin"], 0);
    assert_eq!(entered["selfPreservation"]["active"], true);
}

#[tokio::test(start_paused = true)]
async fn a_subscriber_that_falls_behind_is_told_how_many_events_it_missed() {
    let config = Config::default();
    let state = state(&config);
    let mut events = Box::pin(subscriber_events(&state.events.feed, Vec::new(), false));
    for n in 0..(super::CHANNEL_CAPACITY + 10) {
        register(&state, "orders", &format!("o{n}"));
    }
    let received = drain(&mut events).await;
    assert_eq!(received[0].0, "lagged");
    assert_eq!(received[0].1["missed"], 10);
    assert_eq!(received.len(), 1 + super::CHANNEL_CAPACITY);
}

#[tokio::test(start_paused = true)]
async fn a_reconnecting_subscriber_is_told_to_reload_first() {
    let state = state(&Config::default());
    let mut events = Box::pin(subscriber_events(&state.events.feed, Vec::new(), true));
    register(&state, "orders", "o1");
    assert_eq!(names(&drain(&mut events).await), ["lagged", "registered"]);
}

#[tokio::test(start_paused = true)]
async fn lastn_lists_registrations_and_removals_newest_first() {
    let state = state(&Config::default());
    register(&state, "orders", "o1");
    register(&state, "orders", "o2");
    state
        .store
        .write(|registry, now| registry.cancel("ORDERS", "o1", Origin::Client, now));
    let lastn: Value = serde_json::from_slice(&state.events.feed.lastn_json()).unwrap();
    assert_eq!(lastn["registered"][0]["id"], "o2");
    assert_eq!(lastn["registered"][1]["id"], "o1");
    assert_eq!(lastn["cancelled"][0]["id"], "o1");
}

#[tokio::test(start_paused = true)]
async fn a_status_override_is_a_status_changed_event_with_the_instance_after_it() {
    let state = state(&Config::default());
    register(&state, "orders", "o1");
    let mut events = Box::pin(subscriber_events(&state.events.feed, Vec::new(), false));
    state.store.write(|registry, now| {
        registry.set_status_override(
            "ORDERS",
            "o1",
            InstanceStatus::OutOfService,
            None,
            Origin::Client,
            now,
        )
    });
    let received = drain(&mut events).await;
    assert_eq!(names(&received), ["status-changed"]);
    assert_eq!(received[0].1["cause"], "override");
    assert_eq!(received[0].1["instance"]["status"], "OUT_OF_SERVICE");
}
