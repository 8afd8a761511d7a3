//! Remote regions over real sockets: two servers, one the remote region of the other. What a
//! client fetching with and without `regions=` is served, the fallbacks of single reads, the
//! whitelists, the 403 before the first fetch, a region stopped (stale, then dropped with its
//! events), region fetchers served their own region only, and credentials kept out of sight.

use serde_json::Value;

use crate::events::Subscription;
use crate::metrics::scrape;
use crate::support::{guarded_by, gunzip, Method, Sent, TestServer};

/// Waits until `check` holds, polling; the one poll of these tests (a region's fetches run on
/// the server's own clock, and what they fetched shows only in what it serves).
async fn until<F, Fut>(what: &str, check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    heureka_testkit::eventually(what, check).await;
}

/// A remote region's server holding `WEST-APP/w-1`.
async fn remote() -> TestServer {
    let remote = TestServer::start(&[]).await;
    remote.register("WEST-APP", "w-1").await;
    remote
}

/// A server holding `LOCAL-APP/l-1` whose region `us-west` is `url`, fetched every second.
async fn local_with_region(url: &str, args: &[&str]) -> TestServer {
    let region = format!("--eureka.server.remote-region-urls-with-name.us-west={url}");
    let mut all = vec![
        region.as_str(),
        "--eureka.server.remote-region-registry-fetch-interval=1",
    ];
    all.extend_from_slice(args);
    let local = TestServer::start(&all).await;
    local.register("LOCAL-APP", "l-1").await;
    local
}

async fn regions(server: &TestServer) -> Value {
    serde_json::from_str(&server.json_ok("/regions").await).unwrap()
}

async fn state(server: &TestServer) -> String {
    regions(server).await["regions"][0]["state"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn ready(server: &TestServer) {
    until("the region is ready", || async {
        state(server).await == "ready"
    })
    .await;
}

async fn document(server: &TestServer, path: &str) -> Value {
    serde_json::from_str(&server.json_ok(path).await).unwrap()
}

/// `(app, id, actionType)` of every instance of a document.
fn instances(document: &Value) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for app in document["applications"]["application"].as_array().unwrap() {
        for instance in app["instance"].as_array().unwrap() {
            found.push((
                app["name"].as_str().unwrap().to_owned(),
                instance["instanceId"].as_str().unwrap().to_owned(),
                instance["actionType"].as_str().unwrap_or("").to_owned(),
            ));
        }
    }
    found.sort();
    found
}

fn ids(document: &Value) -> Vec<String> {
    instances(document)
        .into_iter()
        .map(|(_, id, _)| id)
        .collect()
}

fn hashcode(document: &Value) -> String {
    document["applications"]["apps__hashcode"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_full_fetch_naming_a_region_holds_both_registries_and_their_hashcode() {
    let remote = remote().await;
    let local = local_with_region(&remote.service_url(), &[]).await;
    ready(&local).await;
    let full = document(&local, "/apps?regions=US-WEST").await;
    assert_eq!(ids(&full), ["l-1", "w-1"]);
    assert_eq!(hashcode(&full), "UP_2_");
    assert_eq!(full["applications"]["versions__delta"], "1");
    let (status, xml) = local
        .get_text("/apps?regions=us-west", Some("application/xml"))
        .await;
    assert_eq!(status, 200);
    assert!(xml.contains("<instanceId>w-1</instanceId>"), "{xml}");
    let gzipped = local
        .request(Method::GET, "/apps?regions=us-west")
        .header("Accept", "application/json")
        .header("Accept-Encoding", "gzip")
        .sent()
        .await;
    assert_eq!(gzipped.headers()["content-encoding"], "gzip");
    let inflated = gunzip(&gzipped.bytes().await.unwrap());
    assert_eq!(
        ids(&serde_json::from_str(&inflated).unwrap()),
        ["l-1", "w-1"]
    );
}

#[tokio::test]
async fn a_region_delta_shows_a_remote_register_and_cancel_hashed_like_the_full_document() {
    let remote = remote().await;
    let local = local_with_region(&remote.service_url(), &[]).await;
    ready(&local).await;
    remote.register("WEST-APP", "w-2").await;
    until("w-2 is served from the region", || async {
        ids(&document(&local, "/apps?regions=us-west").await).contains(&"w-2".to_owned())
    })
    .await;
    let delta = document(&local, "/apps/delta?regions=us-west").await;
    let full = document(&local, "/apps?regions=us-west").await;
    assert!(instances(&delta).contains(&("WEST-APP".into(), "w-2".into(), "ADDED".into())));
    assert_eq!(hashcode(&delta), hashcode(&full));
    assert_eq!(remote.delete("/apps/WEST-APP/w-2").await, 200);
    until("w-2 is gone from the region", || async {
        !ids(&document(&local, "/apps?regions=us-west").await).contains(&"w-2".to_owned())
    })
    .await;
    let delta = document(&local, "/apps/delta?regions=us-west").await;
    let full = document(&local, "/apps?regions=us-west").await;
    assert!(instances(&delta).contains(&("WEST-APP".into(), "w-2".into(), "DELETED".into())));
    assert_eq!(hashcode(&delta), hashcode(&full));
}

#[tokio::test]
async fn without_regions_transparent_fallback_serves_every_region() {
    let remote = remote().await;
    let local = local_with_region(&remote.service_url(), &[]).await;
    ready(&local).await;
    assert_eq!(ids(&document(&local, "/apps").await), ["l-1", "w-1"]);
    let delta = document(&local, "/apps/delta").await;
    assert_eq!(hashcode(&delta), hashcode(&document(&local, "/apps").await));
}

#[tokio::test]
async fn with_fallback_disabled_only_reads_naming_the_region_include_it() {
    let remote = remote().await;
    let local = local_with_region(
        &remote.service_url(),
        &["--eureka.server.disable-transparent-fallback-to-other-region=true"],
    )
    .await;
    ready(&local).await;
    assert_eq!(ids(&document(&local, "/apps").await), ["l-1"]);
    assert_eq!(
        ids(&document(&local, "/apps?regions=us-west").await),
        ["l-1", "w-1"]
    );
    assert_eq!(local.get("/apps/WEST-APP", None).await.status(), 404);
}

#[tokio::test]
async fn a_regions_own_whitelist_wins_over_the_global_one() {
    let remote = remote().await;
    remote.register("ORDERS", "o-1").await;
    let local = local_with_region(
        &remote.service_url(),
        &[
            "--eureka.server.remote-region-app-whitelist.us-west=orders",
            "--eureka.server.remote-region-app-whitelist.global=WEST-APP",
        ],
    )
    .await;
    ready(&local).await;
    assert_eq!(
        ids(&document(&local, "/apps?regions=us-west").await),
        ["l-1", "o-1"]
    );
}

#[tokio::test]
async fn the_global_whitelist_holds_for_a_region_without_its_own() {
    let remote = remote().await;
    remote.register("ORDERS", "o-1").await;
    let local = local_with_region(
        &remote.service_url(),
        &["--eureka.server.remote-region-app-whitelist.global=west-app"],
    )
    .await;
    ready(&local).await;
    let full = document(&local, "/apps?regions=us-west").await;
    assert_eq!(ids(&full), ["l-1", "w-1"]);
    assert_eq!(hashcode(&full), "UP_2_");
}

#[tokio::test]
async fn reads_naming_a_region_are_403_until_its_first_fetch() {
    let local = local_with_region(&heureka_testkit::dead_url(), &[]).await;
    let (status, reason) = local.get_text("/apps?regions=us-west", None).await;
    assert_eq!(status, 403);
    assert!(reason.contains("us-west"), "{reason}");
    assert_eq!(
        local
            .get("/apps/delta?regions=us-west", None)
            .await
            .status(),
        403
    );
    assert_eq!(ids(&document(&local, "/apps").await), ["l-1"]);
    assert_eq!(state(&local).await, "starting");
}

#[tokio::test]
async fn single_reads_fall_back_to_the_region() {
    let remote = remote().await;
    let local = local_with_region(&remote.service_url(), &[]).await;
    ready(&local).await;
    let app = document(&local, "/apps/WEST-APP").await;
    assert_eq!(app["application"]["instance"][0]["instanceId"], "w-1");
    let instance = document(&local, "/apps/WEST-APP/w-1").await;
    assert_eq!(instance["instance"]["instanceId"], "w-1");
    assert_eq!(local.get("/apps/WEST-APP/nope", None).await.status(), 404);
    let by_id = document(&local, "/instances/w-1").await;
    assert_eq!(by_id["instance"]["app"], "WEST-APP");
    assert_eq!(ids(&document(&local, "/vips/west-app").await), ["w-1"]);
    assert_eq!(ids(&document(&local, "/svips/west-app").await), ["w-1"]);
}

#[tokio::test]
async fn a_region_fetcher_is_served_the_local_region_only() {
    let remote = remote().await;
    let local = local_with_region(&remote.service_url(), &[]).await;
    ready(&local).await;
    for agent in [
        "Java-EurekaClient-RemoteRegion/1.10",
        "Heureka-RemoteRegion/0.1.0",
    ] {
        let body = local
            .request(Method::GET, "/apps")
            .header("Accept", "application/json")
            .header("User-Agent", agent)
            .sent()
            .await
            .text()
            .await
            .unwrap();
        let full: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(ids(&full), ["l-1"], "{agent}");
    }
}

#[tokio::test]
async fn a_stopped_region_goes_stale_then_is_dropped_with_its_events() {
    let remote = remote().await;
    let local =
        local_with_region(&remote.service_url(), &["--heureka.regions.stale-after=3s"]).await;
    ready(&local).await;
    let mut events = Subscription::open(&local, "").await;
    remote.stop().await;
    let mut seen = Vec::new();
    while !seen.contains(&"region-dropped".to_owned()) {
        let (name, event) = events.next().await;
        if name.starts_with("region-") {
            assert_eq!(event["region"], "us-west");
            seen.push(name);
        }
    }
    assert_eq!(seen, ["region-stale", "region-dropped"]);
    assert_eq!(state(&local).await, "dropped");
    assert_eq!(ids(&document(&local, "/apps").await), ["l-1"]);
    let delta = document(&local, "/apps/delta?regions=us-west").await;
    assert!(instances(&delta).contains(&("WEST-APP".into(), "w-1".into(), "DELETED".into())));
    let metrics = scrape(&local).await;
    assert!(
        metrics.contains(r#"heureka_region_state{region="us-west",state="dropped"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn credentials_of_a_region_are_sent_as_basic_auth_and_never_shown() {
    let remote = guarded_by("eureka", "s3cret").await;
    remote
        .request(Method::POST, "/apps/WEST-APP")
        .basic_auth("eureka", Some("s3cret"))
        .header("Content-Type", "application/json")
        .body(heureka_testkit::spring_body("WEST-APP", "w-1"))
        .sent()
        .await;
    let url = format!("http://eureka:s3cret@127.0.0.1:{}/eureka/", remote.port);
    let local = local_with_region(&url, &[]).await;
    ready(&local).await;
    let shown = regions(&local).await;
    assert_eq!(
        shown["regions"][0]["url"],
        format!("http://127.0.0.1:{}/eureka/", remote.port)
    );
    assert_eq!(shown["regions"][0]["instances"], 1);
    assert!(!shown.to_string().contains("s3cret"));
    let metrics = scrape(&local).await;
    assert!(!metrics.contains("s3cret"));
    assert!(metrics.contains(r#"heureka_region_instances{region="us-west"} 1"#));
    assert!(metrics.contains(r#"heureka_region_lag_seconds{region="us-west"}"#));
    assert!(metrics.contains(r#"heureka_region_state{region="us-west",state="ready"} 1"#));
    assert!(metrics
        .contains(r#"heureka_region_fetches_total{region="us-west",kind="full",outcome="ok"}"#));
}

#[tokio::test]
async fn a_regions_instances_never_enter_the_local_registry() {
    let remote = remote().await;
    let local = local_with_region(&remote.service_url(), &[]).await;
    ready(&local).await;
    assert_eq!(ids(&document(&local, "/apps").await), ["l-1", "w-1"]);
    let metrics = scrape(&local).await;
    assert!(metrics.contains(r#"heureka_instances{application="LOCAL-APP",status="UP"} 1"#));
    assert!(
        !metrics.contains(r#"application="WEST-APP""#),
        "counted as registered here: {metrics}"
    );
    let registered = local.json_ok("/dashboard/lastn").await;
    assert!(
        registered.contains("l-1") && !registered.contains("w-1"),
        "{registered}"
    );
}

#[tokio::test]
async fn an_https_region_is_trusted_through_the_remote_region_trust_store_only() {
    let dir = heureka_testkit::TempDir::new();
    let pki = heureka_testkit::pki::TestPki::create(&dir.path.join("pki"));
    let certificate = format!("--server.ssl.certificate={}", pki.server.cert_pem.display());
    let key = format!(
        "--server.ssl.certificate-private-key={}",
        pki.server.key_pem.display()
    );
    let remote = TestServer::start(&[&certificate, &key]).await;
    let url = format!("https://localhost:{}/eureka/", remote.port);
    let store = format!(
        "--eureka.server.remote-region-trust-store={}",
        pki.trust_p12.display()
    );
    let password = format!(
        "--eureka.server.remote-region-trust-store-password={}",
        heureka_testkit::pki::PASSWORD
    );
    let trusting = local_with_region(&url, &[&store, &password]).await;
    ready(&trusting).await;
    let untrusting = local_with_region(&url, &[]).await;
    until("the untrusted region's fetch fails", || async {
        !regions(&untrusting).await["regions"][0]["error"].is_null()
    })
    .await;
    let shown = regions(&untrusting).await;
    assert_eq!(shown["regions"][0]["state"], "starting");
    let error = shown["regions"][0]["error"]
        .as_str()
        .unwrap()
        .to_lowercase();
    assert!(error.contains("certificate"), "{error}");
}

#[tokio::test]
async fn a_dropped_region_is_served_again_after_a_successful_fetch() {
    let remote = remote().await;
    let port = remote.port;
    let local =
        local_with_region(&remote.service_url(), &["--heureka.regions.stale-after=2s"]).await;
    ready(&local).await;
    remote.stop().await;
    until("the region is dropped", || async {
        state(&local).await == "dropped"
    })
    .await;
    let mut events = Subscription::open(&local, "").await;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    let back = TestServer::start_on(listener, &[]).await;
    back.register("WEST-APP", "w-9").await;
    loop {
        let (name, event) = events.next().await;
        if name == "region-ready" {
            assert_eq!(event["region"], "us-west");
            break;
        }
    }
    until("w-9 is served from the region", || async {
        ids(&document(&local, "/apps").await) == ["l-1", "w-9"]
    })
    .await;
    let delta = document(&local, "/apps/delta?regions=us-west").await;
    assert!(instances(&delta).contains(&("WEST-APP".into(), "w-9".into(), "ADDED".into())));
}

#[tokio::test]
async fn push_streams_are_404_with_the_reason_while_regions_are_configured() {
    let local = local_with_region(&heureka_testkit::dead_url(), &[]).await;
    let (status, reason) = local.get_text("/push", None).await;
    assert_eq!(status, 404);
    assert!(reason.contains("remote regions"), "{reason}");
}
