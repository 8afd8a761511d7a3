//! What the server's timers do, seen over its HTTP API on paused time: an in-process server
//! (`heureka_server::testing`) whose clock is Tokio's, so a test sleeps past a deadline on the
//! paused clock (which advances it at once, firing every timer due on the way) and asserts,
//! never waiting in real time or polling.
//!
//! Tests whose point is a socket stay on real time in their own files: the listener's
//! timeouts and shutdown (`hostile`, `shutdown`, a real process), replication, the start-up
//! sync and peer reports over HTTP (`cluster`, `health`, `metrics`, `events`), webhooks.

use std::time::Duration;

use axum::body::{Body, BodyDataStream};
use axum::http::Request;
use heureka_server::config::Config;
use heureka_server::testing::Server;
use serde_json::Value;
use tokio_stream::StreamExt;

use crate::events::SseBuffer;
use crate::metrics::sample;
use crate::support::spring_body;

/// The defaults, with eviction run every 200 ms and never held back by self-preservation.
fn evicting_config() -> Config {
    let mut config = Config::default();
    config.eureka_server.enable_self_preservation = false;
    config.eureka_server.eviction_interval_timer_in_ms = 200;
    config
}

async fn register(server: &Server, app: &str, body: String) -> u16 {
    server
        .request(
            "POST",
            &format!("/eureka/apps/{app}"),
            &[("Content-Type", "application/json")],
            body,
        )
        .await
        .status
}

async fn status(server: &Server, method: &str, path: &str) -> u16 {
    server
        .request(method, path, &[], Body::empty())
        .await
        .status
}

fn short_lease_body(app: &str, id: &str) -> String {
    spring_body(app, id).replace(r#""durationInSecs":90"#, r#""durationInSecs":1"#)
}

/// A subscription to `GET /eureka/events` through the router, parsed as Server-Sent Events.
struct Subscription {
    body: BodyDataStream,
    buffer: SseBuffer,
}

impl Subscription {
    async fn open(server: &Server) -> Subscription {
        let request = Request::get("/eureka/events").body(Body::empty()).unwrap();
        let response = server.call(request).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Subscription {
            body: response.into_body().into_data_stream(),
            buffer: SseBuffer::default(),
        }
    }

    /// The next event (name, payload). Waiting lets the paused clock run on to the next
    /// timer; the bound, 20 s of paused time, only turns a missing event into a failure.
    async fn next(&mut self) -> (String, Value) {
        let body = &mut self.body;
        let chunk = async || body.next().await.map(|chunk| chunk.unwrap());
        self.buffer.next_event(chunk).await
    }

    /// The next registry change: not a `renewals` event with nothing renewed (those also
    /// report moving self-preservation numbers), nor the `audit` entry an operator's write
    /// also leaves (`audit.rs` tests those).
    async fn next_change(&mut self) -> (String, Value) {
        loop {
            let (name, event) = self.next().await;
            if name == "audit" {
                continue;
            }
            if name != "renewals" || event["total"] != 0 {
                return (name, event);
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn every_kind_of_change_arrives_once_and_in_order() {
    let server = Server::start(evicting_config());
    let mut events = Subscription::open(&server).await;
    assert_eq!(
        register(&server, "ORDERS", spring_body("orders", "o1")).await,
        204
    );
    let (name, registered) = events.next_change().await;
    assert_eq!(name, "registered");
    assert_eq!(registered["app"], "ORDERS");
    assert_eq!(registered["id"], "o1");
    assert_eq!(
        registered["instance"]["metadata"]["management.port"],
        "8080"
    );
    let path = "/eureka/apps/ORDERS/o1/status?value=OUT_OF_SERVICE";
    assert_eq!(status(&server, "PUT", path).await, 200);
    let (name, overridden) = events.next_change().await;
    assert_eq!(name, "status-changed");
    assert_eq!(overridden["cause"], "override");
    assert_eq!(overridden["instance"]["status"], "OUT_OF_SERVICE");
    let path = "/eureka/apps/ORDERS/o1/status?value=UP";
    assert_eq!(status(&server, "DELETE", path).await, 200);
    let (name, removed) = events.next_change().await;
    assert_eq!(name, "status-changed");
    assert_eq!(removed["cause"], "override-removed");
    assert_eq!(removed["status"], "UP");
    let path = "/eureka/apps/ORDERS/o1/metadata?zone=z1";
    assert_eq!(status(&server, "PUT", path).await, 200);
    let (name, metadata) = events.next_change().await;
    assert_eq!(name, "metadata-changed");
    assert_eq!(metadata["instance"]["metadata"]["zone"], "z1");
    assert_eq!(status(&server, "PUT", "/eureka/apps/ORDERS/o1").await, 200);
    // Renewals are published by a flush once a second.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (name, renewals) = events.next_change().await;
    assert_eq!(name, "renewals");
    assert_eq!(renewals["apps"], serde_json::json!({"ORDERS": 1}));
    assert_eq!(
        status(&server, "DELETE", "/eureka/apps/ORDERS/o1").await,
        200
    );
    let (name, cancelled) = events.next_change().await;
    assert_eq!(name, "cancelled");
    assert!(cancelled.get("instance").is_none());
    assert_eq!(
        register(&server, "BILLING", short_lease_body("billing", "b1")).await,
        204
    );
    // Past the 1 s lease and the next eviction run after it.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (name, _) = events.next_change().await;
    assert_eq!(name, "registered");
    let (name, evicted) = events.next_change().await;
    assert_eq!(name, "evicted");
    assert_eq!(evicted["id"], "b1");
}

#[tokio::test(start_paused = true)]
async fn a_lease_that_stops_renewing_is_not_served_once_its_duration_has_passed() {
    let mut config = Config::default();
    config.eureka_server.enable_self_preservation = false;
    let server = Server::start(config);
    assert_eq!(
        register(&server, "ORDERS", spring_body("orders", "o1")).await,
        204
    );
    let path = "/eureka/apps/ORDERS/o1";
    // The lease lasts 90 s (`durationInSecs`).
    tokio::time::sleep(Duration::from_secs(89)).await;
    assert_eq!(status(&server, "GET", path).await, 200);
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(status(&server, "GET", path).await, 404);
}

#[tokio::test(start_paused = true)]
async fn a_cancel_leaves_the_delta_once_its_retention_time_has_passed() {
    let server = Server::start(Config::default());
    assert_eq!(
        register(&server, "ORDERS", spring_body("orders", "o-1")).await,
        204
    );
    assert_eq!(
        status(&server, "DELETE", "/eureka/apps/ORDERS/o-1").await,
        200
    );
    let delta = || async {
        let json = [("Accept", "application/json")];
        let response = server
            .request("GET", "/eureka/apps/delta", &json, Body::empty())
            .await;
        assert_eq!(response.status, 200);
        response.text()
    };
    let deleted = r#""actionType":"DELETED""#;
    assert!(delta().await.contains(deleted));
    // Changes are kept 180 s and purged every 30 s: gone after the purge at 210 s.
    tokio::time::sleep(Duration::from_secs(211)).await;
    let after = delta().await;
    assert!(!after.contains(deleted), "{after}");
}

#[tokio::test(start_paused = true)]
async fn self_preservation_is_left_when_a_minute_of_renewals_exceeds_the_threshold() {
    let server = Server::start(Config::default());
    for id in ["o-1", "o-2"] {
        assert_eq!(
            register(&server, "ORDERS", spring_body("orders", id)).await,
            204
        );
    }
    // E = 1 (opened for traffic) + 2 registrations; T = floor(3 × 60/30 × 0.85) = 5.
    for _ in 0..3 {
        for id in ["o-1", "o-2"] {
            let path = format!("/eureka/apps/ORDERS/{id}");
            assert_eq!(status(&server, "PUT", &path).await, 200);
        }
    }
    let scrape = || async {
        let response = server
            .request("GET", "/actuator/prometheus", &[], Body::empty())
            .await;
        assert_eq!(response.status, 200);
        response.text()
    };
    let active = "heureka_self_preservation_active";
    assert_eq!(sample(&scrape().await, active, &[]), Some(1.0));
    // The renews bucket rolls a minute after start: 6 renews > T.
    tokio::time::sleep(Duration::from_secs(61)).await;
    let text = scrape().await;
    assert_eq!(sample(&text, "heureka_renews_last_minute", &[]), Some(6.0));
    assert_eq!(sample(&text, active, &[]), Some(0.0));
}

#[tokio::test(start_paused = true)]
async fn an_unchanged_document_is_built_again_once_older_than_the_cache_expiration() {
    let server = Server::start(Config::default());
    let fetch_and_count_builds = || async {
        let json = [("Accept", "application/json")];
        let fetched = server.request("GET", "/eureka/apps", &json, Body::empty());
        assert_eq!(fetched.await.status, 200);
        let scraped = server.request("GET", "/actuator/prometheus", &[], Body::empty());
        let full_json_plain = [
            ("document", "full"),
            ("format", "json"),
            ("encoding", "identity"),
        ];
        let text = scraped.await.text();
        sample(
            &text,
            "heureka_response_cache_rebuilds_total",
            &full_json_plain,
        )
    };
    assert_eq!(fetch_and_count_builds().await, Some(1.0));
    // `response-cache-auto-expiration-in-seconds` is 180.
    tokio::time::sleep(Duration::from_secs(179)).await;
    assert_eq!(fetch_and_count_builds().await, Some(1.0));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(fetch_and_count_builds().await, Some(2.0));
}

/// Renews each of `ids` (`app` in namespace `ns`) once; asserts each is renewed.
async fn renew_all(server: &Server, ns: &str, app: &str, ids: &[String]) {
    for id in ids {
        let path = format!("/ns/{ns}/eureka/apps/{app}/{id}");
        assert_eq!(status(server, "PUT", &path).await, 200, "{path}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_mass_failure_in_one_namespace_puts_it_alone_into_self_preservation() {
    let server = Server::start(Config::default());
    let ids = |prefix: &str| -> Vec<String> { (0..20).map(|n| format!("{prefix}{n}")).collect() };
    let (big, small) = (ids("b"), ids("s"));
    for (ns, app, ids) in [("big", "BIG", &big), ("small", "SMALL", &small)] {
        for id in ids {
            let path = format!("/ns/{ns}/eureka/apps/{app}");
            let registered = server
                .request(
                    "POST",
                    &path,
                    &[("Content-Type", "application/json")],
                    spring_body(app, id),
                )
                .await;
            assert_eq!(registered.status, 204);
        }
    }
    // Three minutes of heartbeats every 30 s: 40 renews a minute in each namespace, above
    // each one's threshold (floor((1 + 20) × 2 × 0.85) = 35), so both leave self-preservation.
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_secs(30)).await;
        renew_all(&server, "big", "BIG", &big).await;
        renew_all(&server, "small", "SMALL", &small).await;
    }
    // Then every instance of `big` stops, and one of `small`: four minutes of heartbeats
    // from the 19 others (38 a minute, still above 35).
    for _ in 0..8 {
        tokio::time::sleep(Duration::from_secs(30)).await;
        renew_all(&server, "small", "SMALL", &small[..19]).await;
    }
    let read = |path: String| {
        let server = &server;
        async move { status(server, "GET", &path).await }
    };
    assert_eq!(
        read("/ns/small/eureka/apps/SMALL/s19".into()).await,
        404,
        "small's eviction ran"
    );
    assert_eq!(read("/ns/small/eureka/apps/SMALL/s0".into()).await, 200);
    for id in &big {
        assert_eq!(
            read(format!("/ns/big/eureka/apps/BIG/{id}")).await,
            200,
            "big keeps its expired leases"
        );
    }
}
