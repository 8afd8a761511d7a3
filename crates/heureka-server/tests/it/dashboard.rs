//! The dashboard's routes: the page at `/` (or `eureka.dashboard.path`, or nowhere), and the
//! two documents it reads besides the ordinary API.

use serde_json::Value;

use crate::support::{assert_basic_challenge, guarded_by, Sent, TestServer};

async fn get(server: &TestServer, path: &str) -> (u16, String) {
    let response = server.http.get(server.root_url(path)).sent().await;
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn the_dashboard_is_served_at_the_root_with_its_script_and_style() {
    let server = TestServer::start(&[]).await;
    let (status, page) = get(&server, "/").await;
    assert_eq!(status, 200);
    assert!(page.contains("/eureka/dashboard/dashboard.js"), "{page}");
    let (status, script) = get(&server, "/eureka/dashboard/dashboard.js").await;
    assert_eq!(status, 200);
    assert!(script.contains("EventSource"));
    let (status, _) = get(&server, "/eureka/dashboard/dashboard.css").await;
    assert_eq!(status, 200);
    let (status, _) = get(&server, "/lastn").await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn the_dashboard_moves_to_its_configured_path() {
    let server = TestServer::start(&["--eureka.dashboard.path=/console/"]).await;
    assert_eq!(get(&server, "/console").await.0, 200);
    assert_eq!(get(&server, "/console/lastn").await.0, 200);
    assert_eq!(get(&server, "/").await.0, 404);
}

#[tokio::test]
async fn the_dashboard_can_be_turned_off() {
    let server = TestServer::start(&["--eureka.dashboard.enabled=false"]).await;
    assert_eq!(get(&server, "/").await.0, 404);
    assert_eq!(get(&server, "/lastn").await.0, 404);
}

#[tokio::test]
async fn the_dashboard_needs_credentials_when_auth_is_on() {
    let server = guarded_by("admin", "secret").await;
    let response = server.http.get(server.root_url("/")).sent().await;
    assert_basic_challenge(&response);
}

#[tokio::test]
async fn the_summary_shows_the_self_preservation_numbers() {
    let server = TestServer::start(&["--eureka.environment=prod"]).await;
    server.register("orders", "o1").await;
    let (status, body) = server.get_text("/dashboard/summary", None).await;
    assert_eq!(status, 200);
    let summary: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(summary["environment"], "prod");
    assert_eq!(summary["datacenter"], "default");
    // E = 1 + 1 registration, T = floor(2 × 2 × 0.85).
    assert_eq!(summary["selfPreservation"]["expectedClients"], 2);
    assert_eq!(summary["selfPreservation"]["renewsThreshold"], 3);
    assert_eq!(summary["selfPreservation"]["renewsLastMin"], 0);
    assert_eq!(summary["selfPreservation"]["active"], true);
}

#[tokio::test]
async fn the_summary_lists_each_other_protocol_with_where_it_answers_or_the_key_that_turns_it_on() {
    let dns_port = heureka_testkit::free_port();
    let server = TestServer::start(&[
        "--heureka.dns.enabled=true",
        "--heureka.dns.address=127.0.0.1",
        &format!("--heureka.dns.port={dns_port}"),
    ])
    .await;
    server.register("orders", "o1").await;
    assert_eq!(server.get_text("/prometheus/sd", None).await.0, 200);
    let (_, body) = server.get_text("/dashboard/summary", None).await;
    let fleet = serde_json::from_str::<Value>(&body).unwrap()["fleet"].clone();
    let names: Vec<&str> = (0..3).map(|i| fleet[i]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Prometheus HTTP SD", "DNS", "xDS"]);
    assert_eq!(fleet[0]["enabled"], true);
    assert_eq!(fleet[0]["address"], "{base}/prometheus/sd");
    assert_eq!(fleet[0]["figures"]["targets"], 1);
    assert_eq!(fleet[1]["enabled"], true);
    assert_eq!(fleet[1]["address"], format!("127.0.0.1:{dns_port}"));
    assert_eq!(fleet[2]["enabled"], false);
    assert_eq!(fleet[2]["key"], "heureka.xds.enabled");
}

#[tokio::test]
async fn lastn_lists_registered_and_cancelled_leases_newest_first() {
    let server = TestServer::start(&[]).await;
    server.register("orders", "o1").await;
    server.register("orders", "o2").await;
    assert_eq!(server.delete("/apps/ORDERS/o1").await, 200);
    let (_, body) = server.get_text("/dashboard/lastn", None).await;
    let lastn: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(lastn["registered"][0]["id"], "o2");
    assert_eq!(lastn["registered"][1]["id"], "o1");
    assert_eq!(lastn["cancelled"][0]["app"], "ORDERS");
}
