//! Failover across service URLs.

use heureka_client::{EurekaClient, InstanceStatus};

use crate::support::{
    client_config, dead_url, eventually, registration_of, unavailable_url, Server,
};

#[tokio::test]
async fn a_dead_first_service_url_is_skipped() {
    let server = Server::start().await;
    server.register("ORDERS", "o1", 90).await;
    let urls = vec![dead_url(), server.service_url()];
    let client = EurekaClient::start(client_config(urls, "billing", "b1"))
        .await
        .unwrap();

    assert!(server.instance("BILLING", "b1").await.is_some());
    assert_eq!(client.instances("ORDERS").len(), 1);
    client.shutdown().await.unwrap();
    assert!(server.instance("BILLING", "b1").await.is_none());
}

#[tokio::test]
async fn a_first_service_url_answering_503_is_skipped() {
    let server = Server::start().await;
    let urls = vec![unavailable_url().await, server.service_url()];
    let client = EurekaClient::start(client_config(urls, "billing", "b1"))
        .await
        .unwrap();

    assert!(server.instance("BILLING", "b1").await.is_some());
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn when_its_server_stops_the_client_moves_to_the_next_and_registers_there() {
    let first = Server::start().await;
    let second = Server::start().await;
    let urls = vec![first.service_url(), second.service_url()];
    let client = EurekaClient::start(client_config(urls, "billing", "b1"))
        .await
        .unwrap();
    // The two servers are not peers, so the second knows the instance only if the client
    // itself registers there.
    assert!(second.instance("BILLING", "b1").await.is_none());
    let mut events = client.subscribe();

    first.stop().await;
    // The heartbeat goes to the second server, whose 404 is answered by a registration there,
    // the only server left to answer one.
    registration_of(&mut events, InstanceStatus::Up).await;
    assert!(second.instance("BILLING", "b1").await.is_some());
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn start_fails_when_no_service_url_answers() {
    let urls = vec![dead_url(), dead_url()];
    let error = EurekaClient::start(client_config(urls, "billing", "b1"))
        .await
        .err()
        .expect("no server to register with");
    assert!(
        error.to_string().contains("every service URL failed"),
        "{error}"
    );
}

#[tokio::test]
async fn after_failing_over_the_client_returns_to_its_preferred_server_when_the_session_ends() {
    let preferred = Server::start().await;
    let other = Server::start().await;
    let port = preferred.port;
    let mut config = client_config(
        vec![preferred.service_url(), other.service_url()],
        "billing",
        "b1",
    );
    // The failed URL stays quarantined for the whole test: only the end of a session can
    // bring the client back to it.
    config.quarantine = std::time::Duration::from_secs(3600);
    config.session_reconnect_interval = std::time::Duration::from_secs(2);
    let client = EurekaClient::start(config).await.unwrap();
    let mut events = client.subscribe();

    preferred.stop().await;
    // The client fails over: a registration answered by the only server left.
    registration_of(&mut events, InstanceStatus::Up).await;
    assert!(other.instance("BILLING", "b1").await.is_some());
    // The preferred server comes back empty; the client registers there once it returns to it.
    // Polled: a registration event does not say which server answered, and a late heartbeat
    // can have `other` register the instance again before the session ends.
    let preferred = Server::start_at(port).await;
    eventually("the client is back on the preferred server", || async {
        preferred.instance("BILLING", "b1").await.is_some()
    })
    .await;
    client.shutdown().await.unwrap();
}
