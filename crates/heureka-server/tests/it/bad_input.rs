//! Bad input gets a clear error, and nothing is lost: every case checks the status code and
//! that the registry is exactly as before.

use crate::support::{spring_body, with_one_instance, Method, Sent, TestServer};

const JSON: &str = "application/json";
const XML: &str = "application/xml";

/// An external entity reading a local file.
const XXE: &str = r#"<?xml version="1.0"?><!DOCTYPE instance [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><instance><hostName>&xxe;</hostName></instance>"#;

/// Entities expanding into more entities.
const ENTITY_BOMB: &str = r#"<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><instance><app>&lol2;</app></instance>"#;

/// The data center field of [`spring_body`], with the comma after it.
const DATA_CENTER_INFO: &str = r#""dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},"#;

async fn post(server: &TestServer, content_type: &str, body: &str) -> (u16, String) {
    let response = server
        .request(Method::POST, "/apps/ORDERS")
        .header("Content-Type", content_type)
        .body(body.to_owned())
        .sent()
        .await;
    (response.status().as_u16(), response.text().await.unwrap())
}

/// Registers `body` as `content_type` on a server holding one instance: asserts `status`, a
/// one-line reason containing `reason`, and the registry as it was.
async fn refused(content_type: &str, body: &str, status: u16, reason: &str) {
    let (server, before) = with_one_instance(&[]).await;
    let (got, text) = post(&server, content_type, body).await;
    assert_eq!(got, status, "body: {text}");
    assert!(text.contains(reason), "expected {reason:?} in {text:?}");
    assert!(!text.contains('\n'), "the reason is one line: {text:?}");
    assert_eq!(server.registry_json().await, before, "the registry changed");
}

/// [`refused`]: a Spring body for `ORDERS/o-2` without `field` (its text, with the comma after
/// it) is 400 naming it in `reason`.
async fn refused_without(field: &str, reason: &str) {
    let body = spring_body("ORDERS", "o-2").replace(field, "");
    refused(JSON, &body, 400, reason).await;
}

/// A Spring body for `ORDERS/o-2` without its `{"instance": ...}` wrapper is 400 naming it.
async fn refused_unwrapped() {
    let body = spring_body("ORDERS", "o-2");
    let unwrapped = &body[r#"{"instance":"#.len()..body.len() - 1];
    refused(JSON, unwrapped, 400, "instance").await;
}

/// `method` on `path` on a server holding one instance: asserts `status` and the registry as
/// it was.
async fn answers_and_changes_nothing(method: Method, path: &str, status: u16) {
    let (server, before) = with_one_instance(&[]).await;
    assert_eq!(server.status(method, path).await, status, "{path}");
    assert_eq!(server.registry_json().await, before);
}

heureka_testkit::async_tests! {
    malformed_json_is_400_and_changes_nothing =>
        refused(JSON, r#"{"instance": {"app": "ORDERS""#, 400, "");
    malformed_xml_is_400_and_changes_nothing =>
        refused(XML, "<instance><app>ORDERS</instance>", 400, "");
    xml_with_a_doctype_is_refused_and_never_expanded => refused(XML, XXE, 400, "DOCTYPE");
    xml_entity_bomb_is_refused => refused(XML, ENTITY_BOMB, 400, "DOCTYPE");
    unsupported_content_type_is_415_and_changes_nothing =>
        refused("text/plain", &spring_body("ORDERS", "o-2"), 415, "content type");
    app_name_differing_from_the_path_is_400_and_changes_nothing =>
        refused(JSON, &spring_body("PAYMENTS", "p-1"), 400, "Mismatched appName");
    missing_hostname_is_400_naming_the_field =>
        refused_without(r#""hostName":"10.0.0.5","#, "Missing hostname");
    missing_ip_address_is_400_naming_the_field =>
        refused_without(r#""ipAddr":"10.0.0.5","#, "Missing ip address");
    missing_data_center_info_is_400_naming_the_field =>
        refused_without(DATA_CENTER_INFO, "Missing dataCenterInfo");
    missing_app_is_400_naming_the_field =>
        refused_without(r#""app":"ORDERS","#, "Missing appName");
    unwrapped_instance_body_is_400 => refused_unwrapped();
    missing_status_value_is_400 =>
        answers_and_changes_nothing(Method::PUT, "/apps/ORDERS/o-1/status", 400);
    non_numeric_last_dirty_timestamp_is_400 => answers_and_changes_nothing(
        Method::PUT, "/apps/ORDERS/o-1?lastDirtyTimestamp=yesterday", 400);
    unknown_app_is_404 => answers_and_changes_nothing(Method::GET, "/apps/NOPE", 404);
}

#[tokio::test]
async fn oversized_body_is_413_and_changes_nothing() {
    let (server, before) = with_one_instance(&["--heureka.max-request-body-size=1KB"]).await;
    let mut body = spring_body("ORDERS", "o-2");
    body.insert_str(
        body.len() - 2,
        &format!(r#","padding":"{}""#, "x".repeat(4096)),
    );
    let (status, _) = post(&server, JSON, &body).await;
    assert_eq!(status, 413);
    assert_eq!(server.registry_json().await, before);
}

/// Only requests that declare an encoding pass through the decoder; one it does not know is
/// refused there, body unread.
#[tokio::test]
async fn unknown_content_encoding_is_415_and_changes_nothing() {
    let (server, before) = with_one_instance(&[]).await;
    let response = server
        .request(Method::POST, "/apps/ORDERS")
        .header("Content-Type", JSON)
        .header("Content-Encoding", "x-bogus")
        .body(spring_body("ORDERS", "o-2"))
        .sent()
        .await;
    assert_eq!(response.status(), 415);
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn unknown_status_value_is_400_and_changes_nothing() {
    let (server, before) = with_one_instance(&[]).await;
    let path = "/apps/ORDERS/o-1/status?value=SLEEPY";
    let response = server.request(Method::PUT, path).sent().await;
    assert_eq!(response.status(), 400);
    assert!(response.text().await.unwrap().contains("SLEEPY"));
    assert_eq!(server.registry_json().await, before);
}

#[tokio::test]
async fn unknown_instance_is_404_for_every_instance_operation() {
    let (server, before) = with_one_instance(&[]).await;
    for (method, path) in [
        (Method::GET, "/apps/ORDERS/nobody"),
        (Method::PUT, "/apps/ORDERS/nobody"),
        (Method::DELETE, "/apps/ORDERS/nobody"),
        (Method::PUT, "/apps/ORDERS/nobody/status?value=DOWN"),
        (Method::DELETE, "/apps/ORDERS/nobody/status"),
        (Method::PUT, "/apps/ORDERS/nobody/metadata?a=b"),
    ] {
        assert_eq!(server.status(method, path).await, 404, "{path}");
    }
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
