//! Takeovers over a real socket: a client registering an id whose live lease is at another
//! endpoint is counted, and refused when `heureka.refuse-takeovers` is on. The event it sends
//! is in `events/feed.rs`; the rule itself in heureka-core's `takeover.rs`.

use crate::support::{spring_body, TestServer};

/// `spring_body`'s instance, moved to another address.
fn moved_body(app: &str, id: &str) -> String {
    spring_body(app, id).replace("10.0.0.5", "10.6.6.6")
}

/// A server started with `args` holding `o-1`, registered as `orders`.
async fn holding_o_1(args: &[&str]) -> TestServer {
    let server = TestServer::start(args).await;
    server.register("orders", "o-1").await;
    server
}

async fn register_moved(server: &TestServer) -> reqwest::Response {
    server
        .post_json("/apps/orders", &moved_body("orders", "o-1"))
        .await
}

async fn ip_of_o1(server: &TestServer) -> String {
    let (status, body) = server
        .get_text("/apps/orders/o-1", Some("application/json"))
        .await;
    assert_eq!(status, 200);
    let instance: serde_json::Value = serde_json::from_str(&body).unwrap();
    instance["instance"]["ipAddr"].as_str().unwrap().to_owned()
}

async fn takeovers_counted(server: &TestServer) -> String {
    let text = crate::metrics::scrape(server).await;
    text.lines()
        .find(|line| line.starts_with("heureka_takeovers_total"))
        .unwrap_or_default()
        .to_owned()
}

/// Asserts the server has counted `count` takeovers.
async fn assert_takeovers_counted(server: &TestServer, count: u64) {
    let expected = format!("heureka_takeovers_total {count}");
    assert_eq!(takeovers_counted(server).await, expected);
}

#[tokio::test]
async fn a_takeover_is_accepted_by_default_and_counted() {
    let server = holding_o_1(&[]).await;
    assert_eq!(register_moved(&server).await.status(), 204);
    assert_eq!(ip_of_o1(&server).await, "10.6.6.6");
    assert_takeovers_counted(&server, 1).await;
}

#[tokio::test]
async fn a_takeover_is_refused_with_409_when_asked_and_the_instance_stays() {
    let server = holding_o_1(&["--heureka.refuse-takeovers=true"]).await;
    let response = register_moved(&server).await;
    assert_eq!(response.status(), 409);
    let reason = response.text().await.unwrap();
    assert!(
        reason.contains("10.0.0.5:8080") && reason.contains("10.6.6.6:8080"),
        "{reason}"
    );
    assert_eq!(ip_of_o1(&server).await, "10.0.0.5");
}

#[tokio::test]
async fn re_registering_from_the_same_endpoint_is_never_refused() {
    let server = holding_o_1(&["--heureka.refuse-takeovers=true"]).await;
    server.register("orders", "o-1").await;
    assert_takeovers_counted(&server, 0).await;
}

#[tokio::test]
async fn a_cancelled_instance_is_free_to_take_when_takeovers_are_refused() {
    let server = holding_o_1(&["--heureka.refuse-takeovers=true"]).await;
    assert_eq!(server.delete("/apps/orders/o-1").await, 200);
    assert_eq!(register_moved(&server).await.status(), 204);
    assert_eq!(ip_of_o1(&server).await, "10.6.6.6");
}
