//! Replication is accepted only from peers (`heureka.replication.peers-only`, on by default):
//! the peer endpoints (batch, digest, stamped, copies) and writes carrying
//! `x-netflix-discovery-replication: true` answer 403 with a reason to any other sender, and
//! the registry is kept. Peers are known by the addresses their URLs name, by
//! `heureka.replication.allowed-addresses`, or by `heureka.replication.peer-user.*`.
//!
//! Any 127.x.y.z is loopback on Linux: the node's peer is on 127.0.0.1 (where nothing listens),
//! and a forger sends from 127.0.0.2.

use std::net::IpAddr;

use reqwest::{Client, Method};

use crate::support::{spring_body, Sent, TestServer};

const PEER: &str = "127.0.0.1";
const FORGER: &str = "127.0.0.2";

/// A client whose connections come from `address`.
fn from(address: &str) -> Client {
    Client::builder()
        .no_gzip()
        .local_address(address.parse::<IpAddr>().unwrap())
        .build()
        .unwrap()
}

/// A node whose one peer is on 127.0.0.1 (its URL names a port where nothing listens); it
/// serves reads at once.
async fn node_with_a_loopback_peer(args: &[&str]) -> TestServer {
    let peer = format!(
        "--eureka.client.service-url.defaultZone={}",
        heureka_testkit::dead_url()
    );
    let mut all = vec![peer.as_str(), "--eureka.client.fetch-registry=false"];
    all.extend_from_slice(args);
    TestServer::start(&all).await
}

fn register_batch(app: &str, id: &str) -> String {
    let body = spring_body(app, id);
    let instance = &body[r#"{"instance":"#.len()..body.len() - 1];
    format!(
        r#"{{"replicationList":[{{"appName":"{app}","id":"{id}","lastDirtyTimestamp":1,"status":"UP","instanceInfo":{instance},"action":"Register"}}]}}"#
    )
}

fn cancel_batch(app: &str, id: &str) -> String {
    format!(r#"{{"replicationList":[{{"appName":"{app}","id":"{id}","action":"Cancel"}}]}}"#)
}

/// Every kind of replication a peer sends, against `ORDERS/o-1`: (what, method, path, body,
/// replication header).
fn replication_requests() -> Vec<(&'static str, Method, &'static str, String, bool)> {
    vec![
        (
            "a cancel batch",
            Method::POST,
            "/peerreplication/batch/",
            cancel_batch("ORDERS", "o-1"),
            false,
        ),
        (
            "a register batch",
            Method::POST,
            "/peerreplication/batch/",
            register_batch("ORDERS", "o-2"),
            false,
        ),
        (
            "the digest",
            Method::GET,
            "/peerreplication/digest",
            String::new(),
            false,
        ),
        (
            "a stamped batch",
            Method::POST,
            "/peerreplication/stamped",
            r#"{"replicationList":[]}"#.to_owned(),
            false,
        ),
        (
            "a request for copies",
            Method::POST,
            "/peerreplication/copies",
            r#"{"replicationList":[]}"#.to_owned(),
            false,
        ),
        (
            "a replicated register",
            Method::POST,
            "/apps/ORDERS",
            spring_body("ORDERS", "o-3"),
            true,
        ),
        (
            "a replicated heartbeat",
            Method::PUT,
            "/apps/ORDERS/o-1?status=UP&lastDirtyTimestamp=1",
            String::new(),
            true,
        ),
        (
            "a replicated cancel",
            Method::DELETE,
            "/apps/ORDERS/o-1",
            String::new(),
            true,
        ),
        (
            "a replicated override",
            Method::PUT,
            "/apps/ORDERS/o-1/status?value=OUT_OF_SERVICE",
            String::new(),
            true,
        ),
        (
            "a replicated override removal",
            Method::DELETE,
            "/apps/ORDERS/o-1/status",
            String::new(),
            true,
        ),
        (
            "a replicated metadata change",
            Method::PUT,
            "/apps/ORDERS/o-1/metadata?zone=evil",
            String::new(),
            true,
        ),
    ]
}

/// A peer's batch carrying `body`, for [`send`].
fn batch_request(body: &str) -> (&'static Method, &'static str, &str, bool) {
    (&Method::POST, "/peerreplication/batch/", body, false)
}

async fn send(
    client: &Client,
    server: &TestServer,
    (method, path, body, replicated): (&Method, &str, &str, bool),
    credentials: Option<(&str, &str)>,
) -> (u16, String) {
    let mut request = client
        .request(method.clone(), server.url(path))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .body(body.to_owned());
    if replicated {
        request = request.header("x-netflix-discovery-replication", "true");
    }
    if let Some((user, password)) = credentials {
        request = request.basic_auth(user, Some(password));
    }
    let response = request.sent().await;
    (response.status().as_u16(), response.text().await.unwrap())
}

/// Sends every kind of replication from `client` and returns what each was answered.
async fn replicate_everything(
    client: &Client,
    server: &TestServer,
    credentials: Option<(&str, &str)>,
) -> Vec<(&'static str, u16, String)> {
    let mut answers = Vec::new();
    for (what, method, path, body, replicated) in replication_requests() {
        let (status, text) = send(
            client,
            server,
            (&method, path, &body, replicated),
            credentials,
        )
        .await;
        answers.push((what, status, text));
    }
    answers
}

#[tokio::test]
async fn a_forged_batch_from_a_non_peer_is_refused_and_the_registry_kept() {
    let server = node_with_a_loopback_peer(&[]).await;
    server.register("ORDERS", "o-1").await;
    let before = server.registry_json().await;

    let body = cancel_batch("ORDERS", "o-1");
    let request = batch_request(&body);
    let (status, reason) = send(&from(FORGER), &server, request, None).await;

    assert_eq!(status, 403);
    assert_eq!(
        reason,
        "replication is accepted only from this server's peers, and 127.0.0.2 is not one \
         (heureka.replication.peers-only)"
    );
    assert_eq!(server.registry_json().await, before);
}

/// Asserts every kind of replication from `address` is refused, 403 with a reason saying
/// `not_one`, and leaves the registry as it was.
async fn refuses_every_replication(server: &TestServer, address: &str, not_one: &str) {
    let before = server.registry_json().await;
    for (what, status, reason) in replicate_everything(&from(address), server, None).await {
        assert_eq!(status, 403, "{what}: {reason}");
        assert!(reason.contains(not_one), "{what}: {reason}");
    }
    assert_eq!(server.registry_json().await, before);
}

/// Asserts no kind of replication from `address` is refused with 403.
async fn accepts_every_replication(server: &TestServer, address: &str) {
    for (what, status, reason) in replicate_everything(&from(address), server, None).await {
        assert_ne!(status, 403, "{what}: {reason}");
    }
}

#[tokio::test]
async fn every_kind_of_replication_from_a_non_peer_is_refused() {
    let server = node_with_a_loopback_peer(&[]).await;
    server.register("ORDERS", "o-1").await;
    refuses_every_replication(&server, FORGER, "127.0.0.2 is not one").await;
}

#[tokio::test]
async fn a_client_write_or_a_read_from_anywhere_is_no_replication_and_is_accepted() {
    let server = node_with_a_loopback_peer(&[]).await;
    let forger = from(FORGER);
    let register = spring_body("ORDERS", "o-9");
    let request = (&Method::POST, "/apps/ORDERS", register.as_str(), false);
    assert_eq!(send(&forger, &server, request, None).await.0, 204);
    // `false` is not Eureka's `true`: a client's write.
    let request = forger
        .delete(server.url("/apps/ORDERS/o-9"))
        .header("x-netflix-discovery-replication", "false");
    assert_eq!(request.sent().await.status(), 200);
    // A read changes nothing, whatever headers it carries.
    let request = forger
        .get(server.url("/apps"))
        .header("x-netflix-discovery-replication", "true");
    assert_eq!(request.sent().await.status(), 200);
}

#[tokio::test]
async fn replication_from_a_peers_address_is_accepted() {
    let server = node_with_a_loopback_peer(&[]).await;
    server.register("ORDERS", "o-1").await;
    accepts_every_replication(&server, PEER).await;
    // The cancel batch went through (o-1 is gone, then registered again by the batch's o-2
    // and the replicated register's o-3).
    let registry = server.registry_json().await;
    assert!(
        registry.contains("o-2") && registry.contains("o-3"),
        "{registry}"
    );
}

#[tokio::test]
async fn a_lone_node_accepts_replication_from_no_one() {
    // Its only service URL is itself: it has no peers, so not even 127.0.0.1 is one.
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o-1").await;
    refuses_every_replication(&server, PEER, "127.0.0.1 is not one").await;
}

#[tokio::test]
async fn peers_only_false_accepts_replication_from_anyone_as_eureka_does() {
    let server = node_with_a_loopback_peer(&["--heureka.replication.peers-only=false"]).await;
    server.register("ORDERS", "o-1").await;
    accepts_every_replication(&server, FORGER).await;
    assert!(!server
        .registry_json()
        .await
        .contains(r#""instanceId":"o-1""#));
}

#[tokio::test]
async fn an_allowed_block_admits_a_sender_behind_nat() {
    let server = node_with_a_loopback_peer(&[
        "--heureka.replication.allowed-addresses=10.0.0.0/8,127.0.0.0/30",
    ])
    .await;
    let request = (&Method::GET, "/peerreplication/digest", "", false);
    assert_eq!(send(&from(FORGER), &server, request, None).await.0, 200);
    let outside = "127.0.0.9";
    let (status, reason) = send(&from(outside), &server, request, None).await;
    assert_eq!(status, 403, "{reason}");
}

#[tokio::test]
async fn the_peer_user_is_a_peer_from_any_address() {
    let server = node_with_a_loopback_peer(&[
        "--spring.security.user.name=client",
        "--spring.security.user.password=client-pw",
        "--heureka.replication.peer-user.name=peer",
        "--heureka.replication.peer-user.password=peer-pw",
    ])
    .await;
    let forger = from(FORGER);
    let client = Some(("client", "client-pw"));
    let register = register_batch("ORDERS", "o-1");
    let batch = batch_request(&register);

    // The clients' credentials pass authentication, but do not make a peer.
    let (status, reason) = send(&forger, &server, batch, client).await;
    assert_eq!(status, 403, "{reason}");
    assert_eq!(
        send(&forger, &server, batch, Some(("peer", "guess")))
            .await
            .0,
        401
    );
    // The peers' own credentials do, and pass authentication too.
    assert_eq!(
        send(&forger, &server, batch, Some(("peer", "peer-pw")))
            .await
            .0,
        200
    );
    let read = (&Method::GET, "/apps/ORDERS/o-1", "", false);
    assert_eq!(
        send(&forger, &server, read, Some(("peer", "peer-pw")))
            .await
            .0,
        200
    );
}
