//! Prometheus HTTP service discovery over real sockets (`docs/prometheus-sd.md`): the UP
//! instances as target groups labelled as `eureka_sd_configs` labels them, the filters, the
//! ETag and its 304, the `read` role, and 404 when it is off.

use reqwest::Method;
use serde_json::Value;

use crate::metrics::scrape;
use crate::support::{assert_basic_challenge, gunzip, spring_body, Sent, TestServer};

const SD: &str = "/prometheus/sd";

/// A Spring client's registration of `app/id` with these metadata entries and status.
fn body(app: &str, id: &str, status: &str, metadata: &[(&str, &str)]) -> String {
    let entries: Vec<String> = metadata
        .iter()
        .map(|(key, value)| format!("\"{key}\":\"{value}\""))
        .collect();
    spring_body(app, id)
        .replace(r#""management.port":"8080""#, &entries.join(","))
        .replace(r#""status":"UP""#, &format!("\"status\":\"{status}\""))
        .replace("10.0.0.5", &format!("{id}.local"))
}

async fn register(server: &TestServer, app: &str, id: &str, metadata: &[(&str, &str)]) {
    let response = server
        .post_json(&format!("/apps/{app}"), &body(app, id, "UP", metadata))
        .await;
    assert_eq!(response.status(), 204);
}

/// The answer's groups, after checking it is a 200 of JSON.
async fn groups(server: &TestServer, query: &str) -> Vec<Value> {
    let response = server.get(&format!("{SD}{query}"), None).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let groups: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    groups.as_array().unwrap().clone()
}

/// Each group's single target.
async fn targets(server: &TestServer, query: &str) -> Vec<String> {
    groups(server, query)
        .await
        .iter()
        .map(|group| {
            let targets = group["targets"].as_array().unwrap();
            assert_eq!(targets.len(), 1, "one group per instance");
            targets[0].as_str().unwrap().to_owned()
        })
        .collect()
}

#[tokio::test]
async fn each_up_instance_is_a_target_labelled_as_eureka_sd_labels_it() {
    let server = TestServer::start(&[]).await;
    register(&server, "ORDERS", "o1", &[("prometheus.io/scrape", "true")]).await;
    let groups = groups(&server, "").await;
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["targets"][0], "o1.local:8080");
    let labels = &groups[0]["labels"];
    for (name, value) in [
        ("instance", "o1"),
        ("__meta_eureka_app_name", "ORDERS"),
        ("__meta_eureka_app_instance_id", "o1"),
        ("__meta_eureka_app_instance_hostname", "o1.local"),
        ("__meta_eureka_app_instance_status", "UP"),
        ("__meta_eureka_app_instance_port", "8080"),
        ("__meta_eureka_app_instance_port_enabled", "true"),
        ("__meta_eureka_app_instance_secure_port_enabled", "false"),
        ("__meta_eureka_app_instance_vip_address", "orders"),
        ("__meta_eureka_app_instance_datacenterinfo_name", "MyOwn"),
        (
            "__meta_eureka_app_instance_healthcheck_url",
            "http://o1.local:8080/actuator/health",
        ),
        (
            "__meta_eureka_app_instance_metadata_prometheus_io__002fscrape",
            "true",
        ),
    ] {
        assert_eq!(labels[name], value, "{name}");
    }
}

#[tokio::test]
async fn an_instance_out_of_service_or_down_is_no_target() {
    let server = TestServer::start(&[]).await;
    for id in ["o1", "o2", "o3"] {
        register(&server, "ORDERS", id, &[]).await;
    }
    server.take_out_of_service("ORDERS", "o2").await;
    let down = server
        .post_json("/apps/ORDERS", &body("ORDERS", "o3", "DOWN", &[]))
        .await;
    assert_eq!(down.status(), 204);
    assert_eq!(targets(&server, "").await, ["o1.local:8080"]);
}

#[tokio::test]
async fn filters_by_application_metadata_and_scrape_narrow_the_targets() {
    let server = TestServer::start(&[]).await;
    register(&server, "ORDERS", "o1", &[("prometheus.io/scrape", "true")]).await;
    register(&server, "ORDERS", "o2", &[("zone", "eu-1")]).await;
    register(&server, "BILLING", "b1", &[("zone", "eu-1")]).await;
    let all = ["b1.local:8080", "o1.local:8080", "o2.local:8080"];
    assert_eq!(targets(&server, "").await, all);
    assert_eq!(
        targets(&server, "?app=orders").await,
        ["o1.local:8080", "o2.local:8080"]
    );
    assert_eq!(
        targets(&server, "?app=orders&app=Billing").await,
        all,
        "repeatable"
    );
    assert_eq!(
        targets(&server, "?metadata.zone=eu-1&app=ORDERS").await,
        ["o2.local:8080"]
    );
    assert_eq!(targets(&server, "?scrape=true").await, ["o1.local:8080"]);
    assert!(targets(&server, "?app=STOCK").await.is_empty());
}

#[tokio::test]
async fn the_prometheus_io_conventions_set_port_path_and_scheme() {
    let server = TestServer::start(&[]).await;
    let conventions = [
        ("prometheus.io/port", "9102"),
        ("prometheus.io/path", "/actuator/prometheus"),
        ("prometheus.io/scheme", "https"),
    ];
    register(&server, "ORDERS", "o1", &conventions).await;
    let groups = groups(&server, "").await;
    assert_eq!(groups[0]["targets"][0], "o1.local:9102");
    assert_eq!(
        groups[0]["labels"]["__metrics_path__"],
        "/actuator/prometheus"
    );
    assert_eq!(groups[0]["labels"]["__scheme__"], "https");
}

#[tokio::test]
async fn an_unknown_parameter_is_refused_with_its_name() {
    let server = TestServer::start(&[]).await;
    let (status, reason) = server.get_text(&format!("{SD}?apps=ORDERS"), None).await;
    assert_eq!(status, 400);
    assert!(reason.contains("'apps'"), "{reason}");
}

#[tokio::test]
async fn an_unchanged_answer_is_304_to_its_etag_and_a_change_moves_the_etag() {
    let server = TestServer::start(&[]).await;
    register(&server, "ORDERS", "o1", &[]).await;
    let first = server.get(SD, None).await;
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"'), "a strong tag: {etag}");
    let again = |tag: String| {
        server
            .request(Method::GET, SD)
            .header("If-None-Match", tag)
            .sent()
    };
    let unchanged = again(etag.clone()).await;
    assert_eq!(unchanged.status(), 304);
    assert_eq!(unchanged.headers()["etag"], etag.as_str());
    assert!(unchanged.bytes().await.unwrap().is_empty());
    // Another question is another answer.
    let other = server
        .request(Method::GET, &format!("{SD}?app=ORDERS"))
        .header("If-None-Match", &etag)
        .sent()
        .await;
    assert_eq!(other.status(), 200);

    register(&server, "ORDERS", "o2", &[]).await;
    let changed = again(etag.clone()).await;
    assert_eq!(changed.status(), 200);
    assert_ne!(changed.headers()["etag"], etag.as_str());
    let groups: Value = serde_json::from_str(&changed.text().await.unwrap()).unwrap();
    assert_eq!(groups.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_client_accepting_gzip_gets_the_same_answer_gzipped_under_its_own_etag() {
    let server = TestServer::start(&[]).await;
    register(&server, "ORDERS", "o1", &[]).await;
    register(&server, "BILLING", "b1", &[]).await;
    let plain = server.get(SD, None).await;
    let plain_etag = plain.headers()["etag"].clone();
    let plain = plain.text().await.unwrap();
    let gzipped = |tag: Option<&str>| {
        let mut request = server
            .request(Method::GET, SD)
            .header("Accept-Encoding", "gzip");
        if let Some(tag) = tag {
            request = request.header("If-None-Match", tag);
        }
        request.sent()
    };
    let response = gzipped(None).await;
    assert_eq!(response.headers()["content-encoding"], "gzip");
    assert_eq!(response.headers()["vary"], "Accept-Encoding");
    let etag = response.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(etag, plain_etag.to_str().unwrap());
    assert_eq!(gunzip(&response.bytes().await.unwrap()), plain);
    assert_eq!(gzipped(Some(&etag)).await.status(), 304);
    let other = gzipped(Some(plain_etag.to_str().unwrap())).await;
    assert_eq!(
        other.status(),
        200,
        "the plain body's tag names another body"
    );
}

#[tokio::test]
async fn it_is_served_under_the_v2_prefix_too() {
    let server = TestServer::start(&[]).await;
    register(&server, "ORDERS", "o1", &[]).await;
    let response = server.get(&format!("/v2{SD}"), None).await;
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn with_authentication_on_it_needs_a_user_and_a_reader_may_read() {
    let server = TestServer::start(&[
        "--spring.security.user.name=admin",
        "--spring.security.user.password=admin-pw",
        "--heureka.security.users[0].name=prometheus",
        "--heureka.security.users[0].password=scrape-pw",
        "--heureka.security.users[0].roles=read",
    ])
    .await;
    assert_basic_challenge(&server.get(SD, None).await);
    let wrong = server.get_as(SD, "prometheus", "guess").await;
    assert_eq!(wrong.status(), 401);
    assert_eq!(
        server.get_as(SD, "prometheus", "scrape-pw").await.status(),
        200
    );
}

#[tokio::test]
async fn switched_off_it_answers_404_as_a_server_without_it() {
    let server = TestServer::start(&["--heureka.prometheus-sd.enabled=false"]).await;
    register(&server, "ORDERS", "o1", &[]).await;
    assert_eq!(server.status(Method::GET, SD).await, 404);
}

#[tokio::test]
async fn its_answers_are_counted_in_the_metrics() {
    let server = TestServer::start(&[]).await;
    register(&server, "ORDERS", "o1", &[]).await;
    let etag = server.get(SD, None).await.headers()["etag"].clone();
    server.get(SD, None).await;
    let not_modified = server
        .request(Method::GET, SD)
        .header("If-None-Match", etag)
        .sent()
        .await;
    assert_eq!(not_modified.status(), 304);
    let metrics = scrape(&server).await;
    for line in [
        "heureka_prometheus_sd_answers_total{answer=\"built\"} 1",
        "heureka_prometheus_sd_answers_total{answer=\"reused\"} 1",
        "heureka_prometheus_sd_answers_total{answer=\"not_modified\"} 1",
        "heureka_prometheus_sd_targets 1",
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }
}
