//! The server's health checks against instances that are real HTTP servers in the test: a
//! failing health endpoint reads DOWN and back, the operator's override and the instance's
//! own DOWN win, the guard against our own network, and in a cluster one node per instance.
//!
//! Waiting is a bounded poll for the expected state, never an assertion on how long it took.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use heureka_testkit::eventually;
use tokio::net::TcpListener;

use crate::support::{spring_body, TestServer};

/// Checks every 100 ms, all at once (no jitter), DOWN after two failures.
const CHECKS: &[&str] = &[
    "--heureka.health-checks.enabled=true",
    "--heureka.health-checks.interval=100ms",
    "--heureka.health-checks.timeout=500ms",
    "--heureka.health-checks.jitter=0",
    "--eureka.client.register-with-eureka=false",
];

/// An instance's health endpoint: answers 200 or 503 as told, and records which node probed.
struct Instance {
    address: SocketAddr,
    healthy: Arc<AtomicBool>,
    /// Answers as Spring Boot Actuator does (its media type).
    spring_boot: Arc<AtomicBool>,
    probed_by: Arc<Mutex<Vec<String>>>,
}

impl Instance {
    async fn start() -> Instance {
        let healthy = Arc::new(AtomicBool::new(true));
        let spring_boot = Arc::new(AtomicBool::new(false));
        let probed_by = Arc::new(Mutex::new(Vec::new()));
        let (answer, record, actuator) = (healthy.clone(), probed_by.clone(), spring_boot.clone());
        let app = axum::Router::new().route(
            "/actuator/health",
            get(move |headers: HeaderMap| {
                let node = headers
                    .get("x-heureka-node")
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or("?")
                    .to_owned();
                record.lock().unwrap().push(node);
                let healthy = answer.load(Ordering::SeqCst);
                let media_type = if actuator.load(Ordering::SeqCst) {
                    "application/vnd.spring-boot.actuator.v3+json"
                } else {
                    "application/json"
                };
                async move {
                    let status = if healthy {
                        StatusCode::OK
                    } else {
                        StatusCode::SERVICE_UNAVAILABLE
                    };
                    let body = if healthy {
                        r#"{"status":"UP"}"#
                    } else {
                        r#"{"status":"DOWN"}"#
                    };
                    (
                        status,
                        [(axum::http::header::CONTENT_TYPE, media_type)],
                        body,
                    )
                }
            }),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Instance {
            address,
            healthy,
            spring_boot,
            probed_by,
        }
    }

    fn set_healthy(&self, healthy: bool) {
        self.healthy.store(healthy, Ordering::SeqCst);
    }

    /// The nodes that probed it since the last call, each once.
    fn take_probers(&self) -> Vec<String> {
        let mut nodes: Vec<String> = self.probed_by.lock().unwrap().drain(..).collect();
        nodes.sort();
        nodes.dedup();
        nodes
    }

    /// A Spring-shaped registration pointing at this endpoint.
    fn body(&self, app: &str, id: &str) -> String {
        let here = format!("127.0.0.1:{}", self.address.port());
        spring_body(app, id)
            .replace("10.0.0.5:8080", &here)
            .replace("10.0.0.5", "127.0.0.1")
            .replace(r#""$":8080"#, &format!(r#""$":{}"#, self.address.port()))
    }
}

async fn register(server: &TestServer, instance: &Instance, app: &str, id: &str) {
    let response = server
        .post_json(&format!("/apps/{app}"), &instance.body(app, id))
        .await;
    assert_eq!(response.status(), 204);
}

/// Registers `body` as an `ORDERS` instance; asserts 204.
async fn register_body(server: &TestServer, body: &str) {
    assert_eq!(server.post_json("/apps/ORDERS", body).await.status(), 204);
}

/// Asserts `ORDERS/id` reads `status` on the node now.
async fn reads_now(server: &TestServer, id: &str, status: &str) {
    assert_eq!(
        server.instance_status("ORDERS", id).await.as_deref(),
        Some(status)
    );
}

/// A node started with `args` where `ORDERS/o1`, an [`Instance`], is registered.
async fn checked_o1(args: &[&str]) -> (TestServer, Instance) {
    let server = TestServer::start(args).await;
    let instance = Instance::start().await;
    register(&server, &instance, "ORDERS", "o1").await;
    (server, instance)
}

/// [`checked_o1`], once `o1` has failed its checks and reads `DOWN`.
async fn failed_o1(args: &[&str]) -> (TestServer, Instance) {
    let (server, instance) = checked_o1(args).await;
    instance.set_healthy(false);
    reads(&server, "o1", "DOWN").await;
    (server, instance)
}

async fn reads(server: &TestServer, id: &str, status: &str) {
    until_status(server, id, Some(status)).await;
}

/// Waits until `ORDERS/id` reads `status` on the node (`None`: is not registered).
async fn until_status(server: &TestServer, id: &str, status: Option<&str>) {
    eventually(&format!("{id} reads {status:?}"), || async {
        server.instance_status("ORDERS", id).await.as_deref() == status
    })
    .await;
}

/// Waits until the node's `/dashboard/health-checks` satisfies `holds`.
async fn until_view(server: &TestServer, what: &str, holds: impl Fn(&str) -> bool) {
    eventually(what, || async {
        let (_, view) = server.get_text("/dashboard/health-checks", None).await;
        holds(&view)
    })
    .await;
}

/// Waits until the node's `/dashboard/health-checks` contains `needle`.
async fn until_view_contains(server: &TestServer, what: &str, needle: &str) {
    until_view(server, what, |view| view.contains(needle)).await;
}

/// Waits until every instance has been probed `n` more times (by any node).
async fn until_probed(instances: &[&Instance], n: usize) {
    let before: Vec<usize> = instances
        .iter()
        .map(|i| i.probed_by.lock().unwrap().len())
        .collect();
    eventually(&format!("every instance probed {n} more times"), || async {
        instances
            .iter()
            .zip(&before)
            .all(|(instance, before)| instance.probed_by.lock().unwrap().len() >= before + n)
    })
    .await;
}

#[tokio::test]
async fn an_instance_whose_health_endpoint_fails_reads_down_and_comes_back_up() {
    let (server, instance) = failed_o1(CHECKS).await;
    instance.set_healthy(true);

    reads(&server, "o1", "UP").await;
}

#[tokio::test]
async fn a_failing_instance_is_no_prometheus_target_until_it_passes_again() {
    let (server, instance) = failed_o1(CHECKS).await;
    assert_eq!(server.get_text("/prometheus/sd", None).await.1, "[]");
    instance.set_healthy(true);
    reads(&server, "o1", "UP").await;
    let (_, targets) = server.get_text("/prometheus/sd", None).await;
    assert!(targets.contains(r#""instance":"o1""#), "{targets}");
}

#[tokio::test]
async fn an_instance_that_stops_listening_reads_down_in_the_full_and_delta_documents() {
    let server = TestServer::start(CHECKS).await;
    let instance = Instance::start().await;
    // A port nothing listens on: the instance has crashed.
    let crashed = instance.body("ORDERS", "o1").replace(
        &instance.address.port().to_string(),
        &heureka_testkit::free_port().to_string(),
    );
    register_body(&server, &crashed).await;

    reads(&server, "o1", "DOWN").await;

    let full = server.registry_json().await;
    assert!(full.contains(r#""status":"DOWN""#), "{full}");
    let (_, delta) = server
        .get_text("/apps/delta", Some("application/json"))
        .await;
    assert!(delta.contains(r#""status":"DOWN""#), "{delta}");
}

#[tokio::test]
async fn an_operators_out_of_service_survives_the_checks_recovery() {
    let (server, instance) = failed_o1(CHECKS).await;

    server.take_out_of_service("ORDERS", "o1").await;
    instance.set_healthy(true);
    until_view_contains(&server, "the verdict recovers", r#""health":"PASSING""#).await;

    reads_now(&server, "o1", "OUT_OF_SERVICE").await;
}

#[tokio::test]
async fn the_instances_own_down_wins_over_a_passing_check() {
    let server = TestServer::start(CHECKS).await;
    let instance = Instance::start().await;
    let down = instance
        .body("ORDERS", "o1")
        .replace(r#""status":"UP""#, r#""status":"DOWN""#);
    register_body(&server, &down).await;

    until_view_contains(&server, "probed and passing", r#""passed":true"#).await;

    reads_now(&server, "o1", "DOWN").await;
}

#[tokio::test]
async fn when_every_probe_fails_at_once_the_server_suspects_itself_and_marks_none_down() {
    let server = TestServer::start(CHECKS).await;
    let instance = Instance::start().await;
    for n in 0..4 {
        register(&server, &instance, "ORDERS", &format!("o{n}")).await;
    }
    until_view(&server, "every instance probed", |view| {
        view.matches(r#""passed":true"#).count() == 4
    })
    .await;

    // One endpoint behind all four: from here, every probe fails at once.
    instance.set_healthy(false);
    until_view(&server, "the guard holds", |view| {
        view.contains(r#""suspended":true"#) && view.matches(r#""passed":false"#).count() == 4
    })
    .await;
    // Rounds go on failing (four probes each); none of them marks anything.
    until_probed(&[&instance], 20).await;

    for n in 0..4 {
        reads_now(&server, &format!("o{n}"), "UP").await;
    }
}

#[tokio::test]
async fn a_spring_cloud_instance_that_answers_its_health_is_alive_whatever_status_it_echoes() {
    let server = TestServer::start(CHECKS).await;
    let instance = Instance::start().await;
    // Spring Cloud's client registers `management.port`; its /actuator/health echoes the
    // status the registry serves for it, so a 503 may be the registry's own DOWN.
    instance.spring_boot.store(true, Ordering::SeqCst);
    register(&server, &instance, "ORDERS", "o1").await;

    instance.set_healthy(false);
    until_probed(&[&instance], 5).await;

    reads_now(&server, "o1", "UP").await;
}

#[tokio::test]
async fn a_spring_boot_503_from_an_instance_without_spring_clouds_client_fails() {
    let server = TestServer::start(CHECKS).await;
    let instance = Instance::start().await;
    instance.spring_boot.store(true, Ordering::SeqCst);
    let body = instance
        .body("ORDERS", "o1")
        .replace("management.port", "team");
    register_body(&server, &body).await;

    instance.set_healthy(false);

    reads(&server, "o1", "DOWN").await;
}

/// Three nodes listing each other, checks on.
async fn cluster() -> Vec<TestServer> {
    cluster_of(&[CHECKS, CHECKS, CHECKS]).await
}

/// Nodes listing each other, each started with its own arguments.
async fn cluster_of(configs: &[&[&str]]) -> Vec<TestServer> {
    let mut listeners = Vec::new();
    let mut urls = Vec::new();
    for _ in configs {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        urls.push(format!(
            "http://127.0.0.1:{}/eureka/",
            listener.local_addr().unwrap().port()
        ));
        listeners.push(listener);
    }
    let service_url = format!("--eureka.client.service-url.defaultZone={}", urls.join(","));
    let mut nodes = Vec::new();
    for (listener, config) in listeners.into_iter().zip(configs) {
        let mut args: Vec<&str> = config.to_vec();
        args.extend_from_slice(&[
            &service_url,
            "--eureka.client.register-with-eureka=false",
            "--heureka.replication.batch-delay-ms=50",
            "--heureka.replication.anti-entropy-interval-ms=500",
            "--eureka.server.registry-sync-retries=1",
            "--eureka.server.registry-sync-retry-wait-ms=100",
        ]);
        nodes.push(TestServer::start_on(listener, &args).await);
    }
    nodes
}

/// Which nodes probed each instance over the next rounds, once all three share the checks.
async fn probers_of(instances: &[Instance]) -> Vec<Vec<String>> {
    for instance in instances {
        instance.take_probers();
    }
    until_probed(&instances.iter().collect::<Vec<_>>(), 5).await;
    instances.iter().map(Instance::take_probers).collect()
}

#[tokio::test]
async fn in_a_cluster_each_instance_is_probed_by_one_node_and_another_takes_over_when_it_dies() {
    let mut nodes = cluster().await;
    let mut instances = Vec::new();
    for n in 0..6 {
        let instance = Instance::start().await;
        register(&nodes[0], &instance, "ORDERS", &format!("o{n}")).await;
        instances.push(instance);
    }
    for node in &nodes {
        until_view(node, "three nodes share the checks", |view| {
            view.contains(r#""checkers":3"#)
        })
        .await;
    }

    let probers = probers_of(&instances).await;
    assert!(probers.iter().all(|nodes| nodes.len() == 1), "{probers:?}");

    // Stop the node that probes o0; its instances move to the two others.
    let owner = &probers[0][0];
    let mut owner_index = None;
    for (n, node) in nodes.iter().enumerate() {
        let (_, answer) = node.get_text("/peerreplication/health-checks", None).await;
        if answer.contains(&format!(r#""node":{owner},"#)) {
            owner_index = Some(n);
        }
    }
    nodes
        .remove(owner_index.expect("the owner is one of the nodes"))
        .stop()
        .await;
    until_view(&nodes[0], "two nodes share the checks", |view| {
        view.contains(r#""checkers":2"#)
    })
    .await;

    let probers = probers_of(&instances).await;
    assert!(probers.iter().all(|nodes| nodes.len() == 1), "{probers:?}");
    assert!(probers[0][0] != *owner, "{probers:?}");
}

#[tokio::test]
async fn a_verdict_reaches_every_node_of_a_cluster() {
    let nodes = cluster().await;
    let instance = Instance::start().await;
    register(&nodes[1], &instance, "ORDERS", "o1").await;
    for node in &nodes {
        reads(node, "o1", "UP").await;
    }

    instance.set_healthy(false);

    for node in &nodes {
        reads(node, "o1", "DOWN").await;
    }
}

#[tokio::test]
async fn when_the_last_node_that_checks_is_gone_the_others_lift_its_verdicts() {
    let mut nodes = cluster_of(&[CHECKS, &[]]).await;
    let instance = Instance::start().await;
    register(&nodes[0], &instance, "ORDERS", "o1").await;
    instance.set_healthy(false);
    reads(&nodes[1], "o1", "DOWN").await;

    // The node with checks off is left: nobody would ever lift the verdict.
    nodes.remove(0).stop().await;

    reads(&nodes[0], "o1", "UP").await;
}

/// Checks as above, an instance removed after failing for half a second.
const EVICTING: &[&str] = &[
    "--heureka.health-checks.enabled=true",
    "--heureka.health-checks.interval=100ms",
    "--heureka.health-checks.jitter=0",
    "--heureka.health-checks.evict-after=500ms",
    "--eureka.client.register-with-eureka=false",
];

#[tokio::test]
async fn an_instance_failing_longer_than_evict_after_is_removed() {
    let mut args = EVICTING.to_vec();
    args.push("--eureka.server.enable-self-preservation=false");
    let (server, instance) = checked_o1(&args).await;

    instance.set_healthy(false);

    until_status(&server, "o1", None).await;
}

#[tokio::test]
async fn evict_after_removes_nothing_while_self_preservation_holds() {
    // One instance, no renewals yet: below the renewal threshold, so self-preservation holds.
    let (server, instance) = failed_o1(EVICTING).await;

    // Well past evict-after: ten more rounds.
    until_probed(&[&instance], 10).await;

    reads_now(&server, "o1", "DOWN").await;
}

/// The registration `Instance::body` makes, claiming `address` (an IP) as the instance's own.
fn body_at(instance: &Instance, id: &str, address: &str) -> String {
    instance.body("ORDERS", id).replace("127.0.0.1", address)
}

/// The instance's line of the node's health-checks view.
async fn probe_line(server: &TestServer, id: &str) -> String {
    let (_, view) = server.get_text("/dashboard/health-checks", None).await;
    let start = view.find(&format!(r#""id":"{id}""#)).unwrap_or(0);
    view[start..].split('}').next().unwrap_or("").to_owned()
}

/// `heureka_health_checks_total{outcome="refused"}`.
async fn refused_probes(server: &TestServer) -> u64 {
    let metrics = reqwest::get(server.root_url("/actuator/prometheus"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    metrics
        .lines()
        .find(|line| line.starts_with(r#"heureka_health_checks_total{outcome="refused"}"#))
        .and_then(|line| line.split_whitespace().last()?.parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn an_instance_claiming_a_link_local_address_is_not_probed_by_default() {
    // 169.254.169.254 is the cloud's metadata service: outside the default networks.
    let server = TestServer::start(CHECKS).await;
    let instance = Instance::start().await;
    let body = body_at(&instance, "o1", "169.254.169.254");
    register_body(&server, &body).await;
    // A failing instance on loopback (allowed), to count rounds by.
    instance.set_healthy(false);
    register(&server, &instance, "ORDERS", "o2").await;

    until_view_contains(&server, "o1's probe refused", r#""refused":true"#).await;
    let line = probe_line(&server, "o1").await;
    assert!(
        line.contains("169.254.169.254 is outside heureka.health-checks.allowed-networks"),
        "{line}"
    );
    assert!(line.contains(r#""health":"PASSING""#), "{line}");
    assert!(refused_probes(&server).await >= 1);
    // No verdict: it keeps its own UP through the rounds that make o2 DOWN.
    reads(&server, "o2", "DOWN").await;
    reads_now(&server, "o1", "UP").await;
}

#[tokio::test]
async fn outside_the_allowed_networks_nothing_is_connected_to_not_even_by_name() {
    let mut args = CHECKS.to_vec();
    args.push("--heureka.health-checks.allowed-networks=10.0.0.0/8");
    let server = TestServer::start(&args).await;
    let instance = Instance::start().await;
    instance.set_healthy(false);
    // One by its IP (a TCP probe), one by a host name that resolves to loopback (its URL).
    let by_ip = instance
        .body("ORDERS", "o1")
        .replace(r#""healthCheckUrl":"http"#, r#""healthCheckUrl":"ftp"#);
    let by_name = instance
        .body("ORDERS", "o2")
        .replace(r#""hostName":"127.0.0.1""#, r#""hostName":"localhost""#)
        .replace(
            &format!(
                "http://127.0.0.1:{}/actuator/health",
                instance.address.port()
            ),
            &format!(
                "http://localhost:{}/actuator/health",
                instance.address.port()
            ),
        );
    for body in [by_ip, by_name] {
        register_body(&server, &body).await;
    }

    until_view(&server, "both probes refused", |view| {
        view.matches(r#""refused":true"#).count() == 2
    })
    .await;
    let by_name = probe_line(&server, "o2").await;
    assert!(by_name.contains("localhost resolves to"), "{by_name}");
    assert!(by_name.contains("GET http://localhost:"), "{by_name}");
    assert!(probe_line(&server, "o1")
        .await
        .contains("connect 127.0.0.1:"));
    assert!(
        instance.take_probers().is_empty(),
        "the instance was probed"
    );
    for id in ["o1", "o2"] {
        reads_now(&server, id, "UP").await;
    }
}

#[tokio::test]
async fn a_failing_verdict_is_lifted_once_the_instance_moves_outside_the_allowed_networks() {
    let (server, instance) = failed_o1(CHECKS).await;

    // It registers again claiming an address the checks may not probe: no verdict any more.
    let body = body_at(&instance, "o1", "169.254.169.254");
    register_body(&server, &body).await;

    reads(&server, "o1", "UP").await;
    assert!(probe_line(&server, "o1")
        .await
        .contains(r#""refused":true"#));
}
