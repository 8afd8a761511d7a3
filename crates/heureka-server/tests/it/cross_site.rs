//! Writes a browser cannot forge (`http/cross_site.rs`, `http/negotiate.rs`) and the security
//! headers on every answer (`http/security_headers.rs`). Every refusal is checked to leave the
//! registry exactly as it was.

use crate::support::{spring_body, with_one_instance, Method, Sent, TestServer};

/// A replication batch that would cancel `ORDERS/o-1`.
const CANCEL_BATCH: &str = r#"{"replicationList":[{"appName":"ORDERS","id":"o-1","lastDirtyTimestamp":1,"action":"Cancel"}]}"#;

/// Takes `ORDERS/o-1` out of service.
const OUT_OF_SERVICE: &str = "/apps/ORDERS/o-1/status?value=OUT_OF_SERVICE";

/// [`CANCEL_BATCH`] sent as a peer sends it, typed `content_type` if any.
async fn cancel_batch(server: &TestServer, content_type: Option<&str>) -> reqwest::Response {
    let mut request = server
        .request(Method::POST, "/peerreplication/batch")
        .header("x-netflix-discovery-replication", "true")
        .body(CANCEL_BATCH);
    if let Some(content_type) = content_type {
        request = request.header("Content-Type", content_type);
    }
    request.sent().await
}

/// `method` on `path` with `headers`: a write as a page in a browser would send it.
async fn write(
    server: &TestServer,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = server.request(method, path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.sent().await
}

#[tokio::test]
async fn a_register_without_content_type_is_415_and_changes_nothing() {
    let (server, before) = with_one_instance(&[]).await;
    let response = server
        .request(Method::POST, "/apps/ORDERS")
        .body(spring_body("ORDERS", "o-2"))
        .sent()
        .await;
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
        let response = cancel_batch(&server, form_type).await;
        assert_eq!(response.status(), 415, "{form_type:?}");
        assert_eq!(server.registry_json().await, before, "{form_type:?}");
    }
    // The same batch as JSON does cancel: the refusals above were of the type alone.
    let response = cancel_batch(&server, Some("application/json")).await;
    assert_eq!(response.status(), 200);
    assert!(!server.registry_json().await.contains("o-1"));
}

#[tokio::test]
async fn a_write_from_a_foreign_origin_is_403_with_a_reason_and_changes_nothing() {
    let (server, before) = with_one_instance(&[]).await;
    for origin in ["http://evil.example", "null"] {
        let response = write(
            &server,
            Method::DELETE,
            "/apps/ORDERS/o-1",
            &[("Origin", origin)],
        )
        .await;
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
    let cross_site = [("Sec-Fetch-Site", "cross-site")];
    let response = write(&server, Method::PUT, OUT_OF_SERVICE, &cross_site).await;
    assert_eq!(response.status(), 403);
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn a_write_from_the_servers_own_origin_passes() {
    let (server, _) = with_one_instance(&[]).await;
    let origin = format!("http://127.0.0.1:{}", server.port);
    let own = [
        ("Origin", origin.as_str()),
        ("Sec-Fetch-Site", "same-origin"),
    ];
    let response = write(&server, Method::PUT, OUT_OF_SERVICE, &own).await;
    assert_eq!(response.status(), 200);
    assert!(server.registry_json().await.contains("OUT_OF_SERVICE"));
}

#[tokio::test]
async fn a_write_from_an_allowed_origin_passes() {
    let (server, _) =
        with_one_instance(&["--heureka.security.allowed-origins=https://ops.example"]).await;
    let allowed = [
        ("Origin", "https://ops.example"),
        ("Sec-Fetch-Site", "cross-site"),
    ];
    let response = write(&server, Method::DELETE, "/apps/ORDERS/o-1", &allowed).await;
    assert_eq!(response.status(), 200);
    assert!(!server.registry_json().await.contains("o-1"));
}

#[tokio::test]
async fn a_preflight_is_granted_no_cors() {
    let server =
        TestServer::start(&["--heureka.security.allowed-origins=https://ops.example"]).await;
    for origin in ["http://evil.example", "https://ops.example"] {
        let preflight = [
            ("Origin", origin),
            ("Access-Control-Request-Method", "POST"),
            ("Access-Control-Request-Headers", "content-type"),
        ];
        let response = write(&server, Method::OPTIONS, "/apps/ORDERS", &preflight).await;
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
        .request(Method::POST, "/apps/ORDERS")
        .body("{}")
        .sent()
        .await;
    let evil = [("Origin", "http://evil.example")];
    let refused = write(&server, Method::POST, "/apps/ORDERS", &evil).await;
    let health = server
        .http
        .get(server.root_url("/actuator/health"))
        .sent()
        .await;
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
    let response = server.http.get(server.root_url("/")).sent().await;
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
