//! The receiving end of peer replication, `POST /peerreplication/batch/` (spec §7.4, §7.5), and
//! the anti-entropy digest, `GET /peerreplication/digest`.
//!
//! Each element is answered with the status its own endpoint gives a peer; the registry is
//! checked through the ordinary read endpoints.

use heureka_core::{Instance, InstanceStatus};
use heureka_wire::{
    decode_instance, decode_registry_digest, decode_replication_response, Format, ReplicationResult,
};

use crate::support::{gzip, spring_body, Method, Sent, TestServer, CREDENTIALS};

/// A lone node (it has no peers) that accepts replication from this test process, which
/// plays its peer from 127.0.0.1: without the allowed address it would accept none
/// (`peers_only.rs`).
async fn receiver(args: &[&str]) -> TestServer {
    let mut args = args.to_vec();
    args.push("--heureka.replication.allowed-addresses=127.0.0.1");
    TestServer::start(&args).await
}

/// Asserts `ORDERS/o-1` is served with `status` (`None`: it is not).
async fn o1_reads(server: &TestServer, status: Option<InstanceStatus>) {
    assert_eq!(status_of(server, "ORDERS", "o-1").await, status);
}

/// A [`receiver`] holding `ORDERS/o-1`, registered as a Spring client registers.
async fn receiver_holding_o1() -> TestServer {
    let server = receiver(&[]).await;
    server.register("ORDERS", "o-1").await;
    server
}

/// [`receiver_holding_o1`], once a peer's batch took `o-1` out of service.
async fn receiver_with_o1_out_of_service() -> TestServer {
    let server = receiver_holding_o1().await;
    replicate(&server, &[status_update("ORDERS", "o-1", "OUT_OF_SERVICE")]).await;
    server
}

/// The `lastDirtyTimestamp` of [`spring_body`].
const DIRTY: i64 = 1_714_550_399_000;

/// The instance of [`spring_body`] without its `{"instance":…}` wrapper, as a batch carries it.
fn instance_info(app: &str, id: &str) -> String {
    let body = spring_body(app, id);
    body[r#"{"instance":"#.len()..body.len() - 1].to_owned()
}

fn register(app: &str, id: &str) -> String {
    format!(
        r#"{{"appName":"{app}","id":"{id}","lastDirtyTimestamp":{DIRTY},"status":"UP","instanceInfo":{},"action":"Register"}}"#,
        instance_info(app, id)
    )
}

fn heartbeat(app: &str, id: &str, dirty: i64) -> String {
    format!(
        r#"{{"appName":"{app}","id":"{id}","lastDirtyTimestamp":{dirty},"status":"UP","action":"Heartbeat"}}"#
    )
}

fn cancel(app: &str, id: &str) -> String {
    format!(r#"{{"appName":"{app}","id":"{id}","action":"Cancel"}}"#)
}

fn status_update(app: &str, id: &str, status: &str) -> String {
    format!(
        r#"{{"appName":"{app}","id":"{id}","lastDirtyTimestamp":{DIRTY},"status":"{status}","action":"StatusUpdate"}}"#
    )
}

fn delete_override(app: &str, id: &str, status: &str) -> String {
    format!(
        r#"{{"appName":"{app}","id":"{id}","lastDirtyTimestamp":{DIRTY},"status":"{status}","action":"DeleteStatusOverride"}}"#
    )
}

fn batch(elements: &[String]) -> String {
    format!(r#"{{"replicationList":[{}]}}"#, elements.join(","))
}

/// Posts a batch as the Java sender does (trailing slash, JSON); asserts the 200 and its JSON
/// content type, and returns the element results.
async fn replicate(server: &TestServer, elements: &[String]) -> Vec<ReplicationResult> {
    let response = server
        .post_json("/peerreplication/batch/", &batch(elements))
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    decode_replication_response(&response.bytes().await.unwrap()).unwrap()
}

fn codes(results: &[ReplicationResult]) -> Vec<u16> {
    results.iter().map(|result| result.status_code).collect()
}

/// One instance as `GET /apps/{app}/{id}` shows it, or `None` when that is a 404.
async fn read_instance(server: &TestServer, app: &str, id: &str) -> Option<Instance> {
    let (code, body) = server
        .get_text(&format!("/apps/{app}/{id}"), Some("application/json"))
        .await;
    if code == 404 {
        return None;
    }
    assert_eq!(code, 200, "{app}/{id}");
    Some(decode_instance(body.as_bytes(), Format::Json, 0).unwrap())
}

async fn status_of(server: &TestServer, app: &str, id: &str) -> Option<InstanceStatus> {
    read_instance(server, app, id)
        .await
        .map(|instance| instance.status)
}

/// The status and the override a known instance shows.
async fn statuses_of(server: &TestServer, app: &str, id: &str) -> (InstanceStatus, InstanceStatus) {
    let instance = read_instance(server, app, id).await.expect("registered");
    (instance.status, instance.overridden_status)
}

// --- each action --------------------------------------------------------------------------------

#[tokio::test]
async fn register_element_registers_the_instance_and_answers_200() {
    let server = receiver(&[]).await;
    let results = replicate(&server, &[register("ORDERS", "o-1")]).await;
    assert_eq!(results, [ReplicationResult::status(200)]);
    o1_reads(&server, Some(InstanceStatus::Up)).await;
}

#[tokio::test]
async fn heartbeat_element_answers_200_for_a_known_instance_and_404_otherwise() {
    let server = receiver_holding_o1().await;
    let results = replicate(
        &server,
        &[
            heartbeat("ORDERS", "o-1", DIRTY),
            heartbeat("ORDERS", "o-2", DIRTY),
        ],
    )
    .await;
    assert_eq!(codes(&results), [200, 404]);
}

#[tokio::test]
async fn heartbeat_element_with_a_newer_copy_answers_404_so_the_peer_sends_it() {
    let server = receiver_holding_o1().await;
    let results = replicate(&server, &[heartbeat("ORDERS", "o-1", DIRTY + 1)]).await;
    assert_eq!(codes(&results), [404]);
}

#[tokio::test]
async fn cancel_element_removes_the_instance_then_answers_404() {
    let server = receiver_holding_o1().await;
    let results = replicate(&server, &[cancel("ORDERS", "o-1"), cancel("ORDERS", "o-1")]).await;
    assert_eq!(codes(&results), [200, 404]);
    o1_reads(&server, None).await;
}

/// Replicates one batch of `element` for `ORDERS/o-1` and for `ORDERS/o-2`, which the server
/// does not hold: asserts they are answered 200 and 404, and o-1's (status, override) after.
async fn applies_to_o1_and_404s_for_o2(
    server: &TestServer,
    element: impl Fn(&str) -> String,
    statuses: (InstanceStatus, InstanceStatus),
) {
    let results = replicate(server, &[element("o-1"), element("o-2")]).await;
    assert_eq!(codes(&results), [200, 404]);
    assert_eq!(statuses_of(server, "ORDERS", "o-1").await, statuses);
}

#[tokio::test]
async fn status_update_element_sets_the_override() {
    let server = receiver_holding_o1().await;
    let element = |id: &str| status_update("ORDERS", id, "OUT_OF_SERVICE");
    let out_of_service = (InstanceStatus::OutOfService, InstanceStatus::OutOfService);
    applies_to_o1_and_404s_for_o2(&server, element, out_of_service).await;
}

#[tokio::test]
async fn delete_status_override_element_removes_it_and_sets_the_status_it_carries() {
    let server = receiver_with_o1_out_of_service().await;
    let element = |id: &str| delete_override("ORDERS", id, "UP");
    let up = (InstanceStatus::Up, InstanceStatus::Unknown);
    applies_to_o1_and_404s_for_o2(&server, element, up).await;
}

#[tokio::test]
async fn delete_status_override_element_without_a_status_leaves_unknown() {
    let server = receiver_with_o1_out_of_service().await;
    let element = format!(
        r#"{{"appName":"ORDERS","id":"o-1","lastDirtyTimestamp":{DIRTY},"action":"DeleteStatusOverride"}}"#
    );
    assert_eq!(codes(&replicate(&server, &[element]).await), [200]);
    o1_reads(&server, Some(InstanceStatus::Unknown)).await;
}

#[tokio::test]
async fn every_action_in_one_batch_is_answered_in_order() {
    let server = receiver(&[]).await;
    let results = replicate(
        &server,
        &[
            register("ORDERS", "o-1"),
            heartbeat("ORDERS", "o-1", DIRTY),
            status_update("ORDERS", "o-1", "OUT_OF_SERVICE"),
            delete_override("ORDERS", "o-1", "UP"),
            cancel("ORDERS", "o-1"),
            heartbeat("ORDERS", "o-1", DIRTY),
        ],
    )
    .await;
    assert_eq!(codes(&results), [200, 200, 200, 200, 200, 404]);
    o1_reads(&server, None).await;
}

#[tokio::test]
async fn empty_batch_gets_an_empty_answer() {
    let server = receiver(&[]).await;
    assert_eq!(replicate(&server, &[]).await, []);
}

// --- peer semantics -------------------------------------------------------------------------------

#[tokio::test]
async fn heartbeat_element_with_an_older_copy_gets_409_and_ours() {
    let server = receiver_holding_o1().await;
    let results = replicate(&server, &[heartbeat("ORDERS", "o-1", DIRTY - 1)]).await;
    assert_eq!(codes(&results), [409]);
    let ours = results[0]
        .entity
        .as_ref()
        .expect("our copy comes with the 409");
    assert_eq!(ours.id(), "o-1");
    assert_eq!(ours.last_dirty_timestamp, DIRTY);
}

#[tokio::test]
async fn the_same_older_heartbeat_from_a_client_is_just_renewed() {
    // The contrast to the 409 above: only peers are told that our copy is newer.
    let server = receiver_holding_o1().await;
    let path = format!(
        "/apps/ORDERS/o-1?status=UP&lastDirtyTimestamp={}",
        DIRTY - 1
    );
    assert_eq!(server.put(&path).await, 200);
}

#[tokio::test]
async fn heartbeat_element_carrying_an_override_we_lack_stores_it() {
    // Eureka's storeOverriddenStatusIfRequired, for replicas only: the peer's newer copy has an
    // override, which the re-register that follows the 404 must honour.
    let server = receiver_holding_o1().await;
    let element = format!(
        r#"{{"appName":"ORDERS","id":"o-1","lastDirtyTimestamp":{},"overriddenStatus":"OUT_OF_SERVICE","status":"OUT_OF_SERVICE","action":"Heartbeat"}}"#,
        DIRTY + 1
    );
    assert_eq!(codes(&replicate(&server, &[element]).await), [404]);
    let (_, overridden) = statuses_of(&server, "ORDERS", "o-1").await;
    assert_eq!(overridden, InstanceStatus::OutOfService);
}

#[tokio::test]
async fn the_same_override_from_a_client_heartbeat_is_not_stored() {
    let server = receiver_holding_o1().await;
    let path = format!(
        "/apps/ORDERS/o-1?status=UP&lastDirtyTimestamp={}&overriddenstatus=OUT_OF_SERVICE",
        DIRTY + 1
    );
    assert_eq!(server.put(&path).await, 404);
    let (_, overridden) = statuses_of(&server, "ORDERS", "o-1").await;
    assert_eq!(overridden, InstanceStatus::Unknown);
}

// --- elements that cannot be applied -----------------------------------------------------------

#[tokio::test]
async fn one_unreadable_element_gets_500_while_the_others_apply() {
    let server = receiver(&[]).await;
    let unreadable =
        r#"{"appName":"ORDERS","id":"o-9","action":"Heartbeat","lastDirtyTimestamp":"soon"}"#;
    let results = replicate(
        &server,
        &[
            register("ORDERS", "o-1"),
            unreadable.to_owned(),
            register("ORDERS", "o-2"),
        ],
    )
    .await;
    assert_eq!(codes(&results), [200, 500, 200]);
    assert!(status_of(&server, "ORDERS", "o-1").await.is_some());
    assert!(status_of(&server, "ORDERS", "o-2").await.is_some());
}

#[tokio::test]
async fn unknown_action_fails_only_its_element() {
    let server = receiver_holding_o1().await;
    let future = r#"{"appName":"ORDERS","id":"o-1","action":"Teleport"}"#.to_owned();
    let results = replicate(&server, &[future, cancel("ORDERS", "o-1")]).await;
    assert_eq!(codes(&results), [500, 200]);
}

#[tokio::test]
async fn invalid_registration_answers_200_and_changes_nothing() {
    // Java's receiver ignores the 400 its addInstance returns; the sender must not retry.
    let server = receiver_holding_o1().await;
    let before = server.registry_json().await;
    let no_hostname = register("ORDERS", "o-2").replace(r#""hostName":"10.0.0.5","#, "");
    let results = replicate(&server, &[no_hostname]).await;
    assert_eq!(codes(&results), [200]);
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn registration_under_another_app_name_answers_200_and_changes_nothing() {
    let server = receiver(&[]).await;
    let before = server.registry_json().await;
    let mismatched =
        register("ORDERS", "o-1").replacen(r#""appName":"ORDERS""#, r#""appName":"PAYMENTS""#, 1);
    assert_eq!(codes(&replicate(&server, &[mismatched]).await), [200]);
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn status_update_without_a_status_is_500_for_a_known_instance_and_404_otherwise() {
    let server = receiver_holding_o1().await;
    let without_status = |id: &str| {
        format!(
            r#"{{"appName":"ORDERS","id":"{id}","lastDirtyTimestamp":{DIRTY},"action":"StatusUpdate"}}"#
        )
    };
    let results = replicate(&server, &[without_status("o-1"), without_status("o-2")]).await;
    assert_eq!(codes(&results), [500, 404]);
    o1_reads(&server, Some(InstanceStatus::Up)).await;
}

#[tokio::test]
async fn delete_status_override_without_a_dirty_timestamp_is_500() {
    // Java dereferences the missing timestamp; the element fails and changes nothing.
    let server = receiver_with_o1_out_of_service().await;
    let element =
        r#"{"appName":"ORDERS","id":"o-1","status":"UP","action":"DeleteStatusOverride"}"#;
    assert_eq!(
        codes(&replicate(&server, &[element.to_owned()]).await),
        [500]
    );
    o1_reads(&server, Some(InstanceStatus::OutOfService)).await;
}

// --- bodies that are not batches --------------------------------------------------------------

#[tokio::test]
async fn malformed_batch_is_400_with_a_reason_and_changes_nothing() {
    let server = receiver_holding_o1().await;
    let before = server.registry_json().await;
    for body in [
        r#"{"replicationList":[{"appName":"ORDERS""#,
        r#"{"replicationList":{}}"#,
        r#"{}"#,
        "",
    ] {
        let response = server.post_json("/peerreplication/batch/", body).await;
        assert_eq!(response.status(), 400, "{body}");
        let reason = response.text().await.unwrap();
        assert!(reason.starts_with("replication batch: "), "{reason}");
        assert!(!reason.contains('\n'), "one line: {reason:?}");
    }
    assert_eq!(server.registry_json().await, before);
}

/// Posts `compressed`, a gzip body, as a peer's batch.
async fn post_gzipped_batch(server: &TestServer, compressed: Vec<u8>) -> reqwest::Response {
    server
        .request(Method::POST, "/peerreplication/batch/")
        .header("Content-Type", "application/json")
        .header("Content-Encoding", "gzip")
        .body(compressed)
        .sent()
        .await
}

#[tokio::test]
async fn gzip_batch_is_inflated_and_applied() {
    let server = receiver(&[]).await;
    let body = batch(&[register("ORDERS", "o-1")]);
    let compressed = gzip(body.as_bytes(), flate2::Compression::default());
    let response = post_gzipped_batch(&server, compressed).await;
    assert_eq!(response.status(), 200);
    let results = decode_replication_response(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(codes(&results), [200]);
    assert!(status_of(&server, "ORDERS", "o-1").await.is_some());
}

#[tokio::test]
async fn oversized_batch_is_413_and_changes_nothing() {
    let server = receiver(&["--heureka.max-request-body-size=4KB"]).await;
    let before = server.registry_json().await;
    let elements: Vec<String> = (0..10)
        .map(|n| register("ORDERS", &format!("o-{n}")))
        .collect();
    let body = batch(&elements);
    assert!(body.len() > 4096);
    let response = server.post_json("/peerreplication/batch/", &body).await;
    assert_eq!(response.status(), 413);
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn gzip_bomb_batch_is_413_on_its_inflated_size() {
    let server = receiver(&["--heureka.max-request-body-size=4KB"]).await;
    let padding = format!(
        r#"{{"replicationList":[],"padding":"{}"}}"#,
        "x".repeat(1 << 20)
    );
    let compressed = gzip(padding.as_bytes(), flate2::Compression::best());
    assert!(compressed.len() < 4096);
    let response = post_gzipped_batch(&server, compressed).await;
    assert_eq!(response.status(), 413);
}

// --- the digest -----------------------------------------------------------------------------------

#[tokio::test]
async fn digest_lists_live_and_removed_instances() {
    let server = receiver_holding_o1().await;
    server.register("ORDERS", "o-2").await;
    assert_eq!(server.delete("/apps/ORDERS/o-2").await, 200);
    let response = server.get("/peerreplication/digest/", None).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let digest = decode_registry_digest(&response.bytes().await.unwrap(), 0).unwrap();
    let entries: Vec<(&str, &str, bool)> = digest
        .iter()
        .map(|entry| (entry.app.as_str(), entry.id.as_str(), entry.removed))
        .collect();
    assert_eq!(entries, [("ORDERS", "o-1", false), ("ORDERS", "o-2", true)]);
    assert_eq!(digest[0].last_dirty_timestamp, DIRTY);
}

#[tokio::test]
async fn digest_of_an_empty_registry_is_empty() {
    let server = receiver(&[]).await;
    let (status, body) = server.get_text("/peerreplication/digest", None).await;
    assert_eq!((status, body.as_str()), (200, r#"{"digest":[]}"#));
}

#[tokio::test]
async fn replicated_writes_show_in_the_digest() {
    let server = receiver(&[]).await;
    replicate(
        &server,
        &[
            register("ORDERS", "o-1"),
            status_update("ORDERS", "o-1", "OUT_OF_SERVICE"),
        ],
    )
    .await;
    let (_, body) = server.get_text("/peerreplication/digest", None).await;
    let digest = decode_registry_digest(body.as_bytes(), 0).unwrap();
    assert_eq!(digest.len(), 1);
    assert_eq!(
        (digest[0].status, digest[0].overridden_status),
        (InstanceStatus::OutOfService, InstanceStatus::OutOfService)
    );
}

// --- authentication -------------------------------------------------------------------------------

#[tokio::test]
async fn batch_and_digest_need_credentials_when_auth_is_configured() {
    let server = receiver(&CREDENTIALS).await;
    let post = |credentials: Option<&str>| {
        let mut request = server
            .request(Method::POST, "/peerreplication/batch/")
            .header("Content-Type", "application/json")
            .body(batch(&[register("ORDERS", "o-1")]));
        if let Some(password) = credentials {
            request = request.basic_auth("eureka", Some(password));
        }
        request.send()
    };
    assert_eq!(post(None).await.unwrap().status(), 401);
    assert_eq!(post(Some("guess")).await.unwrap().status(), 401);
    assert_eq!(
        server.get("/peerreplication/digest", None).await.status(),
        401
    );

    assert_eq!(post(Some("s3cret")).await.unwrap().status(), 200);
    let digest = server
        .get_as("/peerreplication/digest", "eureka", "s3cret")
        .await;
    assert_eq!(digest.status(), 200);
    let digest = decode_registry_digest(&digest.bytes().await.unwrap(), 0).unwrap();
    assert_eq!(digest.len(), 1, "the authenticated batch was applied");
}
