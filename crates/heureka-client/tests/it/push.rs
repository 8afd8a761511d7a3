//! The client following the server's push (docs/push.md) over real sockets: a change reaches
//! the instance lists within a second while the periodic fetch runs every 30 s, so it is the
//! push that brought it; a cut connection resumes without losing a change; a server without
//! push is polled; the acknowledgement books the client as a consumer, which confirms it to a
//! drain.
//!
//! Every wait is for the client's own event that the effect follows, with a deadline: one
//! second where the speed is the point, [`wait_for`]'s bound elsewhere.

use std::future::Future;
use std::time::Duration;

use heureka_client::{ClientConfig, ClientEvent, EurekaClient, FetchKind, InstanceStatus};
use tokio::sync::broadcast;

use crate::support::{client_config, dead_url, subscribed_from_start, wait_for, Server};
use heureka_testkit::Proxy;

/// How soon a pushed change must be in the instance lists.
const PUSH_DEADLINE: Duration = Duration::from_secs(1);

/// A client of `urls` registering `BILLING/b1` whose periodic fetch is 30 s away: anything it
/// learns sooner came by the push.
fn pushed_config(urls: Vec<String>) -> ClientConfig {
    let mut config = client_config(urls, "billing", "b1");
    config.registry_fetch_interval = Duration::from_secs(30);
    config
}

/// [`pushed_config`] started, once its stream has delivered its first snapshot, with its
/// events from then on.
async fn following(urls: Vec<String>) -> (EurekaClient, broadcast::Receiver<ClientEvent>) {
    let (client, mut events) = subscribed_from_start(pushed_config(urls)).await;
    first_snapshot(&mut events).await;
    (client, events)
}

async fn first_snapshot(events: &mut broadcast::Receiver<ClientEvent>) {
    wait_for(events, "the stream's first snapshot", |event| {
        matches!(
            event,
            ClientEvent::CacheRefreshed {
                kind: FetchKind::Snapshot,
                ..
            }
        )
    })
    .await;
}

/// Runs `change` on the server, then waits at most [`PUSH_DEADLINE`] for the client's
/// `InstancesChanged` of ORDERS.
async fn reaches_the_client_within_a_second(
    events: &mut broadcast::Receiver<ClientEvent>,
    what: &str,
    change: impl Future<Output = ()>,
) {
    change.await;
    let changed = wait_for(
        events,
        what,
        |event| matches!(event, ClientEvent::InstancesChanged { app } if app == "ORDERS"),
    );
    if tokio::time::timeout(PUSH_DEADLINE, changed).await.is_err() {
        panic!("not in the instance list within {PUSH_DEADLINE:?}: {what}");
    }
}

fn offered(client: &EurekaClient) -> Vec<String> {
    let mut ids: Vec<String> = client
        .instances("ORDERS")
        .iter()
        .map(|instance| instance.id().to_owned())
        .collect();
    ids.sort();
    ids
}

fn statuses(client: &EurekaClient) -> Vec<(String, InstanceStatus)> {
    client
        .all_instances("ORDERS")
        .iter()
        .map(|instance| (instance.id().to_owned(), instance.status))
        .collect()
}

#[tokio::test]
async fn a_new_registration_is_in_the_instance_list_within_a_second_with_the_fetch_at_30_s() {
    let server = Server::start().await;
    let (client, mut events) = following(vec![server.service_url()]).await;

    reaches_the_client_within_a_second(
        &mut events,
        "ORDERS/o1 registered",
        server.register("ORDERS", "o1", 90),
    )
    .await;
    assert_eq!(offered(&client), ["o1"]);
    assert_eq!(client.fetch_counts().full, 1, "only the start-up fetch");
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_status_change_leaves_the_instance_list_within_a_second_with_the_fetch_at_30_s() {
    let server = Server::start().await;
    server.register("ORDERS", "o1", 90).await;
    server.register("ORDERS", "o2", 90).await;
    let (client, mut events) = following(vec![server.service_url()]).await;
    assert_eq!(offered(&client), ["o1", "o2"]);

    reaches_the_client_within_a_second(
        &mut events,
        "ORDERS/o1 out of service",
        server.set_status("ORDERS", "o1", "OUT_OF_SERVICE"),
    )
    .await;
    assert_eq!(offered(&client), ["o2"]);
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_cancel_leaves_the_instance_list_within_a_second_with_the_fetch_at_30_s() {
    let server = Server::start().await;
    server.register("ORDERS", "o1", 90).await;
    server.register("ORDERS", "o2", 90).await;
    let (client, mut events) = following(vec![server.service_url()]).await;

    reaches_the_client_within_a_second(
        &mut events,
        "ORDERS/o2 cancelled",
        server.cancel("ORDERS", "o2"),
    )
    .await;
    assert_eq!(offered(&client), ["o1"]);
    assert!(client.instances_by_id("o2").is_empty());
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_cut_connection_resumes_from_the_last_event_and_loses_no_change() {
    let server = Server::start().await;
    server.register("ORDERS", "o1", 90).await;
    server.register("ORDERS", "o2", 90).await;
    let proxy = Proxy::to(server.port).await;
    let (client, mut events) = following(vec![proxy.service_url.clone()]).await;

    proxy.cut();
    // Made while the client is cut off (it waits a second before it connects again).
    server.register("ORDERS", "o3", 90).await;
    server.set_status("ORDERS", "o1", "OUT_OF_SERVICE").await;
    server.cancel("ORDERS", "o2").await;

    let expected = [
        ("o1".to_owned(), InstanceStatus::OutOfService),
        ("o3".to_owned(), InstanceStatus::Up),
    ];
    wait_for(&mut events, "the changes made while cut off", |_| {
        statuses(&client) == expected
    })
    .await;
    let counts = client.fetch_counts();
    assert_eq!(
        counts.snapshots, 1,
        "resumed, not started again: {counts:?}"
    );
    assert_eq!(counts.full, 1, "no fetch brought them: {counts:?}");
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_server_with_push_off_answers_404_and_the_client_keeps_its_copy_by_polling() {
    let server = Server::start_with(&["--heureka.push.enabled=false"]).await;
    let (client, mut events) =
        subscribed_from_start(client_config(vec![server.service_url()], "billing", "b1")).await;

    server.register("ORDERS", "o1", 90).await;
    wait_for(
        &mut events,
        "ORDERS changed by a fetch",
        |event| matches!(event, ClientEvent::InstancesChanged { app } if app == "ORDERS"),
    )
    .await;
    assert_eq!(offered(&client), ["o1"]);
    let counts = client.fetch_counts();
    assert_eq!((counts.snapshots, counts.pushed), (0, 0), "{counts:?}");
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_client_with_push_off_does_not_follow_a_server_that_pushes() {
    let server = Server::start().await;
    let mut config = client_config(vec![server.service_url()], "billing", "b1");
    config.push_enabled = false;
    let (client, mut events) = subscribed_from_start(config).await;

    server.register("ORDERS", "o1", 90).await;
    wait_for(
        &mut events,
        "ORDERS changed by a fetch",
        |event| matches!(event, ClientEvent::InstancesChanged { app } if app == "ORDERS"),
    )
    .await;
    let counts = client.fetch_counts();
    assert_eq!((counts.snapshots, counts.pushed), (0, 0), "{counts:?}");
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_push_comes_from_the_next_service_url_when_the_first_is_dead() {
    let server = Server::start().await;
    let (client, mut events) = following(vec![dead_url(), server.service_url()]).await;

    reaches_the_client_within_a_second(
        &mut events,
        "ORDERS/o1 registered",
        server.register("ORDERS", "o1", 90),
    )
    .await;
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_push_is_asked_for_with_the_credentials_of_the_service_url() {
    let server = Server::start_with(&[
        "--spring.security.user.name=eureka",
        "--spring.security.user.password=s3cret",
    ])
    .await;
    let url = format!("http://eureka:s3cret@127.0.0.1:{}/eureka/", server.port);
    let (client, _events) = following(vec![url]).await;
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_acknowledgement_books_the_client_as_a_consumer_holding_the_pushed_version() {
    let server = Server::start().await;
    let (client, mut events) = following(vec![server.service_url()]).await;

    server.register("ORDERS", "o1", 90).await;
    let version = server.json("consumers").await["version"].as_u64().unwrap();
    wait_for(
        &mut events,
        "the acknowledgement of the new version",
        |event| matches!(event, ClientEvent::Acknowledged { version: acked } if *acked >= version),
    )
    .await;

    // The client fetches every 30 s and fetched before the registration: only the
    // acknowledgement can have booked it at the new version.
    let consumers = server.json("consumers").await;
    let booked = consumers["consumers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|consumer| consumer["version"].as_u64() >= Some(version) && consumer["push"] == true);
    assert!(booked, "{consumers}");
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_drain_confirms_a_client_following_the_push_without_waiting_for_its_fetch() {
    let server = Server::start().await;
    server.register("ORDERS", "o1", 90).await;
    let (client, mut events) = following(vec![server.service_url()]).await;

    let started = server.put_json("apps/ORDERS/o1/drain").await;
    let required = started["required"].as_u64().unwrap();
    wait_for(
        &mut events,
        "the acknowledgement of the drain's change",
        |event| matches!(event, ClientEvent::Acknowledged { version } if *version >= required),
    )
    .await;

    // The client's next fetch is 30 s away: the acknowledgement is what confirms it.
    let progress = server.json("apps/ORDERS/o1/drain").await;
    let consumers = progress["consumers"].as_array().unwrap();
    assert!(
        !consumers.is_empty() && consumers.iter().all(|c| c["confirmed"] == true),
        "{progress}"
    );
    client.shutdown().await.unwrap();
}
