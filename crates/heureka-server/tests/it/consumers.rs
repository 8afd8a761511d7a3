//! Who fetches the registry, and the safe drain built on it, over real sockets.

use serde_json::Value;
use tokio::net::TcpListener;

use crate::support::{Method, Sent, TestServer};

/// A fetch of the whole registry (or the delta) as a Eureka client calling itself `agent`: a
/// `Content-Type` on the GET, as Spring's RestClient sends, says it is one from its first fetch.
async fn fetch(server: &TestServer, path: &str, agent: &str) {
    read(
        server,
        path,
        &[("User-Agent", agent), ("Content-Type", "application/json")],
    )
    .await;
}

/// A read of `path` with these headers besides `Accept: application/json`.
async fn read(server: &TestServer, path: &str, headers: &[(&str, &str)]) {
    let mut request = server
        .request(Method::GET, path)
        .header("Accept", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    assert_eq!(request.sent().await.status(), 200);
}

async fn json(server: &TestServer, method: Method, path: &str) -> (u16, Value) {
    let response = server
        .request(method, path)
        .header("Accept", "application/json")
        .sent()
        .await;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn consumer<'a>(doc: &'a Value, agent: &str) -> Option<&'a Value> {
    listed(doc, "consumers", agent)
}

fn reader<'a>(doc: &'a Value, agent: &str) -> Option<&'a Value> {
    listed(doc, "readers", agent)
}

fn listed<'a>(doc: &'a Value, list: &str, agent: &str) -> Option<&'a Value> {
    doc[list]
        .as_array()?
        .iter()
        .find(|consumer| consumer["agent"] == agent)
}

#[tokio::test]
async fn a_client_that_fetches_is_listed_with_the_version_it_holds() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o1").await;
    fetch(&server, "/apps", "py-eureka-client").await;
    server.register("ORDERS", "o2").await;
    fetch(&server, "/apps/delta", "py-eureka-client").await;

    let (status, doc) = json(&server, Method::GET, "/consumers").await;

    assert_eq!(status, 200);
    let py = consumer(&doc, "py-eureka-client").expect("listed");
    assert_eq!(py["address"], "127.0.0.1");
    assert!(py["lastFull"].is_i64() && py["lastDelta"].is_i64(), "{py}");
    assert_eq!(py["version"], doc["version"]);
    assert_eq!(py["behind"], 0);
}

#[tokio::test]
async fn another_servers_fetch_is_not_a_consumer() {
    let server = TestServer::start(&[]).await;
    read(
        &server,
        "/apps",
        &[("DiscoveryIdentity-Name", "DefaultServer")],
    )
    .await;

    let (_, doc) = json(&server, Method::GET, "/consumers").await;
    assert_eq!(doc["consumers"], serde_json::json!([]));
}

#[tokio::test]
async fn a_drain_takes_the_instance_out_of_service_and_confirms_a_consumer_once_it_fetched() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o1").await;
    fetch(&server, "/apps", "caller").await;

    let (status, started) = json(&server, Method::PUT, "/apps/ORDERS/o1/drain").await;
    assert_eq!(status, 200);
    assert_eq!(started["status"], "OUT_OF_SERVICE");
    assert_eq!(consumer(&started, "caller").unwrap()["confirmed"], false);

    fetch(&server, "/apps/delta", "caller").await;
    let (_, progress) = json(&server, Method::GET, "/apps/ORDERS/o1/drain").await;
    assert_eq!(consumer(&progress, "caller").unwrap()["confirmed"], true);
    let (_, instance) = json(&server, Method::GET, "/apps/ORDERS/o1").await;
    assert_eq!(instance["instance"]["overriddenStatus"], "OUT_OF_SERVICE");
}

#[tokio::test]
async fn a_one_off_read_is_listed_apart_and_a_drain_does_not_wait_for_it() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o1").await;
    read(&server, "/apps", &[("User-Agent", "curl/8.5.0")]).await;

    let (_, listed) = json(&server, Method::GET, "/consumers").await;
    assert!(reader(&listed, "curl/8.5.0").is_some(), "{listed}");
    assert_eq!(listed["consumers"], serde_json::json!([]));

    let (status, started) = json(&server, Method::PUT, "/apps/ORDERS/o1/drain").await;
    assert_eq!(status, 200);
    assert_eq!(started["consumers"], serde_json::json!([]), "{started}");
    assert!(reader(&started, "curl/8.5.0").is_some(), "{started}");
}

#[tokio::test]
async fn the_dashboards_reads_are_not_booked() {
    let server = TestServer::start(&[]).await;
    let browser = "Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/131.0.0.0";
    read(
        &server,
        "/apps",
        &[("User-Agent", browser), ("X-Heureka-Dashboard", "1")],
    )
    .await;

    let (_, listed) = json(&server, Method::GET, "/consumers").await;

    assert_eq!(
        (&listed["consumers"], &listed["readers"]),
        (&serde_json::json!([]), &serde_json::json!([])),
        "{listed}"
    );
}

#[tokio::test]
async fn draining_an_unknown_instance_is_404() {
    let server = TestServer::start(&[]).await;

    let (status, _) = json(&server, Method::PUT, "/apps/ORDERS/nope/drain").await;

    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_drain_on_one_node_sees_the_consumers_of_its_peers() {
    let (a, b) = (
        TcpListener::bind("127.0.0.1:0").await.unwrap(),
        TcpListener::bind("127.0.0.1:0").await.unwrap(),
    );
    let urls = [&a, &b]
        .map(|l| {
            format!(
                "http://127.0.0.1:{}/eureka/",
                l.local_addr().unwrap().port()
            )
        })
        .join(",");
    let service_url = format!("--eureka.client.service-url.defaultZone={urls}");
    let args = [
        service_url.as_str(),
        "--eureka.client.register-with-eureka=false",
        "--heureka.replication.batch-delay-ms=20",
        "--eureka.server.registry-sync-retries=1",
        "--eureka.server.registry-sync-retry-wait-ms=100",
    ];
    let a = TestServer::start_on(a, &args).await;
    let b = TestServer::start_on(b, &args).await;
    a.register("ORDERS", "o1").await;
    fetch(&b, "/apps", "on-b").await;

    let (_, started) = json(&a, Method::PUT, "/apps/ORDERS/o1/drain").await;
    assert_eq!(consumer(&started, "on-b").unwrap()["confirmed"], false);
    assert_eq!(started["unseen"], serde_json::json!([]));
    // Once the override has reached b, b's consumer's next fetch confirms it.
    heureka_testkit::eventually("b holds the drain", || async {
        let (_, instance) = json(&b, Method::GET, "/apps/ORDERS/o1").await;
        instance["instance"]["status"] == "OUT_OF_SERVICE"
    })
    .await;
    fetch(&b, "/apps/delta", "on-b").await;

    let (_, progress) = json(&a, Method::GET, "/apps/ORDERS/o1/drain").await;
    assert_eq!(consumer(&progress, "on-b").unwrap()["confirmed"], true);
}
