//! The Prometheus endpoint: which series it has and that their values follow the registry.
//! (A real Prometheus scraping a real heureka process is `interop/tests/test_prometheus.py`.)

use std::time::Duration;

use crate::support::{Sent, TestServer, CREDENTIALS};

/// The value of the first sample named `name` whose labels include every one of `labels`.
/// Also read by the paused-time tests in `timers.rs`.
pub(crate) fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find(|line| {
            let (series, _) = line.rsplit_once(' ').unwrap_or((line, ""));
            let bare = series.split('{').next().unwrap_or(series);
            bare == name
                && labels
                    .iter()
                    .all(|(key, value)| series.contains(&format!("{key}=\"{value}\"")))
        })
        .and_then(|line| line.rsplit_once(' ')?.1.parse().ok())
}

/// The text of `/actuator/prometheus`; also read by the tests of the series other modules add.
pub(crate) async fn scrape(server: &TestServer) -> String {
    let response = server
        .http
        .get(server.root_url("/actuator/prometheus"))
        .sent()
        .await;
    assert_eq!(response.status(), 200);
    response.text().await.unwrap()
}

#[tokio::test]
async fn registrations_renewals_and_cancels_are_counted_by_origin() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o-1").await;
    server.register("ORDERS", "o-2").await;
    assert_eq!(server.put("/apps/ORDERS/o-1").await, 200);
    assert_eq!(server.delete("/apps/ORDERS/o-2").await, 200);
    let text = scrape(&server).await;
    let client = [("origin", "client")];
    assert_eq!(
        sample(&text, "heureka_registrations_total", &client),
        Some(2.0)
    );
    assert_eq!(sample(&text, "heureka_renewals_total", &client), Some(1.0));
    assert_eq!(sample(&text, "heureka_cancels_total", &client), Some(1.0));
    let peer = [("origin", "peer")];
    assert_eq!(
        sample(&text, "heureka_registrations_total", &peer),
        Some(0.0)
    );
    assert_eq!(sample(&text, "heureka_evictions_total", &[]), Some(0.0));
}

/// The value of the sample written exactly as `series` (its name and all its labels, in the
/// exposition's order): one that must have no other label.
fn exactly(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// Namespace `team-a`'s ORDERS a1 and a2, registered by their clients, and a1 renewed once.
async fn team_a_registers_two_and_renews_one(server: &TestServer) {
    for id in ["a1", "a2"] {
        let response = server
            .http
            .post(server.root_url("/ns/team-a/eureka/apps/ORDERS"))
            .header("Content-Type", "application/json")
            .body(crate::support::spring_body("ORDERS", id))
            .sent()
            .await;
        assert_eq!(response.status(), 204);
    }
    let renewed = server
        .http
        .put(server.root_url("/ns/team-a/eureka/apps/ORDERS/a1"))
        .sent()
        .await;
    assert_eq!(renewed.status(), 200);
}

#[tokio::test]
async fn a_namespace_s_write_counters_carry_its_name_and_default_s_keep_their_labels() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o1").await;
    team_a_registers_two_and_renews_one(&server).await;
    let text = scrape(&server).await;
    let series = [
        (r#"heureka_registrations_total{origin="client"}"#, 1.0),
        (r#"heureka_renewals_total{origin="client"}"#, 0.0),
        (
            r#"heureka_registrations_total{origin="client",namespace="team-a"}"#,
            2.0,
        ),
        (
            r#"heureka_renewals_total{origin="client",namespace="team-a"}"#,
            1.0,
        ),
        (r#"heureka_evictions_total{namespace="team-a"}"#, 0.0),
        ("heureka_evictions_total", 0.0),
    ];
    for (series, value) in series {
        assert_eq!(exactly(&text, series), Some(value), "{series}");
    }
}

#[tokio::test]
async fn a_namespace_s_instances_and_self_preservation_carry_its_name() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o1").await;
    team_a_registers_two_and_renews_one(&server).await;
    let text = scrape(&server).await;
    assert_eq!(
        exactly(
            &text,
            r#"heureka_instances{application="ORDERS",status="UP"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        exactly(
            &text,
            r#"heureka_instances{application="ORDERS",status="UP",namespace="team-a"}"#
        ),
        Some(2.0)
    );
    for name in [
        "heureka_renews_threshold",
        "heureka_renews_last_minute",
        "heureka_expected_clients",
        "heureka_self_preservation_active",
    ] {
        assert!(exactly(&text, name).is_some(), "{name} of default");
        let team_a = format!(r#"{name}{{namespace="team-a"}}"#);
        assert!(exactly(&text, &team_a).is_some(), "{team_a}");
    }
}

#[tokio::test]
async fn instances_are_counted_by_application_and_status() {
    let server = TestServer::start(&[]).await;
    for id in ["o-1", "o-2", "o-3"] {
        server.register("ORDERS", id).await;
    }
    server.register("BILLING", "b-1").await;
    server.take_out_of_service("ORDERS", "o-3").await;
    let text = scrape(&server).await;
    let count = |app: &str, status: &str| {
        sample(
            &text,
            "heureka_instances",
            &[("application", app), ("status", status)],
        )
    };
    assert_eq!(count("ORDERS", "UP"), Some(2.0));
    assert_eq!(count("ORDERS", "OUT_OF_SERVICE"), Some(1.0));
    assert_eq!(count("BILLING", "UP"), Some(1.0));
    assert_eq!(
        count("BILLING", "DOWN"),
        None,
        "no series for an empty status"
    );
}

#[tokio::test]
async fn a_cancelled_applications_series_goes_away() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o-1").await;
    assert_eq!(server.delete("/apps/ORDERS/o-1").await, 200);
    let text = scrape(&server).await;
    assert_eq!(
        sample(&text, "heureka_instances", &[("application", "ORDERS")]),
        None
    );
}

#[tokio::test]
async fn self_preservation_numbers_follow_registrations() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o-1").await;
    server.register("ORDERS", "o-2").await;
    let text = scrape(&server).await;
    // E = 1 (opened for traffic) + 2 registrations; T = floor(3 × 60/30 × 0.85) = 5.
    assert_eq!(sample(&text, "heureka_expected_clients", &[]), Some(3.0));
    assert_eq!(sample(&text, "heureka_renews_threshold", &[]), Some(5.0));
    // No minute has completed yet: 0 renews ≤ T, so expiry is held back.
    assert_eq!(sample(&text, "heureka_renews_last_minute", &[]), Some(0.0));
    assert_eq!(
        sample(&text, "heureka_self_preservation_active", &[]),
        Some(1.0)
    );
}

#[tokio::test]
async fn self_preservation_is_never_active_when_it_is_turned_off() {
    let server = TestServer::start(&["--eureka.server.enable-self-preservation=false"]).await;
    let text = scrape(&server).await;
    assert_eq!(
        sample(&text, "heureka_self_preservation_active", &[]),
        Some(0.0)
    );
}

#[tokio::test]
async fn requests_are_labelled_by_route_template_method_and_status() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o-1").await;
    assert_eq!(server.put("/apps/ORDERS/o-1").await, 200);
    assert_eq!(server.put("/apps/ORDERS/o-1").await, 200);
    assert_eq!(server.put("/apps/ORDERS/nobody").await, 404);
    let text = scrape(&server).await;
    let renew = |status: &str| {
        sample(
            &text,
            "heureka_http_request_duration_seconds_count",
            &[
                ("method", "PUT"),
                ("route", "/eureka/apps/{app}/{id}"),
                ("status", status),
            ],
        )
    };
    assert_eq!(renew("200"), Some(2.0));
    assert_eq!(renew("404"), Some(1.0));
    assert!(
        !text.contains("o-1\""),
        "raw paths (instance ids) never become label values"
    );
}

#[tokio::test]
async fn requests_no_route_takes_share_one_series() {
    let server = TestServer::start(&[]).await;
    for path in ["/nope", "/nope/again"] {
        let response = server.http.get(server.root_url(path)).sent().await;
        assert_eq!(response.status(), 404);
    }
    let text = scrape(&server).await;
    let unmatched = sample(
        &text,
        "heureka_http_request_duration_seconds_count",
        &[("route", "unmatched"), ("status", "404")],
    );
    assert_eq!(unmatched, Some(2.0));
}

#[tokio::test]
async fn response_cache_rebuilds_are_counted_only_when_the_registry_changed() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o-1").await;
    // The test client asks without gzip: only plain bodies are built, never a gzip one.
    server.registry_json().await;
    server.registry_json().await;
    let full = |text: &str, encoding: &str| {
        sample(
            text,
            "heureka_response_cache_rebuilds_total",
            &[
                ("document", "full"),
                ("format", "json"),
                ("encoding", encoding),
            ],
        )
    };
    assert_eq!(full(&scrape(&server).await, "identity"), Some(1.0));
    server.register("ORDERS", "o-2").await;
    server.registry_json().await;
    let text = scrape(&server).await;
    assert_eq!(full(&text, "identity"), Some(2.0));
    assert_eq!(full(&text, "gzip"), Some(0.0));
}

/// Reads without gzip, as a client with no gzip support sends them (reqwest's default client
/// here asks for gzip, so this one is built without it).
async fn get_plain(server: &TestServer, path: &str, accept: &str) -> String {
    let plain = reqwest::Client::builder().no_gzip().build().unwrap();
    let response = plain
        .get(server.url(path))
        .header("Accept", accept)
        .sent()
        .await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("content-encoding").is_none());
    let length: usize = response.headers()["content-length"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let text = response.text().await.unwrap();
    assert_eq!(text.len(), length, "Content-Length is the body's");
    text
}

#[tokio::test]
async fn plain_reads_build_each_body_once_per_version_and_see_every_write() {
    let server = TestServer::start(&[]).await;
    let builds = |text: &str, document: &str, format: &str| {
        sample(
            text,
            "heureka_response_cache_rebuilds_total",
            &[
                ("document", document),
                ("format", format),
                ("encoding", "identity"),
            ],
        )
    };
    for (n, id) in ["o-1", "o-2"].into_iter().enumerate() {
        server.register("ORDERS", id).await;
        for _ in 0..4 {
            for path in ["/apps", "/apps/delta"] {
                for accept in ["application/json", "application/xml"] {
                    let text = get_plain(&server, path, accept).await;
                    assert!(text.contains(id), "{path} {accept} misses {id}");
                }
            }
        }
        let text = scrape(&server).await;
        for document in ["full", "delta"] {
            for format in ["json", "xml"] {
                assert_eq!(
                    builds(&text, document, format),
                    Some(n as f64 + 1.0),
                    "{document} {format}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_dead_peers_queue_and_failures_are_reported_by_its_url() {
    // A port nothing listens on: every batch to it fails as unreachable.
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead_url = format!(
        "http://127.0.0.1:{}/eureka/",
        dead.local_addr().unwrap().port()
    );
    drop(dead);
    let service_url = format!("--eureka.client.service-url.defaultZone={dead_url}");
    let server = TestServer::start(&[
        &service_url,
        "--eureka.client.fetch-registry=false",
        "--heureka.replication.anti-entropy-interval-ms=0",
        "--heureka.replication.batch-delay-ms=10",
    ])
    .await;
    server.register("ORDERS", "o-1").await;
    let peer = [("peer", dead_url.as_str())];
    for _ in 0..400 {
        let text = scrape(&server).await;
        if sample(&text, "heureka_replication_failures_total", &peer).is_some_and(|n| n >= 1.0) {
            assert_eq!(
                sample(&text, "heureka_replication_peer_up", &peer),
                Some(0.0)
            );
            assert!(sample(&text, "heureka_replication_queue_depth", &peer).is_some());
            assert!(sample(&text, "heureka_replication_dropped_tasks_total", &peer).is_some());
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the failed replication to {dead_url} was never reported");
}

#[tokio::test]
async fn metrics_are_also_served_at_slash_metrics() {
    let server = TestServer::start(&[]).await;
    let response = server.http.get(server.root_url("/metrics")).sent().await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    assert!(response.text().await.unwrap().contains("heureka_ready 1"));
}

#[tokio::test]
async fn openmetrics_is_served_to_scrapers_that_ask_for_it() {
    let server = TestServer::start(&[]).await;
    let response = server
        .http
        .get(server.root_url("/actuator/prometheus"))
        .header("Accept", "application/openmetrics-text;version=1.0.0")
        .sent()
        .await;
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/openmetrics-text"));
    assert!(response.text().await.unwrap().ends_with("# EOF\n"));
}

#[tokio::test]
async fn with_auth_on_metrics_need_credentials() {
    let server = TestServer::start(&CREDENTIALS).await;
    for path in ["/actuator/prometheus", "/metrics"] {
        let url = server.root_url(path);
        let anonymous = server.http.get(&url).sent().await;
        assert_eq!(anonymous.status(), 401);
        let authorized = server
            .http
            .get(&url)
            .basic_auth("eureka", Some("s3cret"))
            .sent()
            .await;
        assert_eq!(authorized.status(), 200);
    }
}

#[tokio::test]
async fn metrics_can_be_turned_off() {
    for off in [
        "--management.prometheus.metrics.export.enabled=false",
        "--management.endpoints.web.exposure.include=health,info",
    ] {
        let server = TestServer::start(&[off]).await;
        for path in ["/actuator/prometheus", "/metrics"] {
            let response = server.http.get(server.root_url(path)).sent().await;
            assert_eq!(response.status(), 404, "{path} with {off}");
        }
    }
}
