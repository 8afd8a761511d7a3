//! Register, heartbeat, re-register after a 404, cancel.

use heureka_client::{EurekaClient, InstanceStatus};

use crate::support::{
    billing_client, billing_subscribed, client_config, eventually, registration_of, Server,
};

#[tokio::test]
async fn start_registers_the_instance_up() {
    let server = Server::start().await;
    let client = billing_client(&server).await;

    let instance = server.instance("BILLING", "b1").await.expect("registered");
    assert_eq!(instance["status"], "UP");
    assert_eq!(instance["port"]["$"], 8080);
    assert_eq!(instance["vipAddress"], "billing");
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn heartbeats_keep_the_lease_alive_past_its_duration() {
    let server = Server::start().await;
    let mut config = client_config(vec![server.service_url()], "billing", "b1");
    config.lease_duration = std::time::Duration::from_secs(1);
    let client = EurekaClient::start(config).await.unwrap();
    // Instances registered after the client, with the same lease but no heartbeats, one after
    // the other: once the server has evicted the second, the client's lease would have been
    // expired for a whole eviction cycle, had it not been renewed (eviction may take only some
    // of the expired leases per run, so one cycle alone would not tell).
    for id in ["s1", "s2"] {
        server.register("SILENT", id, 1).await;
        eventually("the silent instance is evicted", || async {
            server.instance("SILENT", id).await.is_none()
        })
        .await;
    }
    assert!(server.instance("BILLING", "b1").await.is_some());
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_restarted_server_gets_the_instance_back_after_a_heartbeat_404() {
    let server = Server::start().await;
    let (client, mut events) = billing_subscribed(&server).await;

    // The new server starts empty; only a heartbeat answered 404 makes the client register.
    let server = server.restart().await;
    assert!(server.instance("BILLING", "b1").await.is_none());
    registration_of(&mut events, InstanceStatus::Up).await;
    assert!(server.instance("BILLING", "b1").await.is_some());
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn shutdown_cancels_the_registration() {
    let server = Server::start().await;
    let client = billing_client(&server).await;

    client.shutdown().await.unwrap();
    assert!(server.instance("BILLING", "b1").await.is_none());
}

#[tokio::test]
async fn dropping_the_client_cancels_the_registration() {
    let server = Server::start().await;
    let client = billing_client(&server).await;

    drop(client);
    eventually("the instance is cancelled", || async {
        server.instance("BILLING", "b1").await.is_none()
    })
    .await;
}
