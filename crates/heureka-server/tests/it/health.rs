//! Spring Boot Actuator's health and info endpoints: their shapes, the probes Kubernetes
//! calls, readiness around the start-up sync, and what authentication changes.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use heureka_testkit::eventually;
use serde_json::Value;

use crate::support::{Sent, TestServer, CREDENTIALS};

async fn get(server: &TestServer, path: &str, credentials: bool) -> (u16, Value) {
    let mut request = server.http.get(server.root_url(path));
    if credentials {
        request = request.basic_auth("eureka", Some("s3cret"));
    }
    let response = request.sent().await;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body)
}

#[tokio::test]
async fn health_is_up_with_its_components_in_spring_boots_shape() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o-1").await;
    let (status, body) = get(&server, "/actuator/health", false).await;
    assert_eq!(status, 200);
    assert_eq!(body["status"], "UP");
    let components = &body["components"];
    assert_eq!(components["livenessState"]["status"], "UP");
    assert_eq!(components["readinessState"]["status"], "UP");
    assert_eq!(components["registry"]["status"], "UP");
    assert_eq!(components["registry"]["details"]["instances"], 1);
    assert_eq!(components["registry"]["details"]["applications"], 1);
    assert!(components["replication"]["details"]["peers"].is_array());
}

#[tokio::test]
async fn health_is_served_as_the_actuator_media_type_unless_json_is_asked_for() {
    let server = TestServer::start(&[]).await;
    let url = server.root_url("/actuator/health");
    let default = server.http.get(&url).sent().await;
    assert_eq!(
        default.headers()["content-type"],
        "application/vnd.spring-boot.actuator.v3+json"
    );
    let json = server
        .http
        .get(&url)
        .header("Accept", "application/json")
        .sent()
        .await;
    assert_eq!(json.headers()["content-type"], "application/json");
}

/// Both probes of a server started with `args` answer a request without credentials with
/// `200 {"status":"UP"}` and nothing more.
async fn probes_answer_up_to_anyone(args: &[&str]) {
    let server = TestServer::start(args).await;
    for probe in ["/actuator/health/liveness", "/actuator/health/readiness"] {
        let (status, body) = get(&server, probe, false).await;
        assert_eq!(
            (status, body.to_string()),
            (200, r#"{"status":"UP"}"#.to_owned())
        );
    }
}

#[tokio::test]
async fn probes_answer_their_status_only() {
    probes_answer_up_to_anyone(&[]).await;
}

#[tokio::test]
async fn with_auth_on_probes_answer_without_credentials() {
    probes_answer_up_to_anyone(&CREDENTIALS).await;
}

#[tokio::test]
async fn with_auth_on_health_shows_details_only_to_authorized_requests() {
    let server = TestServer::start(&CREDENTIALS).await;
    let (status, anonymous) = get(&server, "/actuator/health", false).await;
    assert_eq!(
        (status, anonymous.to_string()),
        (200, r#"{"status":"UP"}"#.to_owned())
    );
    let (status, authorized) = get(&server, "/actuator/health", true).await;
    assert_eq!(status, 200);
    assert_eq!(authorized["components"]["livenessState"]["status"], "UP");
}

#[tokio::test]
async fn show_details_never_hides_the_components_from_everyone() {
    let server = TestServer::start(&["--management.endpoint.health.show-details=never"]).await;
    let (_, body) = get(&server, "/actuator/health", false).await;
    assert_eq!(body.to_string(), r#"{"status":"UP"}"#);
}

#[tokio::test]
async fn info_tells_the_build_version() {
    let server = TestServer::start(&[]).await;
    let (status, body) = get(&server, "/actuator/info", false).await;
    assert_eq!(status, 200);
    assert_eq!(body["build"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(body["build"]["name"], "heureka");
}

#[tokio::test]
async fn with_auth_on_info_needs_credentials() {
    let server = TestServer::start(&CREDENTIALS).await;
    assert_eq!(get(&server, "/actuator/info", false).await.0, 401);
    assert_eq!(get(&server, "/actuator/info", true).await.0, 200);
}

#[tokio::test]
async fn an_endpoint_left_out_of_the_exposure_is_not_served() {
    let server = TestServer::start(&["--management.endpoints.web.exposure.exclude=info"]).await;
    assert_eq!(get(&server, "/actuator/info", false).await.0, 404);
    assert_eq!(get(&server, "/actuator/health", false).await.0, 200);
}

#[tokio::test]
async fn the_actuator_base_path_can_be_moved() {
    let server = TestServer::start(&["--management.endpoints.web.base-path=/manage"]).await;
    assert_eq!(get(&server, "/manage/health/readiness", false).await.0, 200);
    assert_eq!(
        get(&server, "/actuator/health/readiness", false).await.0,
        404
    );
}

/// A stand-in peer that answers `not_ready` (503, or a Java server's unmarked 403) to
/// everything until `ready` is set, then serves an empty registry: a Eureka peer that is still
/// starting, then started.
struct StartingPeer {
    url: String,
    ready: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
}

impl StartingPeer {
    async fn start(not_ready: StatusCode) -> StartingPeer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!(
            "http://127.0.0.1:{}/eureka/",
            listener.local_addr().unwrap().port()
        );
        let ready = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(AtomicUsize::new(0));
        let (ready_flag, counter) = (ready.clone(), requests.clone());
        let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
            let (ready, counter) = (ready_flag.clone(), counter.clone());
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                if !ready.load(Ordering::SeqCst) {
                    return not_ready.into_response();
                }
                if uri.path().ends_with("/apps") {
                    let empty = r#"{"applications":{"versions__delta":"1","apps__hashcode":"","application":[]}}"#;
                    return ([("content-type", "application/json")], empty).into_response();
                }
                StatusCode::OK.into_response()
            }
        });
        tokio::spawn(async move { axum::serve(listener, app).await });
        StartingPeer {
            url,
            ready,
            requests,
        }
    }
}

#[tokio::test]
async fn readiness_is_out_of_service_until_the_start_up_sync_is_done() {
    let peer = StartingPeer::start(StatusCode::SERVICE_UNAVAILABLE).await;
    let service_url = format!("--eureka.client.service-url.defaultZone={}", peer.url);
    // Many quick retries: the sync only ends when the peer answers, never by giving up here.
    let server = TestServer::start(&[
        &service_url,
        "--eureka.server.registry-sync-retries=10000",
        "--eureka.server.registry-sync-retry-wait-ms=20",
        "--heureka.replication.anti-entropy-interval-ms=0",
    ])
    .await;
    eventually("the peer is asked for its registry", || async {
        peer.requests.load(Ordering::SeqCst) > 0
    })
    .await;

    let (status, body) = get(&server, "/actuator/health/readiness", false).await;
    assert_eq!(
        (status, body.to_string()),
        (503, r#"{"status":"OUT_OF_SERVICE"}"#.to_owned())
    );
    let (status, body) = get(&server, "/actuator/health", false).await;
    assert_eq!(
        (status, &body["status"]),
        (503, &Value::from("OUT_OF_SERVICE"))
    );
    assert_eq!(body["components"]["livenessState"]["status"], "UP");
    let (status, _) = get(&server, "/actuator/health/liveness", false).await;
    assert_eq!(
        status, 200,
        "a syncing node is alive: it must not be restarted"
    );

    peer.ready.store(true, Ordering::SeqCst);
    eventually(
        "readiness turns UP once the peer gave its registry",
        || async { get(&server, "/actuator/health/readiness", false).await.0 == 200 },
    )
    .await;
    let (status, body) = get(&server, "/actuator/health", false).await;
    assert_eq!((status, &body["status"]), (200, &Value::from("UP")));
}

/// Nodes started together must not wait for each other: a Heureka peer whose own start-up
/// sync is running marks its 403 as such, and is not waited for, while a Java server's
/// unmarked 403 still is.
#[tokio::test]
async fn a_peer_in_its_own_start_up_sync_is_not_waited_for() {
    let java_peer = StartingPeer::start(StatusCode::FORBIDDEN).await;
    let starting = TestServer::start(&[
        &format!("--eureka.client.service-url.defaultZone={}", java_peer.url),
        "--eureka.server.registry-sync-retries=10000",
        "--eureka.server.registry-sync-retry-wait-ms=20",
        "--heureka.replication.anti-entropy-interval-ms=0",
    ])
    .await;
    let response = starting.get("/apps", None).await;
    assert_eq!(response.status(), 403);
    assert_eq!(response.headers()["x-heureka-starting"], "true");

    // Spring's sync settings: five attempts, 30 s apart. Waiting for the starting node would
    // take two minutes, well past `eventually`'s patience.
    let joining = TestServer::start(&[
        &format!(
            "--eureka.client.service-url.defaultZone={}",
            starting.service_url()
        ),
        "--eureka.server.registry-sync-retries=5",
        "--eureka.server.registry-sync-retry-wait-ms=30000",
        "--heureka.replication.anti-entropy-interval-ms=0",
    ])
    .await;
    eventually("the joining node serves reads", || async {
        joining.get_text("/apps", None).await.0 == 200
    })
    .await;

    let response = starting.get("/apps", None).await;
    assert_eq!(
        (
            response.status().as_u16(),
            java_peer.ready.load(Ordering::SeqCst)
        ),
        (403, false),
        "the node whose peer answers a Java server's 403 is still waiting for it"
    );
}
