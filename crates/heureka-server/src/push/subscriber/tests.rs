//! One subscriber's stream on paused time: what it sends first, live deltas, keep-alives, and
//! its end when it falls behind.

use std::sync::Arc;
use std::time::Duration;

use heureka_core::{Instance, Origin, Registry, RegistryPolicy};
use tokio_stream::StreamExt;

use super::*;
use crate::clock::Clock;
use crate::config::Config;
use crate::push::feed::CHANNEL_CAPACITY;
use crate::store::Store;

const KEEP_ALIVE: Duration = Duration::from_secs(15);

fn feed_and_store() -> (Arc<PushFeed>, Store) {
    let feed = Arc::new(PushFeed::new(&Config::default().heureka.push));
    let registry = Registry::new(RegistryPolicy::default(), 0);
    let store = Store::new(registry, Clock::tokio(0), vec![feed.clone()]);
    (feed, store)
}

fn register(store: &Store, id: &str) {
    let instance = Instance::new("orders", id, "host", "10.0.0.1", store.now());
    store.write(|registry, now| registry.register(instance, Origin::Client, now));
}

fn subscriber(feed: &Arc<PushFeed>, store: &Store) -> Subscriber {
    let start = feed.start(store.read(), &Follows::Every, None);
    Subscriber::new(
        start,
        Follows::Every,
        KEEP_ALIVE,
        feed.clone(),
        Box::new(()),
    )
}

fn event_of(frame: &Bytes) -> &str {
    std::str::from_utf8(frame).unwrap().lines().next().unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_subscriber_is_sent_its_snapshot_then_each_live_delta() {
    let (feed, store) = feed_and_store();
    let mut stream = subscriber(&feed, &store);
    register(&store, "o1");
    assert_eq!(event_of(&stream.next().await.unwrap()), "event: snapshot");
    assert_eq!(event_of(&stream.next().await.unwrap()), "event: delta");
}

#[tokio::test(start_paused = true)]
async fn a_quiet_stream_is_sent_a_keep_alive_comment() {
    let (feed, store) = feed_and_store();
    let mut stream = subscriber(&feed, &store);
    stream.next().await.unwrap();
    let comment = tokio::time::timeout(KEEP_ALIVE + Duration::from_secs(1), stream.next())
        .await
        .expect("a comment within the interval")
        .unwrap();
    assert_eq!(&comment[..], super::KEEP_ALIVE);
}

#[tokio::test(start_paused = true)]
async fn a_subscriber_that_falls_behind_is_cut_off_and_the_writes_go_on() {
    let (feed, store) = feed_and_store();
    let mut stream = subscriber(&feed, &store);
    stream.next().await.unwrap();
    for n in 0..=CHANNEL_CAPACITY {
        register(&store, &format!("o{n}"));
    }
    assert_eq!(
        stream.next().await,
        None,
        "ended, to resume from its last id"
    );
    assert_eq!(
        store.read().registry_size(),
        CHANNEL_CAPACITY + 1,
        "no write waited"
    );
}
