//! The HTTP contract of the Eureka API: routes, status codes, formats.

use crate::support::{gunzip, gzip, holding_o1, spring_body, Method, Sent, TestServer};

/// The status a renew of `ORDERS/o-1` as `UP`, last changed at `last_dirty` by the client,
/// answers on a server holding it.
async fn renew_o1(last_dirty: u64) -> u16 {
    let server = holding_o1(&[]).await;
    let path = format!("/apps/ORDERS/o-1?status=UP&lastDirtyTimestamp={last_dirty}");
    server.put(&path).await
}

/// `ORDERS/o-1` as JSON.
async fn o1_json(server: &TestServer) -> String {
    server.get_json("/apps/ORDERS/o-1").await.1
}

/// Registers `ORDERS/o-1` with its body in `encoding`; asserts 204 and that it is registered.
async fn register_encoded(encoding: &str, body: Vec<u8>) {
    let server = TestServer::start(&[]).await;
    let response = server
        .request(Method::POST, "/apps/ORDERS")
        .header("Content-Type", "application/json")
        .header("Content-Encoding", encoding)
        .body(body)
        .sent()
        .await;
    assert_eq!(response.status(), 204);
    assert!(server.registry_json().await.contains("o-1"));
}

#[tokio::test]
async fn full_fetch_answers_200_right_after_start() {
    let server = TestServer::start(&[]).await;
    let body = server.json_ok("/apps").await;
    assert_eq!(
        body,
        r#"{"applications":{"versions__delta":"1","apps__hashcode":"","application":[]}}"#
    );
}

#[tokio::test]
async fn register_answers_204_with_no_body() {
    let server = TestServer::start(&[]).await;
    let response = server
        .post_json("/apps/ORDERS", &spring_body("ORDERS", "o-1"))
        .await;
    assert_eq!(response.status(), 204);
    assert!(response.bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn registration_is_visible_in_the_very_next_full_fetch() {
    let server = TestServer::start(&[]).await;
    server.registry_json().await; // warm the cache
    server.register("ORDERS", "o-1").await;
    assert!(server
        .registry_json()
        .await
        .contains(r#""instanceId":"o-1""#));
}

#[tokio::test]
async fn full_fetch_without_accept_is_xml() {
    let server = holding_o1(&[]).await;
    let response = server.get("/apps", None).await;
    assert_eq!(response.headers()["content-type"], "application/xml");
    let body = response.text().await.unwrap();
    assert!(body.starts_with("<applications>"), "{body}");
    assert!(body.contains("<instanceId>o-1</instanceId>"));
}

#[tokio::test]
async fn full_fetch_is_gzipped_when_asked() {
    let server = holding_o1(&[]).await;
    let response = server
        .request(Method::GET, "/apps/")
        .header("Accept", "application/json")
        .header("Accept-Encoding", "gzip")
        .sent()
        .await;
    assert_eq!(response.headers()["content-encoding"], "gzip");
    let json = gunzip(&response.bytes().await.unwrap());
    assert!(json.contains(r#""instanceId":"o-1""#));
}

#[tokio::test]
async fn gzip_request_bodies_are_inflated() {
    let body = spring_body("ORDERS", "o-1");
    register_encoded(
        "gzip",
        gzip(body.as_bytes(), flate2::Compression::default()),
    )
    .await;
}

#[tokio::test]
async fn identity_encoded_request_bodies_are_read_as_sent() {
    register_encoded("identity", spring_body("ORDERS", "o-1").into_bytes()).await;
}

#[tokio::test]
async fn v2_prefix_and_trailing_slashes_reach_the_same_registry() {
    let server = holding_o1(&[]).await;
    for path in [
        "/v2/apps",
        "/v2/apps/",
        "/apps/",
        "/v2/apps/ORDERS/",
        "/apps/orders/o-1/",
    ] {
        let body = server.json_ok(path).await;
        assert!(body.contains("o-1"), "{path}: {body}");
    }
}

#[tokio::test]
async fn percent_encoded_instance_ids_are_decoded() {
    let server = TestServer::start(&[]).await;
    server.register("PY-APP", "127.0.0.1:py-app:9090").await;
    let encoded = "/apps/PY-APP/127.0.0.1%3Apy-app%3A9090?status=UP";
    assert_eq!(server.put(encoded).await, 200);
    assert_eq!(server.put("/apps/PY-APP/127.0.0.1:py-app:9090").await, 200);
}

#[tokio::test]
async fn app_names_are_case_insensitive_in_paths() {
    let server = TestServer::start(&[]).await;
    server.register("js-app", "js-1").await;
    let body = server.json_ok("/apps/JS-APP").await;
    assert!(body.contains(r#""name":"JS-APP""#), "{body}");
    assert_eq!(server.put("/apps/js-app/js-1").await, 200);
}

#[tokio::test]
async fn renew_of_a_registered_instance_answers_200() {
    assert_eq!(renew_o1(1714550399000).await, 200);
}

#[tokio::test]
async fn renew_with_a_newer_client_copy_answers_404_so_the_client_reregisters() {
    assert_eq!(renew_o1(1714550399001).await, 404);
}

#[tokio::test]
async fn renew_of_an_unknown_instance_answers_404() {
    let server = TestServer::start(&[]).await;
    assert_eq!(server.put("/apps/ORDERS/nobody").await, 404);
}

#[tokio::test]
async fn cancel_answers_200_then_404() {
    let server = holding_o1(&[]).await;
    assert_eq!(server.delete("/apps/ORDERS/o-1").await, 200);
    assert_eq!(server.delete("/apps/ORDERS/o-1").await, 404);
    assert!(!server.registry_json().await.contains("o-1"));
}

#[tokio::test]
async fn cancelled_instance_appears_in_delta_as_deleted() {
    let server = holding_o1(&[]).await;
    server.delete("/apps/ORDERS/o-1").await;
    let delta = server.json_ok("/apps/delta").await;
    assert!(delta.contains(r#""actionType":"DELETED""#), "{delta}");
}

#[tokio::test]
async fn status_override_is_served_and_removable() {
    let server = holding_o1(&[]).await;
    server.take_out_of_service("ORDERS", "o-1").await;
    let body = o1_json(&server).await;
    assert!(
        body.contains(r#""status":"OUT_OF_SERVICE","overriddenStatus":"OUT_OF_SERVICE""#),
        "{body}"
    );
    assert_eq!(server.delete("/apps/ORDERS/o-1/status").await, 200);
    let body = o1_json(&server).await;
    assert!(
        body.contains(r#""status":"UNKNOWN","overriddenStatus":"UNKNOWN""#),
        "{body}"
    );
}

#[tokio::test]
async fn metadata_update_merges_query_parameters() {
    let server = holding_o1(&[]).await;
    let metadata = "/apps/ORDERS/o-1/metadata?zone=eu-1&team=core";
    assert_eq!(server.put(metadata).await, 200);
    let body = o1_json(&server).await;
    assert!(body.contains(r#""management.port":"8080""#), "{body}");
    assert!(body.contains(r#""zone":"eu-1""#), "{body}");
}

#[tokio::test]
async fn instance_lookup_by_id_searches_all_apps() {
    let server = holding_o1(&[]).await;
    let body = server.json_ok("/instances/o-1").await;
    assert!(
        body.starts_with(r#"{"instance":{"instanceId":"o-1""#),
        "{body}"
    );
    assert_eq!(server.get_text("/instances/nobody", None).await.0, 404);
}

#[tokio::test]
async fn vip_lookup_selects_by_vip_address_and_never_404s() {
    let server = holding_o1(&[]).await;
    let body = server.json_ok("/vips/orders").await;
    assert!(
        body.contains("o-1") && body.contains(r#""versions__delta":"-1""#),
        "{body}"
    );
    let body = server.json_ok("/svips/nothing").await;
    assert!(body.contains(r#""application":[]"#), "{body}");
}

#[tokio::test]
async fn delta_answers_403_when_disabled() {
    let server = TestServer::start(&["--eureka.server.disable-delta=true"]).await;
    assert_eq!(server.get_text("/apps/delta", None).await.0, 403);
}

#[tokio::test]
async fn single_instance_reads_prefer_xml_without_accept() {
    let server = holding_o1(&[]).await;
    let response = server.get("/apps/ORDERS/o-1", None).await;
    assert_eq!(response.headers()["content-type"], "application/xml");
    assert!(response.text().await.unwrap().starts_with("<instance>"));
}

async fn full_fetch(server: &TestServer, accept: &str, gzip: bool) -> String {
    let mut request = server
        .request(Method::GET, "/apps")
        .header("Accept", accept);
    if gzip {
        request = request.header("Accept-Encoding", "gzip");
    }
    let body = request.sent().await.bytes().await.unwrap();
    if !gzip {
        return String::from_utf8(body.to_vec()).unwrap();
    }
    gunzip(&body)
}

#[tokio::test]
async fn full_fetch_after_changes_to_some_apps_is_the_whole_current_registry() {
    let server = TestServer::start(&[]).await;
    for app in ["ALPHA", "BRAVO", "CHARLIE"] {
        server
            .register(app, &format!("{}-1", app.to_lowercase()))
            .await;
    }
    for accept in ["application/json", "application/xml"] {
        full_fetch(&server, accept, true).await; // every fragment encoded once
    }
    server.register("BRAVO", "bravo-2").await;
    assert_eq!(server.delete("/apps/CHARLIE/charlie-1").await, 200);
    for accept in ["application/json", "application/xml"] {
        let plain = full_fetch(&server, accept, false).await;
        assert_eq!(
            full_fetch(&server, accept, true).await,
            plain,
            "gzip and plain bodies agree"
        );
        for id in ["alpha-1", "bravo-1", "bravo-2"] {
            assert!(plain.contains(id), "{id} missing from {plain}");
        }
        assert!(!plain.contains("charlie-1"), "{plain}");
        assert!(plain.contains("UP_3_"), "{plain}");
    }
}

#[tokio::test]
async fn a_title_case_app_name_is_found_at_the_path_it_registered_at() {
    // Issue 7, defect 5: `ǅ` was stored as `Ǆ`, but renew and GET at `/apps/%C7%85` got 404.
    let server = TestServer::start(&[]).await;
    let title_case = spring_body("ǅ", "t1");
    let response = server.post_json("/apps/%C7%85", &title_case).await;
    assert_eq!(response.status(), 204);
    assert_eq!(server.put("/apps/%C7%85/t1").await, 200, "renew");
    let body = server.json_ok("/apps/%C7%85/t1").await;
    assert!(body.contains("\"app\":\"Ǆ\""), "{body}");
}

/// The head and body of the answer to `request`, sent as raw bytes over a fresh connection.
async fn raw_exchange(port: u16, request: &str) -> (String, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut read = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the connection closed before the head ended");
        read.extend_from_slice(&chunk[..n]);
        if let Some(at) = read.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8(read[..head_end].to_vec())
        .unwrap()
        .to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length: "))
        .unwrap_or_else(|| panic!("no content-length in {head}"))
        .trim()
        .parse()
        .unwrap();
    while read.len() < head_end + length {
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the connection closed before the body ended");
        read.extend_from_slice(&chunk[..n]);
    }
    (head, read[head_end..head_end + length].to_vec())
}

/// The fast lane (`src/fast_lane.rs`) leaves `Content-Length` to hyper, as the router does not:
/// on the wire both answers carry it.
#[tokio::test]
async fn a_heartbeats_answer_on_the_wire_carries_its_length() {
    let server = holding_o1(&[]).await;
    let heartbeat = |query: &str| {
        format!("PUT /eureka/apps/ORDERS/o-1?{query} HTTP/1.1\r\nHost: localhost\r\n\r\n")
    };
    let (head, body) = raw_exchange(server.port, &heartbeat("status=UP")).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("\r\ncontent-length: 0\r\n"), "{head}");
    assert!(body.is_empty());
    let (head, body) = raw_exchange(server.port, &heartbeat("lastDirtyTimestamp=now")).await;
    assert!(head.starts_with("http/1.1 400"), "{head}");
    assert!(!body.is_empty());
    assert!(
        head.contains(&format!("\r\ncontent-length: {}\r\n", body.len())),
        "{head}"
    );
    assert!(
        head.contains("\r\nx-content-type-options: nosniff\r\n"),
        "{head}"
    );
}
