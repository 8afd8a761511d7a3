//! `heureka.limits.*` and Eureka's rate limiter over real sockets: each limit at, below and
//! above its bound on REST JSON, XML and the peer batches; a refusal is a 4xx with a one-line
//! reason and leaves the registry exactly as it was.

use heureka_core::Instance;
use heureka_wire::{decode_replication_response, Format};

use crate::support::{spring_body, Method, Sent, TestServer};

/// A lone node that also takes replication from this test process, which plays its peer
/// from 127.0.0.1 for the batch tests (`peers_only.rs`).
async fn start(args: &[&str]) -> TestServer {
    let mut args = args.to_vec();
    args.push("--heureka.replication.allowed-addresses=127.0.0.1");
    TestServer::start(&args).await
}

/// A register body in `format` of the Spring-shaped instance, edited by `edit`.
fn body(format: Format, app: &str, id: &str, edit: impl FnOnce(&mut Instance)) -> String {
    let mut instance =
        heureka_wire::decode_instance(spring_body(app, id).as_bytes(), Format::Json, 0).unwrap();
    edit(&mut instance);
    String::from_utf8(heureka_wire::encode_instance(&instance, format)).unwrap()
}

async fn post(server: &TestServer, app: &str, format: Format, body: String) -> (u16, String) {
    let content_type = match format {
        Format::Json => "application/json",
        Format::Xml => "application/xml",
    };
    let response = server
        .request(Method::POST, &format!("/apps/{app}"))
        .header("Content-Type", content_type)
        .body(body)
        .sent()
        .await;
    (response.status().as_u16(), response.text().await.unwrap())
}

/// Registers and asserts the 204.
async fn registers(server: &TestServer, app: &str, format: Format, body: String) {
    let (status, text) = post(server, app, format, body).await;
    assert_eq!(status, 204, "{text}");
}

/// [`registers`] the Spring body of `(app, id)` in `format`, changed by `edit`.
async fn registers_built(
    server: &TestServer,
    format: Format,
    (app, id): (&str, &str),
    edit: impl FnOnce(&mut Instance),
) {
    registers(server, app, format, body(format, app, id, edit)).await;
}

/// Posts, asserts `status` with `reason` on one line, and that the registry did not change.
async fn refused(
    server: &TestServer,
    app: &str,
    format: Format,
    body: String,
    status: u16,
    reason: &str,
) {
    let before = server.registry_json().await;
    let (got, text) = post(server, app, format, body).await;
    assert_eq!(got, status, "{text}");
    assert!(text.contains(reason), "expected {reason:?} in {text:?}");
    assert!(!text.contains('\n'), "one line: {text:?}");
    assert_eq!(server.registry_json().await, before, "the registry changed");
}

async fn replicate(server: &TestServer, elements: &[String]) -> Vec<u16> {
    let batch = format!(r#"{{"replicationList":[{}]}}"#, elements.join(","));
    let response = server.post_json("/peerreplication/batch/", &batch).await;
    assert_eq!(response.status(), 200);
    let results = decode_replication_response(&response.bytes().await.unwrap()).unwrap();
    results.iter().map(|result| result.status_code).collect()
}

/// A peer batch's register element carrying `instance`.
fn replicated_register(app: &str, id: &str, edit: impl FnOnce(&mut Instance)) -> String {
    let wrapped = body(Format::Json, app, id, edit);
    let info = &wrapped[r#"{"instance":"#.len()..wrapped.len() - 1];
    format!(
        r#"{{"appName":"{app}","id":"{id}","lastDirtyTimestamp":1714550399000,"status":"UP","instanceInfo":{info},"action":"Register"}}"#
    )
}

fn replicated_heartbeat(app: &str, id: &str) -> String {
    format!(r#"{{"appName":"{app}","id":"{id}","status":"UP","action":"Heartbeat"}}"#)
}

async fn instance(server: &TestServer, app: &str, id: &str) -> Option<Instance> {
    let (status, text) = server
        .get_text(&format!("/apps/{app}/{id}"), Some("application/json"))
        .await;
    (status == 200)
        .then(|| heureka_wire::decode_instance(text.as_bytes(), Format::Json, 0).unwrap())
}

const SIXTEEN: &str = "0123456789abcdef";
const SEVENTEEN: &str = "0123456789abcdefg";

async fn with_names_of_at_most_16_bytes() -> TestServer {
    start(&["--heureka.limits.max-name-length=16"]).await
}

// === name lengths ===

#[tokio::test]
async fn an_instance_id_at_and_below_the_name_limit_registers_in_json_and_xml() {
    let server = with_names_of_at_most_16_bytes().await;
    registers_built(&server, Format::Json, ("A", "short"), |_| {}).await;
    registers_built(&server, Format::Json, ("A", SIXTEEN), |_| {}).await;
    registers_built(&server, Format::Xml, ("B", SIXTEEN), |_| {}).await;
    assert!(instance(&server, "B", SIXTEEN).await.is_some());
}

#[tokio::test]
async fn names_at_the_default_limit_can_be_heartbeated_within_the_default_header_limit() {
    let server = start(&[]).await;
    // Every byte of the id percent-encodes to three: the longest URL such names make.
    let (app, id) = ("A".repeat(256), " ".repeat(256));
    registers_built(&server, Format::Json, (&app, &id), |_| {}).await;
    let encoded = "%20".repeat(256);
    let path = format!(
        "/apps/{app}/{encoded}?status=OUT_OF_SERVICE&lastDirtyTimestamp=1714550399000&overriddenstatus=OUT_OF_SERVICE"
    );
    let response = server
        .request(Method::PUT, &path)
        .header("DiscoveryIdentity-Name", "DefaultClient")
        .header("DiscoveryIdentity-Version", "1.4")
        .header("DiscoveryIdentity-Id", "10.0.0.5")
        .header("Accept", "application/json")
        .sent()
        .await;
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn an_instance_id_over_the_name_limit_is_400_in_json_and_xml() {
    let server = with_names_of_at_most_16_bytes().await;
    server.register("ORDERS", "o-1").await;
    for format in [Format::Json, Format::Xml] {
        let body = body(format, "ORDERS", SEVENTEEN, |_| {});
        let reason = "instanceId is 17 bytes long, over the limit of 16 bytes";
        refused(&server, "ORDERS", format, body, 400, reason).await;
    }
}

#[tokio::test]
async fn an_app_name_over_the_name_limit_is_400() {
    let server = with_names_of_at_most_16_bytes().await;
    let app = "ABCDEFGHIJKLMNOPQ";
    let body = body(Format::Json, app, "i-1", |_| {});
    refused(&server, app, Format::Json, body, 400, "appName is 17 bytes").await;
}

#[tokio::test]
async fn vip_addresses_over_the_name_limit_are_400() {
    let server = with_names_of_at_most_16_bytes().await;
    let vip = body(Format::Json, "A", "i-1", |instance| {
        instance.vip_address = Some(SEVENTEEN.to_owned());
    });
    refused(
        &server,
        "A",
        Format::Json,
        vip,
        400,
        "vipAddress is 17 bytes",
    )
    .await;
    let secure = body(Format::Xml, "A", "i-1", |instance| {
        instance.secure_vip_address = Some(SEVENTEEN.to_owned());
    });
    refused(
        &server,
        "A",
        Format::Xml,
        secure,
        400,
        "secureVipAddress is 17",
    )
    .await;
}

#[tokio::test]
async fn status_and_metadata_paths_with_a_name_over_the_limit_are_400() {
    let server = with_names_of_at_most_16_bytes().await;
    server.register("ORDERS", "o-1").await;
    let before = server.registry_json().await;
    let status = server
        .put(&format!(
            "/apps/ORDERS/{SEVENTEEN}/status?value=OUT_OF_SERVICE"
        ))
        .await;
    assert_eq!(status, 400);
    let metadata = server
        .put(&format!("/apps/ORDERS/{SEVENTEEN}/metadata?k=v"))
        .await;
    assert_eq!(metadata, 400);
    let removal = server
        .delete(&format!("/apps/ORDERS/{SEVENTEEN}/status"))
        .await;
    assert_eq!(removal, 400);
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn a_peer_batch_refuses_names_over_the_limit_with_400_and_applies_the_rest() {
    let server = with_names_of_at_most_16_bytes().await;
    let before = server.registry_json().await;
    let codes = replicate(
        &server,
        &[
            replicated_register("A", SEVENTEEN, |_| {}),
            replicated_heartbeat("A", SEVENTEEN),
        ],
    )
    .await;
    assert_eq!(codes, [400, 400]);
    assert_eq!(server.registry_json().await, before);
    let codes = replicate(&server, &[replicated_register("A", SIXTEEN, |_| {})]).await;
    assert_eq!(codes, [200]);
    assert!(instance(&server, "A", SIXTEEN).await.is_some());
}

#[tokio::test]
async fn a_stamped_batch_refuses_names_over_the_limit_with_400() {
    use heureka_core::{Parts, StampedCopy};
    use heureka_wire::{ReplicationAction, StampedItem};
    let server = with_names_of_at_most_16_bytes().await;
    let before = server.registry_json().await;
    let item = StampedItem {
        action: ReplicationAction::Register,
        copy: StampedCopy {
            app: "A".to_owned(),
            id: SEVENTEEN.to_owned(),
            parts: Parts::default(),
            leased: true,
        },
    };
    let batch = heureka_wire::encode_stamped_batch(&[item]);
    let response = server
        .request(Method::POST, "/peerreplication/stamped")
        .header("Content-Type", "application/json")
        .body(batch)
        .sent()
        .await;
    assert_eq!(response.status(), 200);
    let results = heureka_wire::decode_stamped_response(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(results[0].status_code, 400);
    assert_eq!(server.registry_json().await, before);
}

// === lease duration ===

fn lasting(secs: u32) -> impl FnOnce(&mut Instance) {
    move |instance| instance.lease_info.duration_in_secs = secs
}

#[tokio::test]
async fn a_lease_below_or_at_the_limit_is_kept_and_one_over_it_is_served_shortened() {
    let server = start(&["--heureka.limits.max-lease-duration=2m"]).await;
    for (id, asked, served) in [
        ("below", 90, 90),
        ("at", 120, 120),
        ("over", i32::MAX as u32, 120),
    ] {
        registers_built(&server, Format::Json, ("A", id), lasting(asked)).await;
        let stored = instance(&server, "A", id).await.unwrap();
        assert_eq!(stored.lease_info.duration_in_secs, served, "{id}");
    }
    registers_built(&server, Format::Xml, ("B", "x"), lasting(3600)).await;
    let stored = instance(&server, "B", "x").await.unwrap();
    assert_eq!(stored.lease_info.duration_in_secs, 120);
}

#[tokio::test]
async fn a_replicated_lease_over_the_limit_is_shortened_too() {
    let server = start(&["--heureka.limits.max-lease-duration=2m"]).await;
    let codes = replicate(&server, &[replicated_register("A", "p", lasting(86_400))]).await;
    assert_eq!(codes, [200]);
    let stored = instance(&server, "A", "p").await.unwrap();
    assert_eq!(stored.lease_info.duration_in_secs, 120);
}

// === metadata ===

async fn with_small_metadata() -> TestServer {
    start(&[
        "--heureka.limits.max-metadata-entries=2",
        "--heureka.limits.max-metadata-bytes=64",
    ])
    .await
}

fn with_entries<'a>(entries: &'a [(&'a str, &'a str)]) -> impl FnOnce(&mut Instance) + 'a {
    move |instance| {
        instance.metadata.clear();
        for (key, value) in entries {
            instance
                .metadata
                .insert((*key).to_owned(), (*value).to_owned());
        }
    }
}

#[tokio::test]
async fn metadata_at_the_entry_limit_registers_and_over_it_is_400_in_json_and_xml() {
    let server = with_small_metadata().await;
    let two = body(
        Format::Json,
        "A",
        "i",
        with_entries(&[("a", "1"), ("b", "2")]),
    );
    registers(&server, "A", Format::Json, two).await;
    for format in [Format::Json, Format::Xml] {
        let three = body(
            format,
            "A",
            "j",
            with_entries(&[("a", "1"), ("b", "2"), ("c", "3")]),
        );
        let reason = "metadata has 3 entries, over the limit of 2";
        refused(&server, "A", format, three, 400, reason).await;
    }
}

#[tokio::test]
async fn metadata_over_the_byte_limit_is_400() {
    let server = with_small_metadata().await;
    let at = "v".repeat(63);
    registers(
        &server,
        "A",
        Format::Json,
        body(Format::Json, "A", "i", with_entries(&[("k", &at)])),
    )
    .await;
    let over = "v".repeat(64);
    let body = body(Format::Xml, "A", "j", with_entries(&[("k", &over)]));
    refused(&server, "A", Format::Xml, body, 400, "metadata is 65 bytes").await;
}

#[tokio::test]
async fn a_metadata_update_is_checked_after_merging_and_refused_unchanged() {
    let server = with_small_metadata().await;
    let one = body(Format::Json, "A", "i", with_entries(&[("a", "1")]));
    registers(&server, "A", Format::Json, one).await;
    assert_eq!(server.put("/apps/A/i/metadata?b=2").await, 200);
    let before = server.registry_json().await;
    let response = server
        .request(Method::PUT, "/apps/A/i/metadata?c=3")
        .sent()
        .await;
    assert_eq!(response.status(), 400);
    let reason = response.text().await.unwrap();
    assert_eq!(reason, "metadata has 3 entries, over the limit of 2");
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn a_peer_batch_refuses_metadata_over_the_limit_with_400() {
    let server = with_small_metadata().await;
    let before = server.registry_json().await;
    let three = with_entries(&[("a", "1"), ("b", "2"), ("c", "3")]);
    let codes = replicate(&server, &[replicated_register("A", "p", three)]).await;
    assert_eq!(codes, [400]);
    assert_eq!(server.registry_json().await, before);
}

/// An AmazonInfo data centre carrying `entries` (an `instance-id` among them).
fn in_amazon<'a>(entries: &'a [(&'a str, &'a str)]) -> impl FnOnce(&mut Instance) + 'a {
    move |instance| {
        instance.data_center_info = Some(heureka_core::DataCenterInfo {
            class: heureka_core::DataCenterClass::Amazon,
            name: "Amazon".to_owned(),
            metadata: entries
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect(),
        });
    }
}

const AMAZON_TWO: &[(&str, &str)] = &[("instance-id", "i-1"), ("availability-zone", "a")];
const AMAZON_THREE: &[(&str, &str)] = &[
    ("instance-id", "i-1"),
    ("availability-zone", "a"),
    ("ami-id", "x"),
];

#[tokio::test]
async fn amazon_data_center_metadata_over_the_metadata_limits_is_400_naming_it_in_json_and_xml() {
    let server = with_small_metadata().await;
    registers_built(&server, Format::Json, ("A", "two"), in_amazon(AMAZON_TWO)).await;
    let reason = "dataCenterInfo.metadata has 3 entries, over the limit of 2";
    for format in [Format::Json, Format::Xml] {
        let three = body(format, "A", "three", in_amazon(AMAZON_THREE));
        refused(&server, "A", format, three, 400, reason).await;
    }
    let long = [("instance-id", "i-1"), ("user-data", &*"x".repeat(64))];
    let large = body(Format::Json, "A", "large", in_amazon(&long));
    let reason = "dataCenterInfo.metadata is 87 bytes, over the limit of 64 bytes";
    refused(&server, "A", Format::Json, large, 400, reason).await;
}

#[tokio::test]
async fn a_peer_batch_refuses_amazon_data_center_metadata_over_the_limit_with_400() {
    let server = with_small_metadata().await;
    let before = server.registry_json().await;
    let codes = replicate(
        &server,
        &[
            replicated_register("A", "three", in_amazon(AMAZON_THREE)),
            replicated_register("A", "two", in_amazon(AMAZON_TWO)),
        ],
    )
    .await;
    assert_eq!(codes, [400, 200]);
    assert!(instance(&server, "A", "three").await.is_none());
    assert_ne!(
        server.registry_json().await,
        before,
        "the element within applies"
    );
}

// === instances in all ===

#[tokio::test]
async fn new_instances_register_up_to_the_limit_then_get_403_while_re_registers_pass() {
    let server = start(&["--heureka.limits.max-instances=2"]).await;
    server.register("A", "1").await;
    server.register("B", "2").await;
    let third = body(Format::Json, "C", "3", |_| {});
    refused(&server, "C", Format::Json, third, 403, "registry full").await;
    let xml = body(Format::Xml, "C", "3", |_| {});
    refused(&server, "C", Format::Xml, xml, 403, "limit of 2 instances").await;
    // Re-registering one held always works.
    server.register("A", "1").await;
}

#[tokio::test]
async fn a_peer_batch_register_of_a_new_instance_beyond_the_limit_is_403() {
    let server = start(&["--heureka.limits.max-instances=1"]).await;
    server.register("A", "1").await;
    let codes = replicate(
        &server,
        &[
            replicated_register("B", "2", |_| {}),
            replicated_register("A", "1", |_| {}),
        ],
    )
    .await;
    assert_eq!(codes, [403, 200]);
    assert!(instance(&server, "B", "2").await.is_none());
}

// === Eureka's rate limiter ===

async fn fetch(server: &TestServer, path: &str, client: &str) -> u16 {
    server
        .request(Method::GET, path)
        .header("Accept", "application/json")
        .header("DiscoveryIdentity-Name", client)
        .sent()
        .await
        .status()
        .as_u16()
}

/// At 1 fetch a second after a burst of 2, fetches made back to back meet an empty bucket
/// within a few tries however slow the machine (each try would need a second to refill).
async fn limited(enabled: bool) -> TestServer {
    let enabled = format!("--eureka.server.rate-limiter-enabled={enabled}");
    start(&[
        enabled.as_str(),
        "--eureka.server.rate-limiter-burst-size=2",
        "--eureka.server.rate-limiter-registry-fetch-average-rate=1",
        "--eureka.server.rate-limiter-full-fetch-average-rate=1",
        "--eureka.server.rate-limiter-privileged-clients=gateway",
    ])
    .await
}

#[tokio::test]
async fn enabled_a_non_standard_client_beyond_the_burst_gets_503() {
    let server = limited(true).await;
    let mut codes = Vec::new();
    for _ in 0..10 {
        codes.push(fetch(&server, "/apps/delta", "curl").await);
    }
    assert_eq!(&codes[..2], [200, 200], "the burst passes: {codes:?}");
    assert!(codes.contains(&503), "{codes:?}");
}

#[tokio::test]
async fn enabled_privileged_clients_and_eureka_servers_are_never_throttled() {
    let server = limited(true).await;
    for _ in 0..10 {
        assert_eq!(fetch(&server, "/apps", "gateway").await, 200);
        assert_eq!(fetch(&server, "/apps", "DefaultServer").await, 200);
        assert_eq!(fetch(&server, "/apps", "DefaultClient").await, 200);
    }
}

#[tokio::test]
async fn disabled_fetches_are_never_503_but_those_over_the_rate_are_counted() {
    let server = limited(false).await;
    for _ in 0..10 {
        assert_eq!(fetch(&server, "/apps", "curl").await, 200);
    }
    let metrics = crate::metrics::scrape(&server).await;
    let counted = metrics
        .lines()
        .find(|line| line.starts_with("heureka_rate_limited_fetches_total{fetch=\"full\"}"))
        .unwrap_or_else(|| panic!("no rate-limited count in {metrics}"));
    let count: f64 = counted.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(count >= 1.0, "{counted}");
}
