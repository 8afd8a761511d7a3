//! The fast lane answers heartbeats, registrations and registry fetches as the router does
//! (`src/fast_lane.rs`): a table of heartbeats, registrations, fetches, refusals and near
//! misses is sent to two in-process servers on the same paused clock, one with the lane and
//! one serving every request through the router, and each request must get the same status,
//! headers and body from both, leave both registries and both consumers' tables the same, and
//! count in the same metrics series.

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use heureka_server::config::{BasicAuth, Config};
use heureka_server::testing::Server;

use crate::support::{gzip, spring_body, spring_body_with_blob};

/// The servers compared: with the lane, and the router alone.
struct Pair {
    lane: Server,
    router: Server,
}

/// Spring's Basic credentials of the servers with authentication on: `eureka:s3cret`.
const AUTHORIZATION: (&str, &str) = ("Authorization", "Basic ZXVyZWthOnMzY3JldA==");

/// The instances every case starts from: `ORDERS/o-1` in the default namespace and in
/// `team-a`, registered as Spring registers (`lastDirtyTimestamp` 1714550399000), on servers
/// running `config`.
async fn pair(config: Config) -> Pair {
    let pair = Pair {
        lane: Server::start(config.clone()),
        router: Server::start_router_only(config),
    };
    for server in [&pair.lane, &pair.router] {
        for prefix in ["", "/ns/team-a"] {
            let registered = server
                .request(
                    "POST",
                    &format!("{prefix}/eureka/apps/ORDERS"),
                    &[("Content-Type", "application/json"), AUTHORIZATION],
                    spring_body("ORDERS", "o-1"),
                )
                .await;
            assert_eq!(registered.status, 204, "{}", registered.text());
        }
    }
    pair
}

/// Where every compared request comes from, as the listener marks it: a fetch books its
/// consumer.
const SENDER: &str = "10.1.2.3:40000";

/// What a request left behind: the instances `o-1` and `o-2` in both namespaces (their
/// leases' last renewal included, which the full documents' caches would hide), the
/// consumers of both namespaces, and the renewals, registrations, consumers, rate-limited
/// fetches and request counts by route, method and status.
async fn aftermath(server: &Server) -> Vec<String> {
    let get = |path: String| async move {
        server
            .request(
                "GET",
                &path,
                &[("Accept", "application/json"), AUTHORIZATION],
                Body::empty(),
            )
            .await
    };
    let mut seen = Vec::new();
    for prefix in ["", "/ns/team-a"] {
        for id in ["o-1", "o-2"] {
            let instance = get(format!("{prefix}/eureka/apps/ORDERS/{id}")).await;
            seen.push(format!("{} {}", instance.status, instance.text()));
        }
        let consumers = get(format!("{prefix}/eureka/consumers")).await;
        seen.push(format!("{} {}", consumers.status, consumers.text()));
    }
    let metrics = get("/actuator/prometheus".to_owned()).await.text();
    // Series in the order they are kept, which is a hash map's.
    let mut series: Vec<String> = metrics
        .lines()
        .filter(|line| {
            line.starts_with("heureka_http_request_duration_seconds_count")
                || line.starts_with("heureka_renewals")
                || line.starts_with("heureka_registrations")
                || line.starts_with("heureka_consumers")
                || line.starts_with("heureka_rate_limited")
        })
        .map(str::to_owned)
        .collect();
    series.sort();
    seen.extend(series);
    seen
}

/// Which way the server with the lane took a request.
#[derive(Debug, PartialEq, Eq)]
enum Way {
    Lane,
    Router,
}

/// Sends `method path` with `headers` to both servers and requires the same answer and the
/// same aftermath; returns the status and the way the request took.
async fn same_answer(method: &str, path: &str, headers: &[(&str, &str)]) -> (u16, Way) {
    same_answer_on(Config::default(), method, path, headers).await
}

/// [`same_answer`] on servers running `config`.
async fn same_answer_on(
    config: Config,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, Way) {
    same_answer_with(config, method, path, headers, Vec::new()).await
}

/// [`same_answer`] of a request carrying `body`, on servers running `config`.
async fn same_answer_with(
    config: Config,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, Way) {
    let pair = pair(config).await;
    // A renewal then moves the lease's last renewal past its registration.
    tokio::time::advance(Duration::from_secs(5)).await;
    let sender: SocketAddr = SENDER.parse().unwrap();
    let before = Server::fast_lane_answers();
    let lane = pair
        .lane
        .request_from(sender, method, path, headers, body.clone())
        .await;
    let way = match Server::fast_lane_answers() - before {
        0 => Way::Router,
        _ => Way::Lane,
    };
    let router = pair
        .router
        .request_from(sender, method, path, headers, body)
        .await;
    let case = format!("{method} {path} {headers:?}");
    // Past the once-a-second flush of the renewal counters.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(lane.status, router.status, "{case}");
    assert_eq!(wire(&lane), wire(&router), "{case}");
    assert_eq!(lane.text(), router.text(), "{case}");
    assert_eq!(
        aftermath(&pair.lane).await,
        aftermath(&pair.router).await,
        "{case}"
    );
    (lane.status, way)
}

/// The headers as they leave on the wire, but for `Content-Length`: the router puts it in the
/// map itself and the lane leaves it to hyper, which writes it from the body's exact length
/// (`a_heartbeats_answer_on_the_wire_carries_its_length` in `api.rs` checks that over a socket); the bodies
/// are compared whole.
fn wire(response: &heureka_server::testing::Response) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = response
        .headers
        .iter()
        .filter(|(name, _)| *name != "content-length")
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
        .collect();
    headers.sort();
    headers
}

const RENEW: &str = "/eureka/apps/ORDERS/o-1?status=UP&lastDirtyTimestamp=1714550399000";

#[tokio::test(start_paused = true)]
async fn a_heartbeat_renews() {
    assert_eq!(same_answer("PUT", RENEW, &[]).await, (200, Way::Lane));
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_without_parameters_renews() {
    assert_eq!(
        same_answer("PUT", "/eureka/apps/ORDERS/o-1", &[]).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_under_v2_renews() {
    let path = "/eureka/v2/apps/ORDERS/o-1?status=UP";
    assert_eq!(same_answer("PUT", path, &[]).await, (200, Way::Lane));
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_with_a_lower_case_application_renews() {
    assert_eq!(
        same_answer("PUT", "/eureka/apps/orders/o-1", &[]).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_in_a_namespace_by_path_renews_there() {
    let path = "/ns/team-a/eureka/apps/ORDERS/o-1?status=UP";
    assert_eq!(same_answer("PUT", path, &[]).await, (200, Way::Lane));
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_in_a_namespace_by_header_renews_there() {
    let headers = [("x-namespace", "team-a")];
    assert_eq!(same_answer("PUT", RENEW, &headers).await, (200, Way::Lane));
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_of_an_unknown_instance_is_404() {
    assert_eq!(
        same_answer("PUT", "/eureka/apps/ORDERS/o-2", &[]).await,
        (404, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_in_a_namespace_not_created_is_404() {
    let path = "/ns/team-b/eureka/apps/ORDERS/o-1";
    assert_eq!(same_answer("PUT", path, &[]).await, (404, Way::Router));
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_newer_than_the_registry_is_404() {
    let path = "/eureka/apps/ORDERS/o-1?status=UP&lastDirtyTimestamp=1814550399000";
    assert_eq!(same_answer("PUT", path, &[]).await, (404, Way::Lane));
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_with_a_bad_timestamp_is_400() {
    let path = "/eureka/apps/ORDERS/o-1?lastDirtyTimestamp=yesterday";
    assert_eq!(same_answer("PUT", path, &[]).await, (400, Way::Lane));
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_with_a_bad_overridden_status_is_400() {
    let path = "/eureka/apps/ORDERS/o-1?overriddenstatus=ASLEEP";
    assert_eq!(same_answer("PUT", path, &[]).await, (400, Way::Lane));
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_with_an_overridden_status_renews() {
    let path = "/eureka/apps/ORDERS/o-1?status=UP&overriddenstatus=OUT_OF_SERVICE";
    assert_eq!(same_answer("PUT", path, &[]).await, (200, Way::Lane));
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_with_an_escaped_id_renews() {
    let path = "/eureka/apps/ORDERS/o%2D1";
    assert_eq!(same_answer("PUT", path, &[]).await, (200, Way::Router));
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_with_a_trailing_slash_renews() {
    assert_eq!(
        same_answer("PUT", "/eureka/apps/ORDERS/o-1/", &[]).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_replicated_heartbeat_from_a_non_peer_is_403() {
    let headers = [("x-netflix-discovery-replication", "true")];
    assert_eq!(
        same_answer("PUT", RENEW, &headers).await,
        (403, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_in_an_unknown_encoding_is_415() {
    let headers = [("Content-Encoding", "br")];
    assert_eq!(
        same_answer("PUT", RENEW, &headers).await,
        (415, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_cross_site_heartbeat_is_403() {
    let headers = [
        ("Origin", "http://evil.example"),
        ("Host", "localhost:8761"),
    ];
    assert_eq!(
        same_answer("PUT", RENEW, &headers).await,
        (403, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_browser_heartbeat_under_a_foreign_host_is_403() {
    let headers = [("User-Agent", "Mozilla/5.0"), ("Host", "rebound.example")];
    assert_eq!(
        same_answer("PUT", RENEW, &headers).await,
        (403, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_same_site_browser_heartbeat_renews() {
    let headers = [
        ("Origin", "http://localhost:8761"),
        ("Host", "localhost:8761"),
    ];
    assert_eq!(
        same_answer("PUT", RENEW, &headers).await,
        (200, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_cancel_is_not_a_heartbeat() {
    assert_eq!(
        same_answer("DELETE", "/eureka/apps/ORDERS/o-1", &[]).await,
        (200, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_status_override_is_not_a_heartbeat() {
    let path = "/eureka/apps/ORDERS/o-1/status?value=OUT_OF_SERVICE";
    assert_eq!(same_answer("PUT", path, &[]).await, (200, Way::Router));
}

#[tokio::test(start_paused = true)]
async fn a_heartbeat_with_an_invalid_namespace_name_is_400() {
    let path = "/ns/no%20spaces/eureka/apps/ORDERS/o-1";
    assert_eq!(same_answer("PUT", path, &[]).await, (400, Way::Router));
}

fn with_authentication() -> Config {
    Config {
        security: Some(BasicAuth {
            name: "eureka".to_owned(),
            password: "s3cret".to_owned(),
        }),
        ..Config::default()
    }
}

#[tokio::test(start_paused = true)]
async fn with_authentication_a_heartbeat_renews_on_the_router() {
    let answer = same_answer_on(with_authentication(), "PUT", RENEW, &[AUTHORIZATION]).await;
    assert_eq!(answer, (200, Way::Router));
}

#[tokio::test(start_paused = true)]
async fn with_authentication_a_heartbeat_without_credentials_is_401() {
    let answer = same_answer_on(with_authentication(), "PUT", RENEW, &[]).await;
    assert_eq!(answer, (401, Way::Router));
}

const JSON: (&str, &str) = ("Content-Type", "application/json");

/// [`same_answer`] of a registration carrying `body`.
async fn registered(path: &str, headers: &[(&str, &str)], body: impl Into<Vec<u8>>) -> (u16, Way) {
    same_answer_with(Config::default(), "POST", path, headers, body.into()).await
}

#[tokio::test(start_paused = true)]
async fn a_registration_registers() {
    let body = spring_body("ORDERS", "o-2");
    assert_eq!(
        registered("/eureka/apps/ORDERS", &[JSON], body).await,
        (204, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_registration_again_replaces_the_instance() {
    let body = spring_body("ORDERS", "o-1").replace("\"UP\"", "\"STARTING\"");
    assert_eq!(
        registered("/eureka/apps/ORDERS", &[JSON], body).await,
        (204, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_registration_under_v2_with_a_lower_case_application_registers() {
    let body = spring_body("ORDERS", "o-2");
    assert_eq!(
        registered("/eureka/v2/apps/orders", &[JSON], body).await,
        (204, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_registration_in_a_namespace_by_path_registers_there() {
    let body = spring_body("ORDERS", "o-2");
    assert_eq!(
        registered("/ns/team-a/eureka/apps/ORDERS", &[JSON], body).await,
        (204, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_registration_in_a_namespace_by_header_registers_there() {
    let body = spring_body("ORDERS", "o-2");
    let headers = [JSON, ("x-namespace", "team-a")];
    assert_eq!(
        registered("/eureka/apps/ORDERS", &headers, body).await,
        (204, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_registration_in_a_namespace_not_created_creates_it_on_the_router() {
    let body = spring_body("ORDERS", "o-2");
    assert_eq!(
        registered("/ns/team-b/eureka/apps/ORDERS", &[JSON], body).await,
        (204, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_registration_in_xml_registers() {
    let body = "<instance><instanceId>o-2</instanceId><hostName>h</hostName><app>ORDERS</app>\
                <ipAddr>10.0.0.2</ipAddr><status>UP</status><port enabled=\"true\">8080</port>\
                <dataCenterInfo class=\"com.netflix.appinfo.MyDataCenterInfo\"><name>MyOwn</name>\
                </dataCenterInfo></instance>";
    let headers = [("Content-Type", "application/xml")];
    assert_eq!(
        registered("/eureka/apps/ORDERS", &headers, body).await,
        (204, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_registration_of_malformed_json_is_400() {
    assert_eq!(
        registered("/eureka/apps/ORDERS", &[JSON], "{\"instance\":").await,
        (400, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_registration_for_another_application_is_400() {
    let body = spring_body("PAYMENTS", "o-2");
    assert_eq!(
        registered("/eureka/apps/ORDERS", &[JSON], body).await,
        (400, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_registration_in_an_unknown_media_type_is_415() {
    let body = spring_body("ORDERS", "o-2");
    let headers = [("Content-Type", "text/csv")];
    assert_eq!(
        registered("/eureka/apps/ORDERS", &headers, body).await,
        (415, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_registration_over_the_body_limit_is_413() {
    // Room for the registrations every case starts from, not for a large one.
    let mut config = Config::default();
    config.heureka.max_request_body_bytes = spring_body("ORDERS", "o-1").len() + 64;
    let body = spring_body_with_blob("ORDERS", "o-2", 1024);
    let answer =
        same_answer_with(config, "POST", "/eureka/apps/ORDERS", &[JSON], body.into()).await;
    assert_eq!(answer, (413, Way::Lane));
}

#[tokio::test(start_paused = true)]
async fn a_registration_beyond_max_instances_is_403() {
    let mut config = Config::default();
    config.heureka.limits.max_instances = 1;
    let body = spring_body("ORDERS", "o-2");
    let answer =
        same_answer_with(config, "POST", "/eureka/apps/ORDERS", &[JSON], body.into()).await;
    assert_eq!(answer, (403, Way::Lane));
}

#[tokio::test(start_paused = true)]
async fn a_gzipped_registration_registers_on_the_router() {
    let body = gzip(
        spring_body("ORDERS", "o-2").as_bytes(),
        flate2::Compression::default(),
    );
    let headers = [JSON, ("Content-Encoding", "gzip")];
    assert_eq!(
        registered("/eureka/apps/ORDERS", &headers, body).await,
        (204, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_replicated_registration_from_a_non_peer_is_403() {
    let body = spring_body("ORDERS", "o-2");
    let headers = [JSON, ("x-netflix-discovery-replication", "true")];
    assert_eq!(
        registered("/eureka/apps/ORDERS", &headers, body).await,
        (403, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_cross_site_registration_is_403() {
    let body = spring_body("ORDERS", "o-2");
    let headers = [
        JSON,
        ("Origin", "http://evil.example"),
        ("Host", "localhost:8761"),
    ];
    assert_eq!(
        registered("/eureka/apps/ORDERS", &headers, body).await,
        (403, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_registration_with_an_escaped_application_registers_on_the_router() {
    let body = spring_body("ORDERS", "o-2");
    assert_eq!(
        registered("/eureka/apps/ORD%45RS", &[JSON], body).await,
        (204, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_post_to_the_delta_is_405() {
    let body = spring_body("DELTA", "o-2");
    assert_eq!(
        registered("/eureka/apps/delta", &[JSON], body).await,
        (405, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn with_authentication_a_registration_registers_on_the_router() {
    let body = spring_body("ORDERS", "o-2");
    let headers = [JSON, AUTHORIZATION];
    let path = "/eureka/apps/ORDERS";
    let answer = same_answer_with(with_authentication(), "POST", path, &headers, body.into()).await;
    assert_eq!(answer, (204, Way::Router));
}

const ACCEPT_JSON: (&str, &str) = ("Accept", "application/json");
const GZIP: (&str, &str) = ("Accept-Encoding", "gzip");

#[tokio::test(start_paused = true)]
async fn a_full_fetch_is_the_whole_registry() {
    assert_eq!(
        same_answer("GET", "/eureka/apps", &[ACCEPT_JSON]).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_gzipped_full_fetch_is_the_whole_registry() {
    assert_eq!(
        same_answer("GET", "/eureka/apps", &[ACCEPT_JSON, GZIP]).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_fetch_without_accept_is_xml() {
    assert_eq!(
        same_answer("GET", "/eureka/apps", &[]).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_fetch_with_a_trailing_slash_is_the_whole_registry() {
    assert_eq!(
        same_answer("GET", "/eureka/apps/", &[ACCEPT_JSON]).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_fetch_under_v2_is_the_whole_registry() {
    assert_eq!(
        same_answer("GET", "/eureka/v2/apps", &[ACCEPT_JSON]).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_fetch_naming_regions_none_is_configured_is_the_local_registry() {
    let path = "/eureka/apps?regions=us-west-2";
    assert_eq!(
        same_answer("GET", path, &[ACCEPT_JSON]).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_fetch_by_a_eureka_client_books_a_periodic_consumer() {
    let headers = [
        ACCEPT_JSON,
        GZIP,
        ("DiscoveryIdentity-Name", "DefaultClient"),
        ("DiscoveryIdentity-Version", "1.4"),
        ("DiscoveryIdentity-Id", "10.1.2.3"),
    ];
    assert_eq!(
        same_answer("GET", "/eureka/apps", &headers).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_fetch_by_the_dashboard_books_no_consumer() {
    let headers = [ACCEPT_JSON, ("x-heureka-dashboard", "1")];
    assert_eq!(
        same_answer("GET", "/eureka/apps", &headers).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_fetch_by_a_peer_books_no_consumer() {
    let headers = [ACCEPT_JSON, ("DiscoveryIdentity-Name", "DefaultServer")];
    assert_eq!(
        same_answer("GET", "/eureka/apps", &headers).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_delta_is_what_changed() {
    assert_eq!(
        same_answer("GET", "/eureka/apps/delta", &[ACCEPT_JSON, GZIP]).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_delta_in_a_namespace_by_path_is_that_namespaces() {
    let path = "/ns/team-a/eureka/apps/delta";
    assert_eq!(
        same_answer("GET", path, &[ACCEPT_JSON]).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_fetch_in_a_namespace_by_header_is_that_namespaces() {
    let headers = [ACCEPT_JSON, ("x-namespace", "team-a")];
    assert_eq!(
        same_answer("GET", "/eureka/apps", &headers).await,
        (200, Way::Lane)
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_fetch_in_a_namespace_not_created_is_on_the_router() {
    let path = "/ns/team-b/eureka/apps";
    assert_eq!(
        same_answer("GET", path, &[ACCEPT_JSON]).await,
        (200, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_delta_when_deltas_are_disabled_is_403() {
    let mut config = Config::default();
    config.eureka_server.disable_delta = true;
    let answer = same_answer_on(config, "GET", "/eureka/apps/delta", &[ACCEPT_JSON]).await;
    assert_eq!(answer, (403, Way::Lane));
}

#[tokio::test(start_paused = true)]
async fn a_head_of_the_registry_is_on_the_router() {
    assert_eq!(
        same_answer("HEAD", "/eureka/apps", &[ACCEPT_JSON]).await,
        (200, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_fetch_of_an_escaped_path_is_the_routers_404() {
    assert_eq!(
        same_answer("GET", "/eureka/%61pps", &[ACCEPT_JSON]).await,
        (404, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn a_browser_fetch_under_a_foreign_host_is_403() {
    let headers = [("User-Agent", "Mozilla/5.0"), ("Host", "rebound.example")];
    assert_eq!(
        same_answer("GET", "/eureka/apps", &headers).await,
        (403, Way::Router)
    );
}

#[tokio::test(start_paused = true)]
async fn with_authentication_a_full_fetch_is_on_the_router() {
    let headers = [ACCEPT_JSON, AUTHORIZATION];
    let answer = same_answer_on(with_authentication(), "GET", "/eureka/apps", &headers).await;
    assert_eq!(answer, (200, Way::Router));
}

#[tokio::test(start_paused = true)]
async fn a_fetch_over_the_rate_limit_is_503_on_both() {
    let mut config = Config::default();
    let limiter = &mut config.eureka_server.rate_limiter;
    limiter.enabled = true;
    limiter.burst_size = 1;
    limiter.registry_fetch_average_rate = 1;
    limiter.full_fetch_average_rate = 1;
    let pair = pair(config).await;
    let sender: SocketAddr = SENDER.parse().unwrap();
    let mut seen = Vec::new();
    for server in [&pair.lane, &pair.router] {
        let before = Server::fast_lane_answers();
        let mut answers = Vec::new();
        for _ in 0..2 {
            let fetched = server
                .request_from(sender, "GET", "/eureka/apps", &[ACCEPT_JSON], Body::empty())
                .await;
            answers.push((fetched.status, wire(&fetched), fetched.text()));
        }
        seen.push((answers, Server::fast_lane_answers() - before));
    }
    let (lane, router) = (&seen[0], &seen[1]);
    assert_eq!(lane.0, router.0);
    assert_eq!((lane.0[0].0, lane.0[1].0), (200, 503));
    assert_eq!((lane.1, router.1), (2, 0));
    assert_eq!(aftermath(&pair.lane).await, aftermath(&pair.router).await);
}
