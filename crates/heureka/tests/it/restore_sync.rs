//! A node restored from its store (`heureka.persistence.dir`) with peers: before its first
//! read it merges its peers' later copies and tombstones, so that a cancel acknowledged by a
//! peer while it was down is never undone by what it restored; with no peer answering it
//! serves the restored view alone and says so (the persistence health component and a WARN
//! line), until a peer answers.
//!
//! B, the peer, replicates to no one and anti-entropy runs once a minute: the only way B's
//! cancel can reach A before A's first read is A's start-up sync.

use std::path::{Path, PathBuf};

use serde_json::Value;

use heureka_testkit::{eventually, free_port};

use crate::persistence::{orders, wait_until_durable};
use crate::process::HeurekaProcess;
use crate::support::{json_status, spring_body};

fn store_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("restore-sync-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Node A: keeps its registry in `dir`, lists B as its peer, compares with it once a minute.
fn start_a(port: u16, dir: &Path, port_b: u16) -> HeurekaProcess {
    let store = format!("--heureka.persistence.dir={}", dir.display());
    let peer = format!("--eureka.client.service-url.defaultZone=http://127.0.0.1:{port_b}/eureka/");
    HeurekaProcess::start_on(
        port,
        &[
            &store,
            &peer,
            "--heureka.replication.anti-entropy-interval-ms=60000",
            "--eureka.server.registry-sync-retries=1",
        ],
    )
}

/// Node B: no peers of its own; takes replication (A's digest requests) from this host.
fn start_b(port: u16) -> HeurekaProcess {
    HeurekaProcess::start_on(
        port,
        &[
            "--heureka.replication.allowed-addresses=127.0.0.1",
            "--heureka.replication.anti-entropy-interval-ms=60000",
        ],
    )
}

async fn send(server: &HeurekaProcess, method: reqwest::Method, path: &str, body: String) -> u16 {
    let url = format!("http://{}/eureka{path}", server.address());
    json_status(reqwest::Client::new().request(method, url), body).await
}

/// The first answer `server` gives to a read of ORDERS once it serves reads.
async fn first_read(server: &HeurekaProcess) -> Vec<(String, String)> {
    let first = std::cell::RefCell::new(None);
    eventually("the node serves reads", || async {
        *first.borrow_mut() = orders(server).await.map(|instances| {
            let status = |(id, status, _): (String, String, String)| (id, status);
            instances.into_iter().map(status).collect()
        });
        first.borrow().is_some()
    })
    .await;
    first.into_inner().unwrap()
}

async fn persistence_details(server: &HeurekaProcess) -> Value {
    let url = format!("http://{}/actuator/health", server.address());
    let health = reqwest::get(url).await.unwrap().bytes().await.unwrap();
    let health: Value = serde_json::from_slice(&health).unwrap();
    health["components"]["persistence"]["details"].clone()
}

fn up(ids: &[&str]) -> Vec<(String, String)> {
    ids.iter().map(|id| (id.to_string(), "UP".into())).collect()
}

/// A registers o1 and o2 and writes them to its store, then stops. B holds o1 too, from its
/// own client (a later registration than A's), so that it can take its cancel.
async fn two_registered_then_a_stopped(a: &mut HeurekaProcess, b: &HeurekaProcess) {
    for id in ["o1", "o2"] {
        let status = send(
            a,
            reqwest::Method::POST,
            "/apps/ORDERS",
            spring_body("ORDERS", id),
        );
        assert_eq!(status.await, 204);
    }
    let status = send(
        b,
        reqwest::Method::POST,
        "/apps/ORDERS",
        spring_body("ORDERS", "o1"),
    );
    assert_eq!(status.await, 204);
    wait_until_durable(a).await;
    a.terminate();
    assert!(a.wait_for_exit().await.expect("exits").success());
}

#[tokio::test]
async fn a_restored_node_never_serves_an_instance_its_peer_cancelled_while_it_was_down() {
    let dir = store_dir("tombstone");
    let (port_a, port_b) = (free_port(), free_port());
    let b = start_b(port_b);
    let mut a = start_a(port_a, &dir, port_b);
    two_registered_then_a_stopped(&mut a, &b).await;

    let cancelled = send(
        &b,
        reqwest::Method::DELETE,
        "/apps/ORDERS/o1",
        String::new(),
    );
    assert_eq!(cancelled.await, 200);

    let a = start_a(port_a, &dir, port_b);
    assert!(
        a.log().contains("registry restored instances=2 "),
        "{}",
        a.log()
    );
    assert_eq!(first_read(&a).await, up(&["o2"]), "{}", a.log());
    assert_eq!(
        persistence_details(&a).await["restoreCheckedWithPeers"],
        true
    );
}

#[tokio::test]
async fn a_restored_node_with_no_peer_answering_serves_its_restored_view_and_says_so() {
    let dir = store_dir("alone");
    let (port_a, port_b) = (free_port(), free_port());
    let mut b = start_b(port_b);
    let mut a = start_a(port_a, &dir, port_b);
    two_registered_then_a_stopped(&mut a, &b).await;
    b.terminate();
    assert!(b.wait_for_exit().await.expect("exits").success());

    let a = start_a(port_a, &dir, port_b);
    assert_eq!(first_read(&a).await, up(&["o1", "o2"]));
    assert_eq!(
        persistence_details(&a).await["restoreCheckedWithPeers"],
        false
    );
    a.wait_for_log("serving the restored view alone").await;
}
