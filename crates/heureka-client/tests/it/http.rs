//! `DiscoveryHttpClient` over real sockets: an application's name resolved through a real
//! Heureka server, retries after a killed instance, and the errors when nothing can answer.

use heureka_client::{
    Address, DiscoveryError, DiscoveryHttpClient, EurekaClient, Selector, ServedBy, Strategy,
};
use heureka_core::{Instance, Port};

use crate::backend::{calling, client_seeing, near_and_far, orders_up, served_by, Backend};
use crate::support::Server;

/// A server knowing `near` (zone-a, killed: its port refuses connections, yet it is still
/// registered UP, as after a crash) and `far` (zone-b, alive). A caller preferring zone-a picks
/// the dead instance first on every call.
async fn one_dead_in_the_preferred_zone() -> (Server, EurekaClient) {
    let server = Server::start().await;
    let (near, _far) = near_and_far(&server, "UP").await;
    near.kill().await;
    let eureka = client_seeing(&server, "ORDERS", 2).await;
    (server, eureka)
}

/// A server knowing three `ORDERS` instances, `o1` to `o3`, all killed while registered `UP`.
async fn three_dead() -> (Server, EurekaClient) {
    let server = Server::start().await;
    for name in ["o1", "o2", "o3"] {
        let backend = Backend::start(name).await;
        backend.register(&server, "ORDERS", "UP", &[]).await;
        backend.kill().await;
    }
    let eureka = client_seeing(&server, "ORDERS", 3).await;
    (server, eureka)
}

fn preferring_zone_a(eureka: &EurekaClient) -> DiscoveryHttpClient<&EurekaClient> {
    calling(
        eureka,
        Selector::new(Strategy::RoundRobin).prefer_zone("zone-a"),
    )
}

#[tokio::test]
async fn a_killed_instance_is_retried_on_another_and_the_call_succeeds() {
    let (_server, eureka) = one_dead_in_the_preferred_zone().await;
    let client = preferring_zone_a(&eureka);

    for _ in 0..5 {
        let response = client.get("http://orders/api/x").send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(served_by(response).await, "far");
    }
    drop(client);
    eureka.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_response_says_which_instance_answered_and_after_how_many_attempts() {
    let (_server, eureka) = one_dead_in_the_preferred_zone().await;
    let client = preferring_zone_a(&eureka);

    let response = client.get("http://orders/api/x").send().await.unwrap();
    // The dead zone-a instance was tried first, then the zone-b one answered.
    assert_eq!(
        response.extensions().get::<ServedBy>(),
        Some(&ServedBy {
            instance_id: "far".into(),
            attempts: 2
        })
    );
    drop(client);
    eureka.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_retried_post_sends_its_body_again() {
    let (_server, eureka) = one_dead_in_the_preferred_zone().await;
    let client = preferring_zone_a(&eureka);

    let response = client
        .post("http://ORDERS/orders")
        .header("content-type", "text/plain")
        .body("two apples")
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.text().await.unwrap(),
        "far POST /orders two apples"
    );
    drop(client);
    eureka.shutdown().await.unwrap();
}

#[tokio::test]
async fn with_one_attempt_a_killed_instance_fails_the_call() {
    let (_server, eureka) = one_dead_in_the_preferred_zone().await;
    let client = preferring_zone_a(&eureka).max_attempts(1);

    let error = client.get("http://orders/api/x").send().await.unwrap_err();
    assert!(
        matches!(&error, DiscoveryError::Unreachable { app, attempts: 1, .. } if app == "orders"),
        "{error}"
    );
    drop(client);
    eureka.shutdown().await.unwrap();
}

#[tokio::test]
async fn when_every_instance_is_dead_the_call_fails_after_trying_each_once() {
    let (_server, eureka) = three_dead().await;
    let client = calling(&eureka, Selector::new(Strategy::Random)).max_attempts(5);

    let error = client.get("http://orders/").send().await.unwrap_err();
    // Three instances, each tried once, though five attempts were allowed.
    assert!(
        matches!(&error, DiscoveryError::Unreachable { attempts: 3, .. }),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("no instance of orders could be reached"),
        "{error}"
    );
    drop(client);
    eureka.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_default_is_one_retry_on_the_next_instance() {
    let (_server, eureka) = three_dead().await;
    let client = calling(&eureka, Selector::new(Strategy::RoundRobin));

    let error = client.get("http://orders/").send().await.unwrap_err();
    assert!(
        matches!(&error, DiscoveryError::Unreachable { attempts: 2, .. }),
        "{error}"
    );
    drop(client);
    eureka.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_retry_never_goes_back_to_an_instance_already_tried() {
    // Two dead instances and one alive, three attempts: a call succeeds only if no dead
    // instance is tried twice, whatever the random order.
    let mut list = Vec::new();
    let mut alive = None;
    for name in ["dead-1", "live", "dead-2"] {
        let backend = Backend::start(name).await;
        list.push(instance(name, backend.port));
        if name == "live" {
            alive = Some(backend);
        } else {
            backend.kill().await;
        }
    }
    let client = calling(list, Selector::new(Strategy::Random).seed(11)).max_attempts(3);

    for _ in 0..20 {
        let response = client.get("http://orders/").send().await.unwrap();
        assert_eq!(served_by(response).await, "live");
    }
    drop(alive);
}

#[tokio::test]
async fn an_http_error_status_is_an_answer_and_is_not_retried() {
    let server = Server::start().await;
    let (_near, _far) = near_and_far(&server, "UP").await;
    let eureka = client_seeing(&server, "ORDERS", 2).await;
    let client = preferring_zone_a(&eureka);

    let response = client.get("http://orders/status/503").send().await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(served_by(response).await, "near");
    drop(client);
    eureka.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_application_without_instances_is_a_clear_error() {
    let server = Server::start().await;
    let eureka = client_seeing(&server, "ORDERS", 0).await;
    let client = calling(&eureka, Selector::new(Strategy::RoundRobin));

    let error = client.get("http://shipping/api").send().await.unwrap_err();
    assert!(
        matches!(&error, DiscoveryError::NoInstance { app } if app == "shipping"),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "no instance of shipping is available (none UP and matching the selector)"
    );
    drop(client);
    eureka.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_filter_matching_no_instance_is_the_same_error() {
    let server = Server::start().await;
    let _stable = orders_up(&server, "stable", ("version", "stable")).await;
    let eureka = client_seeing(&server, "ORDERS", 1).await;
    let client = calling(
        &eureka,
        Selector::new(Strategy::RoundRobin).require_metadata("version", "canary"),
    );

    let error = client.get("http://orders/").send().await.unwrap_err();
    assert!(
        matches!(error, DiscoveryError::NoInstance { .. }),
        "{error}"
    );
    drop(client);
    eureka.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_ip_address_reaches_an_instance_whose_host_name_does_not_resolve_here() {
    let server = Server::start().await;
    let orders = Backend::start("o1").await;
    orders
        .register_as(&server, "ORDERS", "UP", "orders-1.invalid", &[])
        .await;
    let eureka = client_seeing(&server, "ORDERS", 1).await;
    let client = calling(&eureka, Selector::new(Strategy::RoundRobin)).address(Address::IpAddr);

    let response = client.get("http://orders/").send().await.unwrap();
    assert_eq!(served_by(response).await, "o1");
    drop(client);
    eureka.shutdown().await.unwrap();
}

/// An `ORDERS` instance on 127.0.0.1:`port`, for a source that is a plain list.
fn instance(id: &str, port: u16) -> Instance {
    let mut instance = Instance::new("ORDERS", id, "127.0.0.1", "127.0.0.1", 0);
    instance.port = Port {
        number: u32::from(port),
        enabled: true,
    };
    instance
}
