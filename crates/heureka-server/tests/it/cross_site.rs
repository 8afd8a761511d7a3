//! Writes a browser cannot forge (`http/cross_site.rs`, `http/negotiate.rs`) and the security
//! headers on every answer (`http/security_headers.rs`). Every refusal is checked to leave the
//! registry exactly as it was.

use crate::support::{spring_body, TestServer};

/// A server holding one registered instance, and its registry as JSON.
async fn with_one_instance(args: &[&str]) -> (TestServer, String) {
    let server = TestServer::start(args).await;
    server.register("ORDERS", "o-1").await;
    let before = server.registry_json().await;
    (server, before)
}

/// A replication batch that would cancel `ORDERS/o-1`.
const CANCEL_BATCH: &str = r#"{"replicationList":[{"appName":"ORDERS","id":"o-1","lastDirtyTimestamp":1,"action":"Cancel"}]}"#;

#[tokio::test]
async fn a_register_without_content_type_is_415_and_changes_nothing() {
    let (server, before) = with_one_instance(&[]).await;
    let response = server
        .http
        .post(server.url("/apps/ORDERS"))
        .body(spring_body("ORDERS", "o-2"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 415);
    assert!(response
        .text()
        .await
        .unwrap()
        .contains("missing Content-Type"));
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn a_peer_batch_of_a_type_a_form_can_send_is_415_and_changes_nothing() {
    // The test plays a peer from 127.0.0.1, so the type alone is what is refused.
    let (server, before) =
        with_one_instance(&["--heureka.replication.allowed-addresses=127.0.0.1"]).await;
    for form_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        None,
    ] {
        let mut request = server
            .http
            .post(server.url("/peerreplication/batch"))
            .header("x-netflix-discovery-replication", "true")
            .body(CANCEL_BATCH);
        if let Some(form_type) = form_type {
            request = request.header("Content-Type", form_type);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 415, "{form_type:?}");
        assert_eq!(server.registry_json().await, before, "{form_type:?}");
    }
    // The same batch as JSON does cancel: the refusals above were of the type alone.
    let response = server
        .http
        .post(server.url("/peerreplication/batch"))
        .header("x-netflix-discovery-replication", "true")
        .header("Content-Type", "application/json")
        .body(CANCEL_BATCH)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(!server.registry_json().await.contains("o-1"));
}

#[tokio::test]
async fn a_write_from_a_foreign_origin_is_403_with_a_reason_and_changes_nothing() {
    let (server, before) = with_one_instance(&[]).await;
    for origin in ["http://evil.example", "null"] {
        let response = server
            .http
            .delete(server.url("/apps/ORDERS/o-1"))
            .header("Origin", origin)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 403, "{origin}");
        let reason = response.text().await.unwrap();
        assert!(reason.contains("cross-site write refused"), "{reason}");
        assert!(!reason.contains('\n'), "one line: {reason:?}");
        assert_eq!(server.registry_json().await, before, "{origin}");
    }
}

#[tokio::test]
async fn a_write_marked_sec_fetch_site_cross_site_is_403() {
    let (server, before) = with_one_instance(&[]).await;
    let response = server
        .http
        .put(server.url("/apps/ORDERS/o-1/status?value=OUT_OF_SERVICE"))
        .header("Sec-Fetch-Site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn a_write_from_the_servers_own_origin_passes() {
    let (server, _) = with_one_instance(&[]).await;
    let response = server
        .http
        .put(server.url("/apps/ORDERS/o-1/status?value=OUT_OF_SERVICE"))
        .header("Origin", format!("http://127.0.0.1:{}", server.port))
        .header("Sec-Fetch-Site", "same-origin")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(server.registry_json().await.contains("OUT_OF_SERVICE"));
}

#[tokio::test]
async fn a_write_from_an_allowed_origin_passes() {
    let (server, _) =
        with_one_instance(&["--heureka.security.allowed-origins=https://ops.example"]).await;
    let response = server
        .http
        .delete(server.url("/apps/ORDERS/o-1"))
        .header("Origin", "https://ops.example")
        .header("Sec-Fetch-Site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(!server.registry_json().await.contains("o-1"));
}

#[tokio::test]
async fn a_preflight_is_granted_no_cors() {
    let server =
        TestServer::start(&["--heureka.security.allowed-origins=https://ops.example"]).await;
    for origin in ["http://evil.example", "https://ops.example"] {
        let response = server
            .http
            .request(reqwest::Method::OPTIONS, server.url("/apps/ORDERS"))
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "POST")
            .header("Access-Control-Request-Headers", "content-type")
            .send()
            .await
            .unwrap();
        let granted: Vec<_> = response
            .headers()
            .keys()
            .filter(|name| name.as_str().starts_with("access-control-"))
            .collect();
        assert!(granted.is_empty(), "{origin}: {granted:?}");
    }
}

#[tokio::test]
async fn every_answer_with_a_body_carries_the_security_headers() {
    let (server, _) = with_one_instance(&[]).await;
    let registry = server.get("/apps", Some("application/json")).await;
    let untyped = server
        .http
        .post(server.url("/apps/ORDERS"))
        .body("{}")
        .send()
        .await
        .unwrap();
    let refused = server
        .http
        .post(server.url("/apps/ORDERS"))
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    let health = server
        .http
        .get(server.root_url("/actuator/health"))
        .send()
        .await
        .unwrap();
    for response in [registry, untyped, refused, health] {
        let headers = response.headers();
        let what = response.url().path().to_owned();
        assert_eq!(headers["x-content-type-options"], "nosniff", "{what}");
        assert_eq!(headers["x-frame-options"], "DENY", "{what}");
        assert_eq!(headers["referrer-policy"], "no-referrer", "{what}");
        let policy = headers["content-security-policy"].to_str().unwrap();
        assert!(
            policy.contains("frame-ancestors 'none'"),
            "{what}: {policy}"
        );
    }
}

#[tokio::test]
async fn the_dashboard_page_may_load_only_its_own_assets_and_no_inline_script() {
    let server = TestServer::start(&[]).await;
    let response = server.http.get(server.root_url("/")).send().await.unwrap();
    let policy = response.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(policy.contains("default-src 'self'"), "{policy}");
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    let page = response.text().await.unwrap();
    // What the policy would block: inline event handlers, inline scripts and styles.
    let inline_handler = page.split(" on").skip(1).any(|rest| {
        let name_end = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(0);
        name_end > 0 && rest[name_end..].starts_with('=')
    });
    assert!(!inline_handler, "an inline event handler in the page");
    assert!(
        !page.contains("<script>") && !page.contains("<style"),
        "inline code"
    );
}
