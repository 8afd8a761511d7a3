//! What the `ClientConfig` switches do against a real server: `register_with_eureka`,
//! `fetch_registry`, `filter_only_up_instances`, `initial_status`, `healthcheck_enabled`; and
//! what the client shows of its copy whatever the filter.

use std::time::Duration;

use heureka_client::{ClientConfig, ClientEvent, EurekaClient, InstanceStatus};

use crate::support::{
    client_config, instances_changed, published, registration_of, subscribed_from_start, wait_for,
    HealthEndpoint, Server,
};

fn ids(instances: &[heureka_client::Instance]) -> Vec<String> {
    let mut ids: Vec<String> = instances.iter().map(|i| i.id().to_owned()).collect();
    ids.sort();
    ids
}

fn config(server: &Server) -> ClientConfig {
    client_config(vec![server.service_url()], "billing", "b1")
}

/// [`config`] with `register_with_eureka` off: a client that only reads.
fn reading_only(server: &Server) -> ClientConfig {
    let mut config = config(server);
    config.register_with_eureka = false;
    config
}

/// Registers `ORDERS/o1` and `ORDERS/o2`, and takes `o2` out of service.
async fn o1_up_and_o2_out_of_service(server: &Server) {
    server.register("ORDERS", "o1", 90).await;
    server.register("ORDERS", "o2", 90).await;
    server.set_status("ORDERS", "o2", "OUT_OF_SERVICE").await;
}

/// Asserts the server shows `BILLING/b1` as `status` as soon as `client` started (its start
/// registered it); shuts the client down.
async fn shown_at_start(server: &Server, client: EurekaClient, status: &str) {
    assert_eq!(server.status("BILLING", "b1").await, status);
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn without_register_with_eureka_the_client_fetches_but_never_registers() {
    let server = Server::start().await;
    server.register("ORDERS", "o1", 90).await;
    let config = reading_only(&server);
    let (client, mut events) = subscribed_from_start(config).await;

    assert_eq!(ids(&client.instances("ORDERS")), ["o1"]);
    // The start-up fetch, then a refresh: by then a heartbeat (same interval) would have
    // registered the instance, had the start not.
    for _ in 0..2 {
        wait_for(&mut events, "a refresh", |event| {
            matches!(event, ClientEvent::CacheRefreshed { .. })
        })
        .await;
    }
    assert!(server.instance("BILLING", "b1").await.is_none());
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn without_register_with_eureka_shutdown_cancels_nothing() {
    let server = Server::start().await;
    // Another process registered under the same id; a reading client must not remove it.
    server.register("BILLING", "b1", 90).await;
    let config = reading_only(&server);
    let client = EurekaClient::start(config).await.unwrap();

    client.shutdown().await.unwrap();
    assert!(server.instance("BILLING", "b1").await.is_some());
}

#[tokio::test]
async fn without_fetch_registry_nothing_is_fetched_and_lookups_are_empty() {
    let server = Server::start().await;
    server.register("ORDERS", "o1", 90).await;
    let mut config = config(&server);
    config.fetch_registry = false;
    let (client, mut events) = subscribed_from_start(config).await;

    // Two heartbeats, one second apart: a refresh task on the same interval would have run.
    for _ in 0..2 {
        published(&mut events, "a heartbeat", ClientEvent::Renewed).await;
    }
    assert_eq!(client.fetch_counts().full, 0);
    assert!(client.instances("ORDERS").is_empty());
    assert!(client.applications().is_empty());
    // It still registers.
    assert!(server.instance("BILLING", "b1").await.is_some());
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn without_the_up_filter_instances_of_every_status_are_offered() {
    let server = Server::start().await;
    o1_up_and_o2_out_of_service(&server).await;
    let mut config = config(&server);
    config.filter_only_up_instances = false;
    let client = EurekaClient::start(config).await.unwrap();

    assert_eq!(ids(&client.instances("ORDERS")), ["o1", "o2"]);
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_copy_shows_every_application_and_instance_whatever_the_filter() {
    let server = Server::start().await;
    o1_up_and_o2_out_of_service(&server).await;
    // Events from the start on: the start-up fetch comes before the own registration, which
    // comes in with the next delta.
    let (client, mut events) = subscribed_from_start(config(&server)).await;

    instances_changed(&mut events, "BILLING").await;
    assert_eq!(client.applications(), ["BILLING", "ORDERS"]);
    assert_eq!(ids(&client.instances("ORDERS")), ["o1"]);
    assert_eq!(ids(&client.all_instances("orders")), ["o1", "o2"]);
    let o2 = client.instances_by_id("o2");
    assert_eq!(o2.len(), 1);
    assert_eq!(o2[0].status, InstanceStatus::OutOfService);
    assert_eq!(client.apps_hashcode(), "OUT_OF_SERVICE_1_UP_2_");
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_configured_initial_status_is_registered_when_the_builder_names_none() {
    let server = Server::start().await;
    let mut config = config(&server);
    config.initial_status = InstanceStatus::Starting;
    let client = EurekaClient::start(config).await.unwrap();

    shown_at_start(&server, client, "STARTING").await;
}

#[tokio::test]
async fn the_builders_status_overrides_the_configured_initial_status() {
    let server = Server::start().await;
    let mut config = config(&server);
    config.initial_status = InstanceStatus::Starting;
    let client = EurekaClient::builder(config)
        .status(InstanceStatus::Down)
        .start()
        .await
        .unwrap();

    shown_at_start(&server, client, "DOWN").await;
}

/// A server, and an application's health URL answering `healthy` at first.
async fn with_health_endpoint(healthy: bool) -> (Server, HealthEndpoint) {
    (Server::start().await, HealthEndpoint::start(healthy).await)
}

/// A config whose registered health-check URL is `health`'s.
fn with_health_url(server: &Server, health: &HealthEndpoint, enabled: bool) -> ClientConfig {
    let mut config = config(server);
    config.urls.health_check = Some(health.url.clone());
    config.healthcheck_enabled = enabled;
    // Heartbeats stay out of the way: what reaches the server is the replicator's.
    config.lease_renewal_interval = Duration::from_secs(3600);
    config.lease_duration = Duration::from_secs(3600);
    config
}

#[tokio::test]
async fn with_healthcheck_enabled_the_own_health_url_decides_the_status() {
    let (server, health) = with_health_endpoint(false).await;
    let client = EurekaClient::start(with_health_url(&server, &health, true))
        .await
        .unwrap();
    let mut events = client.subscribe();

    assert_eq!(server.status("BILLING", "b1").await, "DOWN");
    health.set_healthy(true);
    registration_of(&mut events, InstanceStatus::Up).await;
    assert_eq!(server.status("BILLING", "b1").await, "UP");
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn without_healthcheck_enabled_the_own_health_url_is_not_consulted() {
    let (server, health) = with_health_endpoint(false).await;
    let client = EurekaClient::start(with_health_url(&server, &health, false))
        .await
        .unwrap();

    shown_at_start(&server, client, "UP").await;
}

#[tokio::test]
async fn a_health_check_given_in_code_is_used_instead_of_the_health_url() {
    let (server, health) = with_health_endpoint(true).await;
    let client = EurekaClient::builder(with_health_url(&server, &health, true))
        .health_check(|| async { InstanceStatus::Down })
        .start()
        .await
        .unwrap();

    shown_at_start(&server, client, "DOWN").await;
}

#[tokio::test]
async fn without_register_with_eureka_no_update_can_be_requested() {
    let server = Server::start().await;
    let config = reading_only(&server);
    let client = EurekaClient::start(config).await.unwrap();

    // The limiter would allow a first request; there is no registration to update.
    assert!(!client.request_update());
    client.shutdown().await.unwrap();
}
