//! The local registry copy: full fetch, deltas, `UP` filtering. The fetch is what these tests
//! are about, so the clients that watch it follow no push (`push.rs` tests the push).

use heureka_client::{ClientConfig, EurekaClient};

use crate::support::{
    a_refresh_begun_now, billing_client, client_config, instances_changed, subscribed, Server,
};

/// A client of `server` registering `BILLING/b1` that keeps its copy by fetching only.
fn fetching_only(server: &Server) -> ClientConfig {
    let mut config = client_config(vec![server.service_url()], "billing", "b1");
    config.push_enabled = false;
    config
}

fn ids(client: &EurekaClient, app: &str) -> Vec<String> {
    let mut ids: Vec<String> = client
        .instances(app)
        .iter()
        .map(|instance| instance.id().to_owned())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn the_start_up_fetch_sees_instances_already_registered() {
    let server = Server::start().await;
    server.register("ORDERS", "o1", 90).await;
    let client = billing_client(&server).await;

    assert_eq!(ids(&client, "orders"), ["o1"]);
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn deltas_bring_in_a_new_instance_and_its_status_change() {
    let server = Server::start().await;
    let client = EurekaClient::start(fetching_only(&server)).await.unwrap();

    server.register("ORDERS", "o1", 90).await;
    server.register("ORDERS", "o2", 90).await;
    // A refresh begun after both registrations, not the next change of ORDERS: a refresh
    // between the two would bring in o1 alone.
    a_refresh_begun_now(&client).await;
    assert_eq!(ids(&client, "ORDERS"), ["o1", "o2"]);
    let mut events = client.subscribe();
    server.set_status("ORDERS", "o1", "OUT_OF_SERVICE").await;
    instances_changed(&mut events, "ORDERS").await;
    // The instance out of service is no longer offered.
    assert_eq!(ids(&client, "ORDERS"), ["o2"]);

    // Only the start-up fetch was a full one: every change came through a consistent delta.
    let counts = client.fetch_counts();
    assert_eq!(counts.full, 1);
    assert!(counts.deltas >= 2, "{counts:?}");
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_refused_delta_falls_back_to_a_full_fetch() {
    // The server answers 403 to `GET apps/delta`.
    let server = Server::start_with(&["--eureka.server.disable-delta=true"]).await;
    let (client, mut events) = subscribed(fetching_only(&server)).await;

    server.register("ORDERS", "o1", 90).await;
    instances_changed(&mut events, "ORDERS").await;
    assert_eq!(ids(&client, "ORDERS"), ["o1"]);
    let counts = client.fetch_counts();
    assert!(counts.full >= 2, "{counts:?}");
    assert_eq!(counts.deltas, 0);
    client.shutdown().await.unwrap();
}
