//! The events a client publishes.

use heureka_client::{ClientEvent, EurekaClient, FetchKind, InstanceStatus};

use crate::support::{
    billing_subscribed, client_config, dead_url, published, subscribed_from_start, wait_for, Server,
};

#[tokio::test]
async fn start_publishes_the_first_full_fetch_and_the_registration() {
    let server = Server::start().await;
    server.register("ORDERS", "o1", 90).await;
    let config = client_config(vec![server.service_url()], "billing", "b1");
    let (client, mut events) = subscribed_from_start(config).await;

    assert_eq!(
        events.recv().await.unwrap(),
        ClientEvent::CacheRefreshed {
            kind: FetchKind::Full,
            applications: 1,
            instances: 1
        }
    );
    assert_eq!(
        events.recv().await.unwrap(),
        ClientEvent::InstancesChanged {
            app: "ORDERS".into()
        }
    );
    assert_eq!(
        events.recv().await.unwrap(),
        ClientEvent::Registered {
            status: InstanceStatus::Up
        }
    );
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_failed_registration_is_published() {
    let builder = EurekaClient::builder(client_config(vec![dead_url()], "billing", "b1"));
    let mut events = builder.subscribe();
    assert!(builder.start().await.is_err());

    wait_for(&mut events, "the failed registration", |event| {
        matches!(event, ClientEvent::RegistrationFailed { .. })
    })
    .await;
}

#[tokio::test]
async fn a_heartbeat_is_published_as_renewed() {
    let server = Server::start().await;
    let (client, mut events) = billing_subscribed(&server).await;

    published(&mut events, "a heartbeat", ClientEvent::Renewed).await;
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_heartbeat_that_fails_is_published() {
    let server = Server::start().await;
    let (_client, mut events) = billing_subscribed(&server).await;

    server.stop().await;
    wait_for(&mut events, "a failed heartbeat", |event| {
        matches!(event, ClientEvent::RenewalFailed { .. })
    })
    .await;
}

#[tokio::test]
async fn a_refresh_by_delta_is_published_with_the_copys_counts() {
    let server = Server::start().await;
    let (client, mut events) = billing_subscribed(&server).await;

    server.register("ORDERS", "o1", 90).await;
    // The copy holds the client's own instance and the new one.
    let both = ClientEvent::CacheRefreshed {
        kind: FetchKind::Delta,
        applications: 2,
        instances: 2,
    };
    published(&mut events, "a delta refresh with both instances", both).await;
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_new_instance_is_published_as_a_change_of_its_application() {
    let server = Server::start().await;
    let (client, mut events) = billing_subscribed(&server).await;

    server.register("ORDERS", "o1", 90).await;
    let orders = ClientEvent::InstancesChanged {
        app: "ORDERS".into(),
    };
    published(&mut events, "ORDERS changed", orders).await;
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_status_the_application_sets_is_published_as_a_status_change() {
    let server = Server::start().await;
    let (client, mut events) = billing_subscribed(&server).await;

    client.set_status(InstanceStatus::Down);
    assert_eq!(
        events.recv().await.unwrap(),
        ClientEvent::StatusChanged {
            old: InstanceStatus::Up,
            new: InstanceStatus::Down
        }
    );
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_operator_override_is_published_as_a_remote_status_change() {
    let server = Server::start().await;
    let (client, mut events) = billing_subscribed(&server).await;

    server.set_status("BILLING", "b1", "OUT_OF_SERVICE").await;
    wait_for(&mut events, "the remote status change", |event| {
        matches!(
            event,
            ClientEvent::RemoteStatusChanged {
                new: Some(InstanceStatus::OutOfService),
                ..
            }
        )
    })
    .await;
    // The client still reports itself UP: the override is the server's, not its own.
    assert_eq!(client.status(), InstanceStatus::Up);
    client.shutdown().await.unwrap();
}
