//! Bad input gets a clear error, and nothing is lost: every case checks the status code and
//! that the registry is exactly as before.

use crate::support::{spring_body, TestServer};

/// A server holding one registered instance, and its registry as JSON.
async fn with_one_instance(args: &[&str]) -> (TestServer, String) {
    let server = TestServer::start(args).await;
    server.register("ORDERS", "o-1").await;
    let before = server.registry_json().await;
    (server, before)
}

async fn post(server: &TestServer, content_type: &str, body: &str) -> (u16, String) {
    let response = server
        .http
        .post(server.url("/apps/ORDERS"))
        .header("Content-Type", content_type)
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

async fn assert_refused(
    server: &TestServer,
    before: &str,
    content_type: &str,
    body: &str,
    status: u16,
    reason: &str,
) {
    let (got, text) = post(server, content_type, body).await;
    assert_eq!(got, status, "body: {text}");
    assert!(text.contains(reason), "expected {reason:?} in {text:?}");
    assert!(!text.contains('\n'), "the reason is one line: {text:?}");
    assert_eq!(server.registry_json().await, before, "the registry changed");
}

#[tokio::test]
async fn malformed_json_is_400_and_changes_nothing() {
    let (server, before) = with_one_instance(&[]).await;
    assert_refused(
        &server,
        &before,
        "application/json",
        r#"{"instance": {"app": "ORDERS""#,
        400,
        "",
    )
    .await;
}

#[tokio::test]
async fn malformed_xml_is_400_and_changes_nothing() {
    let (server, before) = with_one_instance(&[]).await;
    assert_refused(
        &server,
        &before,
        "application/xml",
        "<instance><app>ORDERS</instance>",
        400,
        "",
    )
    .await;
}

#[tokio::test]
async fn xml_with_a_doctype_is_refused_and_never_expanded() {
    let (server, before) = with_one_instance(&[]).await;
    let body = r#"<?xml version="1.0"?><!DOCTYPE instance [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><instance><hostName>&xxe;</hostName></instance>"#;
    assert_refused(&server, &before, "application/xml", body, 400, "DOCTYPE").await;
}

#[tokio::test]
async fn xml_entity_bomb_is_refused() {
    let (server, before) = with_one_instance(&[]).await;
    let body = r#"<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><instance><app>&lol2;</app></instance>"#;
    assert_refused(&server, &before, "application/xml", body, 400, "DOCTYPE").await;
}

#[tokio::test]
async fn oversized_body_is_413_and_changes_nothing() {
    let (server, before) = with_one_instance(&["--heureka.max-request-body-size=1KB"]).await;
    let mut body = spring_body("ORDERS", "o-2");
    body.insert_str(
        body.len() - 2,
        &format!(r#","padding":"{}""#, "x".repeat(4096)),
    );
    let (status, _) = post(&server, "application/json", &body).await;
    assert_eq!(status, 413);
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn unsupported_content_type_is_415_and_changes_nothing() {
    let (server, before) = with_one_instance(&[]).await;
    assert_refused(
        &server,
        &before,
        "text/plain",
        &spring_body("ORDERS", "o-2"),
        415,
        "content type",
    )
    .await;
}

/// Only requests that declare an encoding pass through the decoder; one it does not know is
/// refused there, body unread.
#[tokio::test]
async fn unknown_content_encoding_is_415_and_changes_nothing() {
    let (server, before) = with_one_instance(&[]).await;
    let response = server
        .http
        .post(server.url("/apps/ORDERS"))
        .header("Content-Type", "application/json")
        .header("Content-Encoding", "x-bogus")
        .body(spring_body("ORDERS", "o-2"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 415);
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn app_name_differing_from_the_path_is_400_and_changes_nothing() {
    let (server, before) = with_one_instance(&[]).await;
    let body = spring_body("PAYMENTS", "p-1");
    assert_refused(
        &server,
        &before,
        "application/json",
        &body,
        400,
        "Mismatched appName",
    )
    .await;
}

#[tokio::test]
async fn missing_hostname_is_400_naming_the_field() {
    let (server, before) = with_one_instance(&[]).await;
    let body = spring_body("ORDERS", "o-2").replace(r#""hostName":"10.0.0.5","#, "");
    assert_refused(
        &server,
        &before,
        "application/json",
        &body,
        400,
        "Missing hostname",
    )
    .await;
}

#[tokio::test]
async fn missing_ip_address_is_400_naming_the_field() {
    let (server, before) = with_one_instance(&[]).await;
    let body = spring_body("ORDERS", "o-2").replace(r#""ipAddr":"10.0.0.5","#, "");
    assert_refused(
        &server,
        &before,
        "application/json",
        &body,
        400,
        "Missing ip address",
    )
    .await;
}

#[tokio::test]
async fn missing_data_center_info_is_400_naming_the_field() {
    let (server, before) = with_one_instance(&[]).await;
    let body = spring_body("ORDERS", "o-2").replace(
        r#""dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},"#,
        "",
    );
    assert_refused(
        &server,
        &before,
        "application/json",
        &body,
        400,
        "Missing dataCenterInfo",
    )
    .await;
}

#[tokio::test]
async fn missing_app_is_400_naming_the_field() {
    let (server, before) = with_one_instance(&[]).await;
    let body = spring_body("ORDERS", "o-2").replace(r#""app":"ORDERS","#, "");
    assert_refused(
        &server,
        &before,
        "application/json",
        &body,
        400,
        "Missing appName",
    )
    .await;
}

#[tokio::test]
async fn unwrapped_instance_body_is_400() {
    let (server, before) = with_one_instance(&[]).await;
    let body = spring_body("ORDERS", "o-2");
    let unwrapped = &body[r#"{"instance":"#.len()..body.len() - 1];
    assert_refused(
        &server,
        &before,
        "application/json",
        unwrapped,
        400,
        "instance",
    )
    .await;
}

#[tokio::test]
async fn unknown_status_value_is_400_and_changes_nothing() {
    let (server, before) = with_one_instance(&[]).await;
    let response = server
        .http
        .put(server.url("/apps/ORDERS/o-1/status?value=SLEEPY"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    assert!(response.text().await.unwrap().contains("SLEEPY"));
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn missing_status_value_is_400() {
    let (server, before) = with_one_instance(&[]).await;
    assert_eq!(server.put("/apps/ORDERS/o-1/status").await, 400);
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn non_numeric_last_dirty_timestamp_is_400() {
    let (server, before) = with_one_instance(&[]).await;
    assert_eq!(
        server
            .put("/apps/ORDERS/o-1?lastDirtyTimestamp=yesterday")
            .await,
        400
    );
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn unknown_app_is_404() {
    let (server, before) = with_one_instance(&[]).await;
    assert_eq!(server.get_text("/apps/NOPE", None).await.0, 404);
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn unknown_instance_is_404_for_every_instance_operation() {
    let (server, before) = with_one_instance(&[]).await;
    assert_eq!(server.get_text("/apps/ORDERS/nobody", None).await.0, 404);
    assert_eq!(server.put("/apps/ORDERS/nobody").await, 404);
    assert_eq!(server.delete("/apps/ORDERS/nobody").await, 404);
    assert_eq!(
        server.put("/apps/ORDERS/nobody/status?value=DOWN").await,
        404
    );
    assert_eq!(server.delete("/apps/ORDERS/nobody/status").await, 404);
    assert_eq!(server.put("/apps/ORDERS/nobody/metadata?a=b").await, 404);
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn a_character_xml_forbids_never_reaches_an_xml_document() {
    // Issue 7, defect 1: U+FFFE in a registration was written raw into every XML document,
    // which strict parsers (Python's) then refused: one instance cost every XML client the
    // registry. JSON may carry it; XML gets U+FFFD.
    let server = TestServer::start(&[]).await;
    let body = spring_body("orders", "o1").replacen(
        "\"management.port\":\"8080\"",
        "\"management.port\":\"8080\",\"bad\":\"a\\uFFFEb\\uFFFF\"",
        1,
    );
    assert_eq!(server.post_json("/apps/ORDERS", &body).await.status(), 204);
    for path in [
        "/apps",
        "/apps/delta",
        "/apps/ORDERS",
        "/apps/ORDERS/o1",
        "/instances/o1",
        "/vips/orders",
    ] {
        let (status, xml) = server.get_text(path, Some("application/xml")).await;
        assert_eq!(status, 200, "{path}");
        assert!(
            !xml.contains('\u{FFFE}') && !xml.contains('\u{FFFF}'),
            "{path}: {xml}"
        );
        assert!(
            !xml.to_ascii_lowercase().contains("&#xfffe;"),
            "{path}: {xml}"
        );
        assert!(xml.contains("a\u{FFFD}b\u{FFFD}"), "{path}: {xml}");
    }
}
