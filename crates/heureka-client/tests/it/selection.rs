//! Choosing among the instances a real Heureka server knows: a gray release split by metadata,
//! and zone preference with its fallback, each call made by name to tiny real services.

use std::collections::BTreeSet;

use heureka_client::{DiscoveryHttpClient, EurekaClient, Selector, Strategy};

use crate::backend::{calling, client_seeing, near_and_far, orders_up, served_by};
use crate::support::{instances_changed, Server};

/// Which instances served `calls` calls to `http://orders/`.
async fn served(client: &DiscoveryHttpClient<&EurekaClient>, calls: usize) -> BTreeSet<String> {
    let mut served = BTreeSet::new();
    for _ in 0..calls {
        let response = client.get("http://orders/hello").send().await.unwrap();
        assert_eq!(response.status(), 200);
        served.insert(served_by(response).await);
    }
    served
}

/// Ten calls from a client preferring zone-a, with `near` registered `near_status`: the client
/// sees `seen` `UP` instances, and every call is served by `expected`.
async fn preferring_zone_a_serves(near_status: &str, seen: usize, expected: &str) {
    let server = Server::start().await;
    let (_near, _far) = near_and_far(&server, near_status).await;
    let eureka = client_seeing(&server, "ORDERS", seen).await;

    let selector = Selector::new(Strategy::RoundRobin).prefer_zone("zone-a");
    assert_eq!(
        served(&calling(&eureka, selector), 10).await,
        [expected.to_owned()].into()
    );
    eureka.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_metadata_filter_sends_a_gray_release_to_its_version_only() {
    let server = Server::start().await;
    let _stable = orders_up(&server, "stable", ("version", "stable")).await;
    let _canary = orders_up(&server, "canary", ("version", "canary")).await;
    let eureka = client_seeing(&server, "ORDERS", 2).await;

    let canary_route = Selector::new(Strategy::RoundRobin).require_metadata("version", "canary");
    let stable_route = Selector::new(Strategy::RoundRobin).require_metadata("version", "stable");
    let unfiltered = Selector::new(Strategy::RoundRobin);

    assert_eq!(
        served(&calling(&eureka, canary_route), 10).await,
        ["canary".to_owned()].into()
    );
    assert_eq!(
        served(&calling(&eureka, stable_route), 10).await,
        ["stable".to_owned()].into()
    );
    // Without the filter, round robin reaches both versions: the filter is what decided.
    assert_eq!(served(&calling(&eureka, unfiltered), 2).await.len(), 2);
    eureka.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_callers_zone_is_served_while_it_has_an_up_instance() {
    preferring_zone_a_serves("UP", 2, "near").await;
}

#[tokio::test]
async fn a_zone_whose_instance_is_down_falls_back_to_the_other_zones() {
    // The zone's instance runs and answers, but is registered DOWN, so it must not be called.
    preferring_zone_a_serves("DOWN", 1, "far").await;
}

#[tokio::test]
async fn a_zone_taken_out_of_service_hands_its_calls_to_the_others() {
    let server = Server::start().await;
    let (_near, _far) = near_and_far(&server, "UP").await;
    let eureka = client_seeing(&server, "ORDERS", 2).await;
    let client = calling(
        &eureka,
        Selector::new(Strategy::RoundRobin).prefer_zone("zone-a"),
    );
    assert_eq!(served(&client, 4).await, ["near".to_owned()].into());
    let mut events = eureka.subscribe();

    server.set_status("ORDERS", "near", "OUT_OF_SERVICE").await;
    instances_changed(&mut events, "ORDERS").await;
    // The client sees the zone's instance leave.
    assert_eq!(eureka.instances("ORDERS").len(), 1);
    assert_eq!(served(&client, 4).await, ["far".to_owned()].into());
    drop(client);
    eureka.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_zone_nobody_is_in_spreads_calls_over_every_zone() {
    let server = Server::start().await;
    let _a = orders_up(&server, "a", ("zone", "zone-a")).await;
    let _b = orders_up(&server, "b", ("zone", "zone-b")).await;
    let eureka = client_seeing(&server, "ORDERS", 2).await;

    let selector = Selector::new(Strategy::RoundRobin).prefer_zone("zone-c");
    assert_eq!(served(&calling(&eureka, selector), 2).await.len(), 2);
    eureka.shutdown().await.unwrap();
}
