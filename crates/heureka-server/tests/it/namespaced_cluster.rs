//! Namespaces between Heureka peers, over real sockets: a namespace's writes reach the same
//! namespace on the peers and no other, a node learns the namespaces its peers hold (at its
//! start-up sync, or by anti-entropy after missing their creation), and a peer that holds no
//! namespaces (a Java server) is sent nothing outside the default one, and counted as no
//! failure.
//!
//! Waiting is a bounded poll for the expected state, never an assertion on how long it took.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use heureka_testkit::eventually;
use serde_json::Value;
use tokio::net::TcpListener;

use crate::cluster::{listeners, node};
use crate::support::{spring_body, Sent, TestServer};

/// Anti-entropy off: what a node holds then came by replication or its start-up sync.
const NO_ANTI_ENTROPY: &str = "--heureka.replication.anti-entropy-interval-ms=0";

/// A node's replication is accepted from any address on this host (for nodes that do not
/// list the peer that replicates to them).
const ACCEPT_LOCAL: &str = "--heureka.replication.allowed-addresses=127.0.0.1";

/// Two nodes, each listing both.
async fn pair() -> (TestServer, TestServer) {
    let (mut listeners, urls) = listeners(2).await;
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    let second = listeners.pop().unwrap();
    let first = node(listeners.pop().unwrap(), &urls, &[]).await;
    (first, node(second, &urls, &[]).await)
}

/// `path` under the API of namespace `ns`.
fn in_ns(server: &TestServer, ns: &str, path: &str) -> String {
    server.root_url(&format!("/ns/{ns}/eureka{path}"))
}

async fn register_in(server: &TestServer, ns: &str, app: &str, id: &str) {
    let response = server
        .http
        .post(in_ns(server, ns, &format!("/apps/{app}")))
        .header("Content-Type", "application/json")
        .body(spring_body(app, id))
        .sent()
        .await;
    assert_eq!(response.status(), 204, "register {app}/{id} in {ns}");
}

/// The JSON `url` answers, or `None` for any other status than 200.
async fn json_at(server: &TestServer, url: &str) -> Option<Value> {
    let response = server
        .http
        .get(url)
        .header("Accept", "application/json")
        .sent()
        .await;
    if response.status() != 200 {
        return None;
    }
    Some(serde_json::from_str(&response.text().await.unwrap()).unwrap())
}

/// The instance ids of a full fetch or delta, sorted.
fn ids(apps: &Value) -> Vec<String> {
    let mut ids: Vec<String> = apps["applications"]["application"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|app| app["instance"].as_array().unwrap().iter())
        .map(|instance| instance["instanceId"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

/// The ids namespace `ns` of `server` serves in its full fetch (none while it cannot read).
async fn ids_in(server: &TestServer, ns: &str) -> Vec<String> {
    json_at(server, &in_ns(server, ns, "/apps"))
        .await
        .map_or_else(Vec::new, |apps| ids(&apps))
}

async fn namespace_names(server: &TestServer) -> Vec<String> {
    let listing = json_at(server, &server.root_url("/ns")).await.unwrap();
    listing["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|namespace| namespace["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn holds_in(server: &TestServer, ns: &str, ids: &[&str]) {
    eventually(&format!("{ns} holds {ids:?}"), || async {
        ids_in(server, ns).await == ids
    })
    .await;
}

#[tokio::test]
async fn a_registration_in_a_namespace_reaches_that_namespace_on_the_peer_and_no_other() {
    let (first, second) = pair().await;
    register_in(&second, "team-b", "ORDERS", "b1").await;
    register_in(&first, "team-a", "ORDERS", "a1").await;
    holds_in(&second, "team-a", &["a1"]).await;
    holds_in(&first, "team-b", &["b1"]).await;
    assert_eq!(ids_in(&second, "team-b").await, ["b1"]);
    assert!(ids_in(&second, "default").await.is_empty());
    let delta = json_at(&second, &second.url("/apps/delta")).await.unwrap();
    assert!(ids(&delta).is_empty(), "default's delta: {delta}");
    let delta = json_at(&second, &in_ns(&second, "team-b", "/apps/delta"))
        .await
        .unwrap();
    assert_eq!(ids(&delta), ["b1"], "team-b's delta");
}

#[tokio::test]
async fn a_cancel_in_a_namespace_reaches_that_namespace_on_the_peer() {
    let (first, second) = pair().await;
    register_in(&first, "team-a", "ORDERS", "a1").await;
    register_in(&first, "team-a", "ORDERS", "a2").await;
    holds_in(&second, "team-a", &["a1", "a2"]).await;
    let cancel = second
        .http
        .delete(in_ns(&second, "team-a", "/apps/ORDERS/a1"))
        .sent()
        .await;
    assert_eq!(cancel.status(), 200);
    holds_in(&first, "team-a", &["a2"]).await;
}

#[tokio::test]
async fn a_node_started_later_learns_its_peers_namespaces_by_its_start_up_sync() {
    // The first node does not list the second, so nothing reaches the second by replication;
    // with anti-entropy off there, only its start-up sync can bring team-a.
    let (mut listeners, urls) = listeners(2).await;
    let late = listeners.pop().unwrap();
    let first = node(listeners.pop().unwrap(), &[&urls[0]], &[ACCEPT_LOCAL]).await;
    register_in(&first, "team-a", "ORDERS", "a1").await;
    let second = node(late, &[&urls[0], &urls[1]], &[NO_ANTI_ENTROPY]).await;
    holds_in(&second, "team-a", &["a1"]).await;
    assert_eq!(namespace_names(&second).await, ["default", "team-a"]);
}

#[tokio::test]
async fn a_namespace_created_on_a_peer_that_never_replicates_here_arrives_by_anti_entropy() {
    // The second node is running, synced, when team-a is created on the first, which does
    // not list it: only the second's anti-entropy can learn of team-a.
    let (mut listeners, urls) = listeners(2).await;
    let second_listener = listeners.pop().unwrap();
    let first = node(listeners.pop().unwrap(), &[&urls[0]], &[ACCEPT_LOCAL]).await;
    let second = node(second_listener, &[&urls[0], &urls[1]], &[]).await;
    assert_eq!(namespace_names(&second).await, ["default"]);
    register_in(&first, "team-a", "ORDERS", "a1").await;
    holds_in(&second, "team-a", &["a1"]).await;
}

/// What a peer without namespaces was asked under `/ns/`: requests, and batches (POSTs).
#[derive(Default)]
struct Asked {
    requests: AtomicUsize,
    posts: AtomicUsize,
}

/// A peer that holds no namespaces, as a Java server: 404 to everything (its default
/// namespace's replication is not what is looked at here), counting what it is asked.
async fn java_like_peer() -> (String, Arc<Asked>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/eureka/", listener.local_addr().unwrap());
    let asked = Arc::new(Asked::default());
    let counted = asked.clone();
    let app =
        axum::Router::new().fallback(move |method: axum::http::Method, uri: axum::http::Uri| {
            let counted = counted.clone();
            async move {
                if uri.path().starts_with("/ns/") {
                    counted.requests.fetch_add(1, Ordering::SeqCst);
                    if method == axum::http::Method::POST {
                        counted.posts.fetch_add(1, Ordering::SeqCst);
                    }
                }
                axum::http::StatusCode::NOT_FOUND
            }
        });
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, asked)
}

#[tokio::test]
async fn a_namespace_counts_no_failure_for_a_peer_without_namespaces_and_sends_it_no_more() {
    let (peer, asked) = java_like_peer().await;
    let (listeners, own) = listeners(1).await;
    let server = node(
        listeners.into_iter().next().unwrap(),
        &[&own[0], &peer],
        &[NO_ANTI_ENTROPY],
    )
    .await;
    register_in(&server, "team-a", "ORDERS", "a1").await;
    register_in(&server, "team-a", "ORDERS", "a2").await;
    register_in(&server, "team-a", "ORDERS", "a3").await;
    let peer_state = || async {
        let status = json_at(&server, &in_ns(&server, "team-a", "/status")).await?;
        status["peers"].as_array()?.first().cloned()
    };
    // Nothing is queued for the peer once it was asked under /ns: what was queued before is
    // dropped, and later writes are not even queued.
    eventually(
        "the peer was asked under /ns, and nothing is queued for it",
        || async {
            asked.requests.load(Ordering::SeqCst) > 0
                && peer_state()
                    .await
                    .is_some_and(|peer| peer["queueDepth"] == 0)
        },
    )
    .await;
    let peer = peer_state().await.unwrap();
    assert_eq!(peer["failures"], 0, "{peer}");
    assert_eq!(peer["up"], true, "{peer}");
    // At most the one batch that showed the peer holds no namespaces (none when the
    // namespace's start-up sync showed it first), and never Eureka's batch after it.
    assert!(asked.posts.load(Ordering::SeqCst) <= 1, "batches under /ns");
}
