//! Replication between Heureka nodes in one process, over real sockets: writes on one node
//! reach the others, a node that starts later syncs, and anti-entropy repairs what
//! replication cannot reach (a node that does not list its peer, a chain).
//!
//! Waiting is a bounded poll for the expected state, never an assertion on how long it took.

use std::time::Duration;

use heureka_testkit::eventually;
use tokio::net::TcpListener;

use crate::push::Push;
use crate::support::{spring_body, Sent, TestServer};

/// Fast timers, so convergence takes milliseconds; every other setting is the default.
/// Shared with `namespaced_cluster.rs`.
pub(crate) const FAST: &[&str] = &[
    "--heureka.replication.anti-entropy-interval-ms=200",
    "--heureka.replication.batch-delay-ms=50",
    "--eureka.client.register-with-eureka=false",
    "--eureka.server.registry-sync-retries=1",
    "--eureka.server.registry-sync-retry-wait-ms=100",
];

pub(crate) async fn listeners(n: usize) -> (Vec<TcpListener>, Vec<String>) {
    let mut listeners = Vec::new();
    let mut urls = Vec::new();
    for _ in 0..n {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        urls.push(format!(
            "http://127.0.0.1:{}/eureka/",
            listener.local_addr().unwrap().port()
        ));
        listeners.push(listener);
    }
    (listeners, urls)
}

pub(crate) async fn node(listener: TcpListener, peers: &[&str], extra: &[&str]) -> TestServer {
    let service_url = format!(
        "--eureka.client.service-url.defaultZone={}",
        peers.join(",")
    );
    let mut args: Vec<&str> = FAST.to_vec();
    args.push(&service_url);
    args.extend_from_slice(extra);
    TestServer::start_on(listener, &args).await
}

/// Three nodes, each listing all three (itself included, as Spring users write it).
async fn full_mesh(extra: &[&str]) -> Vec<TestServer> {
    let (listeners, urls) = listeners(3).await;
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    let mut nodes = Vec::new();
    for listener in listeners {
        nodes.push(node(listener, &urls, extra).await);
    }
    nodes
}

async fn everywhere(nodes: &[TestServer], app: &str, id: &str, status: Option<&str>) {
    for (n, node) in nodes.iter().enumerate() {
        eventually(&format!("{app}/{id} is {status:?} on node {n}"), || async {
            node.instance_status(app, id).await.as_deref() == status
        })
        .await;
    }
}

/// A [`full_mesh`] where `ORDERS/o1`, registered on node `n`, is `UP` on every node.
async fn mesh_with_o1_registered_on(n: usize) -> Vec<TestServer> {
    let nodes = full_mesh(&[]).await;
    nodes[n].register("orders", "o1").await;
    everywhere(&nodes, "ORDERS", "o1", Some("UP")).await;
    nodes
}

#[tokio::test]
async fn a_registration_on_one_node_reaches_the_others() {
    mesh_with_o1_registered_on(0).await;
}

#[tokio::test]
async fn a_cancel_on_one_node_reaches_the_others() {
    let nodes = mesh_with_o1_registered_on(1).await;
    assert_eq!(nodes[1].delete("/apps/ORDERS/o1").await, 200);
    everywhere(&nodes, "ORDERS", "o1", None).await;
}

/// `lastRenewalTimestamp` of `ORDERS/o1` on `node`.
async fn last_renewal_of_o1(node: &TestServer) -> i64 {
    let body = node.json_ok("/apps/ORDERS/o1").await;
    let instance: serde_json::Value = serde_json::from_str(&body).unwrap();
    instance["instance"]["leaseInfo"]["lastRenewalTimestamp"]
        .as_i64()
        .expect("a renewal time")
}

#[tokio::test]
async fn heartbeats_sent_faster_than_the_batching_delay_still_reach_the_peers() {
    // Heartbeats wait the batching delay (300 ms here) before they go to a peer. A client
    // renewing more often has its queued heartbeat replaced in place each time, which used
    // to put the batch off again: the peer never heard of the renewals and evicted a live
    // instance.
    let (listeners, urls) = listeners(2).await;
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    // Anti-entropy off: its repair carries renewal times too, and would hide the loss.
    let extra = [
        "--heureka.replication.batch-delay-ms=300",
        "--heureka.replication.anti-entropy-interval-ms=0",
    ];
    let mut nodes = Vec::new();
    for listener in listeners {
        nodes.push(node(listener, &urls, &extra).await);
    }
    nodes[0].register("orders", "o1").await;
    everywhere(&nodes, "ORDERS", "o1", Some("UP")).await;
    let registered = last_renewal_of_o1(&nodes[1]).await;
    // Heartbeats back to back (each a round trip: far more often than the delay), until
    // the peer has one, for 10 s at most.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        assert_eq!(nodes[0].put("/apps/ORDERS/o1").await, 200);
        if last_renewal_of_o1(&nodes[1]).await > registered {
            return;
        }
    }
    panic!("no heartbeat reached the peer while the client renewed back to back");
}

#[tokio::test]
async fn a_status_override_and_its_removal_reach_the_others() {
    let nodes = mesh_with_o1_registered_on(0).await;
    nodes[2].take_out_of_service("ORDERS", "o1").await;
    everywhere(&nodes, "ORDERS", "o1", Some("OUT_OF_SERVICE")).await;
    assert_eq!(
        nodes[2].delete("/apps/ORDERS/o1/status?value=UP").await,
        200
    );
    everywhere(&nodes, "ORDERS", "o1", Some("UP")).await;
}

#[tokio::test]
async fn a_write_on_one_node_is_pushed_to_the_subscribers_of_another() {
    let nodes = mesh_with_o1_registered_on(0).await;
    let mut push = Push::open(&nodes[2], "?app=orders", None).await;
    assert_eq!(push.next().await.event, "snapshot");
    nodes[0].take_out_of_service("ORDERS", "o1").await;
    // Bounded by `next`'s own wait: the override arrives, whatever else node 2 pushes first.
    loop {
        let message = push.next().await;
        if message.instances() == [("o1".into(), "OUT_OF_SERVICE".into(), "MODIFIED".into())] {
            break;
        }
    }
}

#[tokio::test]
async fn a_metadata_change_reaches_the_others() {
    let nodes = mesh_with_o1_registered_on(0).await;
    assert_eq!(nodes[0].put("/apps/ORDERS/o1/metadata?zone=b").await, 200);
    for node in &nodes {
        eventually("metadata replicated", || async {
            let (_, body) = node
                .get_text("/apps/ORDERS/o1", Some("application/json"))
                .await;
            body.contains("\"zone\":\"b\"")
        })
        .await;
    }
}

#[tokio::test]
async fn a_node_started_later_holds_the_registry_before_its_first_read() {
    let (mut listeners, urls) = listeners(2).await;
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    let late = listeners.pop().unwrap();
    let first = node(listeners.pop().unwrap(), &urls, &[]).await;
    first.register("orders", "o1").await;
    first.register("billing", "b1").await;
    let second = node(late, &urls, &[]).await;
    // No polling: the first read that is answered at all must already hold both.
    let mut answered = None;
    for _ in 0..400 {
        let (code, body) = second.get_text("/apps", Some("application/json")).await;
        if code == 200 {
            answered = Some(body);
            break;
        }
        assert_eq!(code, 403, "reads before the sync is done are refused");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let body = answered.expect("the second node started serving reads");
    assert!(
        body.contains("\"o1\"") || body.contains("\"instanceId\":\"o1\""),
        "{body}"
    );
    assert!(body.contains("b1"), "{body}");
}

#[tokio::test]
async fn anti_entropy_brings_a_peer_that_is_not_listed_up_to_date() {
    // A does not list B, so A never replicates to B; B lists A and pulls what A has. A takes
    // replication only from its peers, so it names B's address (all are on 127.0.0.1).
    let (mut listeners, urls) = listeners(2).await;
    let b_listener = listeners.pop().unwrap();
    let a = node(
        listeners.pop().unwrap(),
        &[&urls[0]],
        &["--heureka.replication.allowed-addresses=127.0.0.1"],
    )
    .await;
    let b = node(b_listener, &[&urls[0], &urls[1]], &[]).await;
    a.register("orders", "o1").await;
    everywhere(&[a, b], "ORDERS", "o1", Some("UP")).await;
}

#[tokio::test]
async fn a_chain_of_peers_converges() {
    // A lists B, B lists C: a registration on A reaches B by replication and C by B's
    // anti-entropy (replication itself never takes a second hop). C lists no peer, so it
    // names B's address (all are on 127.0.0.1) as a sender it accepts replication from.
    let (mut listeners, urls) = listeners(3).await;
    let c_listener = listeners.pop().unwrap();
    let b_listener = listeners.pop().unwrap();
    let a = node(listeners.pop().unwrap(), &[&urls[1]], &[]).await;
    let b = node(b_listener, &[&urls[2]], &[]).await;
    let c = node(
        c_listener,
        &[&urls[2]],
        &["--heureka.replication.allowed-addresses=127.0.0.1"],
    )
    .await;
    a.register("orders", "o1").await;
    everywhere(&[a, b, c], "ORDERS", "o1", Some("UP")).await;
}

#[tokio::test]
async fn replication_works_with_credentials_in_the_peer_urls() {
    let (listeners, urls) = listeners(2).await;
    let urls: Vec<String> = urls
        .iter()
        .map(|url| url.replace("http://", "http://admin:s3cret@"))
        .collect();
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    let auth = [
        "--spring.security.user.name=admin",
        "--spring.security.user.password=s3cret",
    ];
    let mut nodes = Vec::new();
    for listener in listeners {
        nodes.push(node(listener, &urls, &auth).await);
    }
    let body = spring_body("orders", "o1");
    let response = nodes[0]
        .http
        .post(nodes[0].url("/apps/ORDERS"))
        .basic_auth("admin", Some("s3cret"))
        .header("Content-Type", "application/json")
        .body(body)
        .sent()
        .await;
    assert_eq!(response.status(), 204);
    eventually("o1 replicated to the second node", || async {
        let response = nodes[1].get_as("/apps/ORDERS/o1", "admin", "s3cret").await;
        response.status() == 200
    })
    .await;
}

#[tokio::test]
async fn a_peer_without_credentials_is_refused() {
    let (mut listeners, urls) = listeners(2).await;
    let guarded = listeners.pop().unwrap();
    let open = node(listeners.pop().unwrap(), &[&urls[0], &urls[1]], &[]).await;
    let guarded = node(
        guarded,
        &[&urls[1]],
        &[
            "--spring.security.user.name=admin",
            "--spring.security.user.password=s3cret",
        ],
    )
    .await;
    open.register("orders", "o1").await;
    // The open node replicates without credentials: the guarded one must never take it.
    eventually("the open node saw its peer refuse", || async {
        let (_, body) = open.get_text("/status", Some("application/json")).await;
        body.contains("401")
    })
    .await;
    let response = guarded.get_as("/apps/ORDERS/o1", "admin", "s3cret").await;
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn anti_entropy_takes_no_new_instance_beyond_max_instances_but_updates_and_removals_of_held_ones(
) {
    // Y lists no peer and so replicates nothing to X: what X holds of Y's instances it takes
    // by its own anti-entropy, the path `max-instances` once did not bound.
    let (mut listeners, urls) = listeners(2).await;
    let y_listener = listeners.pop().unwrap();
    let y = node(
        y_listener,
        &[&urls[1]],
        &["--heureka.replication.allowed-addresses=127.0.0.1"],
    )
    .await;
    let x = node(
        listeners.pop().unwrap(),
        &[&urls[1]],
        &["--heureka.limits.max-instances=2"],
    )
    .await;
    x.register("a", "1").await;
    y.register("b", "2").await;
    everywhere(std::slice::from_ref(&x), "B", "2", Some("UP")).await;

    // X is full. C/3 is registered on Y before B/2's override, so the round that brings the
    // override has seen C/3 too.
    y.register("c", "3").await;
    assert_eq!(y.put("/apps/B/2/status?value=OUT_OF_SERVICE").await, 200);
    everywhere(std::slice::from_ref(&x), "B", "2", Some("OUT_OF_SERVICE")).await;
    assert_eq!(
        x.instance_status("C", "3").await,
        None,
        "beyond max-instances"
    );

    // A removal of a held instance is taken, and the room it makes takes C/3.
    assert_eq!(y.delete("/apps/B/2").await, 200);
    everywhere(std::slice::from_ref(&x), "B", "2", None).await;
    everywhere(std::slice::from_ref(&x), "C", "3", Some("UP")).await;
}

/// The ids of the instances a node's full fetch shows UP, and those its Prometheus SD lists.
async fn up_and_targets(node: &TestServer) -> (Vec<String>, Vec<String>) {
    let registry: serde_json::Value = serde_json::from_str(&node.registry_json().await).unwrap();
    let mut up: Vec<String> = registry["applications"]["application"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|app| app["instance"].as_array().unwrap().iter())
        .filter(|instance| instance["status"] == "UP")
        .map(|instance| instance["instanceId"].as_str().unwrap().to_owned())
        .collect();
    up.sort();
    let (_, body) = node.get_text("/prometheus/sd", None).await;
    let groups: serde_json::Value = serde_json::from_str(&body).unwrap();
    let targets = groups
        .as_array()
        .unwrap()
        .iter()
        .map(|group| group["labels"]["instance"].as_str().unwrap().to_owned())
        .collect();
    (up, targets)
}

#[tokio::test]
async fn every_nodes_prometheus_targets_are_the_instances_its_full_fetch_shows_up() {
    let nodes = mesh_with_o1_registered_on(0).await;
    nodes[1].register("orders", "o2").await;
    everywhere(&nodes, "ORDERS", "o2", Some("UP")).await;
    nodes[2].take_out_of_service("ORDERS", "o1").await;
    everywhere(&nodes, "ORDERS", "o1", Some("OUT_OF_SERVICE")).await;
    for node in &nodes {
        let (up, targets) = up_and_targets(node).await;
        assert_eq!(up, ["o2"]);
        assert_eq!(targets, up);
    }
}
