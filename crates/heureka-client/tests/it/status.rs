//! The instance's own status, health check and metadata, and how they reach the server: as
//! re-registrations, which the server's status rules (§6.6) may overrule.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use heureka_client::{ClientConfig, ClientEvent, EurekaClient, InstanceStatus};
use tokio::sync::broadcast;

use crate::support::{client_config, eventually, registration_of, subscribed, Server};

/// A config whose heartbeats do not come during a test, so that whatever reaches the server
/// came through a replication round: a heartbeat carrying a newer `lastDirtyTimestamp` would
/// be answered 404 and re-register too (tested on its own below).
fn without_heartbeats(server: &Server) -> ClientConfig {
    let mut config = client_config(vec![server.service_url()], "billing", "b1");
    config.lease_renewal_interval = Duration::from_secs(3600);
    config.lease_duration = Duration::from_secs(3600);
    config
}

/// A health check answering `UP` while `healthy` holds, `DOWN` otherwise.
fn health_flag(healthy: &Arc<AtomicBool>) -> impl Fn() -> std::future::Ready<InstanceStatus> {
    let healthy = healthy.clone();
    move || {
        std::future::ready(if healthy.load(Ordering::SeqCst) {
            InstanceStatus::Up
        } else {
            InstanceStatus::Down
        })
    }
}

/// A client of `server` without heartbeats whose health check answers `UP` while the flag
/// holds, which starts as `healthy`.
async fn with_health_check(server: &Server, healthy: bool) -> (EurekaClient, Arc<AtomicBool>) {
    let healthy = Arc::new(AtomicBool::new(healthy));
    let client = EurekaClient::builder(without_heartbeats(server))
        .health_check(health_flag(&healthy))
        .start()
        .await
        .unwrap();
    (client, healthy)
}

/// Waits for the client's registration carrying `status`; asserts the server then shows
/// `shown` for the instance.
async fn registered_and_shown(
    events: &mut broadcast::Receiver<ClientEvent>,
    server: &Server,
    status: InstanceStatus,
    shown: &str,
) {
    registration_of(events, status).await;
    assert_eq!(server.status("BILLING", "b1").await, shown);
}

/// A client configured by `config` for a fresh server sets its status to `DOWN`: the
/// registration that carries it makes the server show it.
async fn a_down_status_reaches_the_server(config: impl FnOnce(&Server) -> ClientConfig) {
    let server = Server::start().await;
    let (client, mut events) = subscribed(config(&server)).await;

    client.set_status(InstanceStatus::Down);
    registered_and_shown(&mut events, &server, InstanceStatus::Down, "DOWN").await;
    client.shutdown().await.unwrap();
}

/// A client whose health check answers `healthy`, shown by the server as `shown`, until the
/// check turns: the registration that carries `then` makes the server show `shown_then`.
async fn a_turning_health_check_reaches_the_server(
    healthy: bool,
    shown: &str,
    then: InstanceStatus,
    shown_then: &str,
) {
    let server = Server::start().await;
    let (client, flag) = with_health_check(&server, healthy).await;
    assert_eq!(server.status("BILLING", "b1").await, shown);
    let mut events = client.subscribe();

    flag.store(!healthy, Ordering::SeqCst);
    registered_and_shown(&mut events, &server, then, shown_then).await;
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_status_the_application_sets_reaches_the_server() {
    a_down_status_reaches_the_server(without_heartbeats).await;
}

#[tokio::test]
async fn with_on_demand_updates_off_a_status_change_is_sent_by_the_periodic_round() {
    a_down_status_reaches_the_server(|server| {
        let mut config = without_heartbeats(server);
        config.on_demand_update_status_change = false;
        config
    })
    .await;
}

#[tokio::test]
async fn the_first_registration_carries_the_health_checks_answer() {
    let server = Server::start().await;
    let (client, _healthy) = with_health_check(&server, false).await;

    // No waiting: the registration `start` made is already DOWN.
    assert_eq!(server.status("BILLING", "b1").await, "DOWN");
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_failing_health_check_takes_the_registered_instance_down() {
    a_turning_health_check_reaches_the_server(true, "UP", InstanceStatus::Down, "DOWN").await;
}

#[tokio::test]
async fn a_recovered_health_check_brings_the_instance_back_up() {
    a_turning_health_check_reaches_the_server(false, "DOWN", InstanceStatus::Up, "UP").await;
}

#[tokio::test]
async fn a_status_the_application_set_outranks_a_healthy_check() {
    let server = Server::start().await;
    let checks = Arc::new(AtomicUsize::new(0));
    let counted = checks.clone();
    let client = EurekaClient::builder(without_heartbeats(&server))
        .health_check(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            std::future::ready(InstanceStatus::Up)
        })
        .status(InstanceStatus::Starting)
        .start()
        .await
        .unwrap();

    // Two replication rounds after the start have consulted the healthy check.
    eventually("the health check is consulted in later rounds", || async {
        checks.load(Ordering::SeqCst) >= 3
    })
    .await;
    assert_eq!(client.status(), InstanceStatus::Starting);
    assert_eq!(server.status("BILLING", "b1").await, "STARTING");
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_operator_override_outranks_a_client_reporting_up() {
    let server = Server::start().await;
    let (client, mut events) = subscribed(without_heartbeats(&server)).await;
    server.set_status("BILLING", "b1", "OUT_OF_SERVICE").await;

    // The client goes DOWN (which the server always takes) and UP again; the override holds.
    client.set_status(InstanceStatus::Down);
    registered_and_shown(&mut events, &server, InstanceStatus::Down, "DOWN").await;
    client.set_status(InstanceStatus::Up);
    registered_and_shown(&mut events, &server, InstanceStatus::Up, "OUT_OF_SERVICE").await;
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn updated_metadata_reaches_the_server() {
    let server = Server::start().await;
    let (client, mut events) = subscribed(without_heartbeats(&server)).await;

    client.update_metadata([("version".to_owned(), "2.1".to_owned())]);
    registration_of(&mut events, InstanceStatus::Up).await;
    assert_eq!(
        server.instance("BILLING", "b1").await.unwrap()["metadata"]["version"],
        "2.1"
    );
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_change_not_yet_sent_reaches_the_server_through_a_heartbeat() {
    a_down_status_reaches_the_server(|server| {
        let mut config = client_config(vec![server.service_url()], "billing", "b1");
        // No replication round and no on-demand update come during the test: only the
        // heartbeat, carrying a `lastDirtyTimestamp` newer than the server's, answered 404,
        // re-registers (the registration answering that 404 is the event waited for).
        config.on_demand_update_status_change = false;
        config.instance_info_replication_interval = Duration::from_secs(3600);
        config.initial_instance_info_replication_interval = Duration::from_secs(3600);
        config
    })
    .await;
}
