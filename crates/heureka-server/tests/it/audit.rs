//! The audit trail: every administrative act leaves an entry saying who, from where, what,
//! when and with what outcome, listed newest first at `GET {base}/dashboard/audit`, published
//! as an `audit` event and logged on `heureka::audit`; refused credentials are summarised,
//! and no password or `Authorization` value ever appears.
//!
//! The server listens on 127.0.0.1 and any 127.x.y.z is loopback on Linux, so a client bound
//! to 127.0.0.3 is "the instance" registered with `ipAddr` 127.0.0.3, and the test's default
//! client (127.0.0.1) is someone else.

use std::net::IpAddr;

use reqwest::{Client, Method, RequestBuilder};
use serde_json::Value;

use crate::events::Subscription;
use crate::support::{spring_body, Sent, TestServer};

const USER: &str = "admin";
const PASSWORD: &str = "s3cret-pa55";
const INSTANCE_ADDRESS: &str = "127.0.0.3";

async fn server(args: &[&str]) -> TestServer {
    let user = format!("--spring.security.user.name={USER}");
    let password = format!("--spring.security.user.password={PASSWORD}");
    let mut all = vec![user.as_str(), password.as_str()];
    all.extend_from_slice(args);
    TestServer::start(&all).await
}

/// A client whose connections come from `address`.
fn from(address: &str) -> Client {
    Client::builder()
        .local_address(address.parse::<IpAddr>().unwrap())
        .build()
        .unwrap()
}

fn request(server: &TestServer, client: &Client, method: Method, path: &str) -> RequestBuilder {
    client
        .request(method, server.url(path))
        .basic_auth(USER, Some(PASSWORD))
}

async fn send(request: RequestBuilder) -> u16 {
    request.sent().await.status().as_u16()
}

/// A bare `method` on `path` as the configured user, from this process's address; the status.
async fn send_as_user(server: &TestServer, method: Method, path: &str) -> u16 {
    send(request(server, &server.http, method, path)).await
}

/// Registers `app`/`id` at [`INSTANCE_ADDRESS`].
async fn register(server: &TestServer, app: &str, id: &str) {
    let body = spring_body(app, id).replace("10.0.0.5", INSTANCE_ADDRESS);
    let status = send(
        request(server, &server.http, Method::POST, &format!("/apps/{app}"))
            .header("Content-Type", "application/json")
            .body(body),
    )
    .await;
    assert_eq!(status, 204);
}

/// `GET {base}/dashboard/audit`'s entries, and its body as text.
async fn audit_entries(server: &TestServer) -> (Vec<Value>, String) {
    let response = request(server, &server.http, Method::GET, "/dashboard/audit")
        .sent()
        .await;
    assert_eq!(response.status(), 200);
    let body = response.text().await.unwrap();
    let document: Value = serde_json::from_str(&body).unwrap();
    (document["entries"].as_array().unwrap().clone(), body)
}

async fn set_override(server: &TestServer, id: &str, status: &str) {
    let path = format!("/apps/ORDERS/{id}/status?value={status}");
    assert_eq!(
        send(request(server, &server.http, Method::PUT, &path)).await,
        200
    );
}

#[tokio::test]
async fn an_override_set_leaves_an_entry_with_who_where_what_and_outcome() {
    let server = server(&[]).await;
    register(&server, "orders", "o1").await;
    set_override(&server, "o1", "OUT_OF_SERVICE").await;
    let (entries, _) = audit_entries(&server).await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry = &entries[0];
    assert_eq!(entry["action"], "status-override-set");
    assert_eq!(entry["principal"], USER);
    assert_eq!(entry["address"], "127.0.0.1");
    assert_eq!(entry["app"], "ORDERS");
    assert_eq!(entry["id"], "o1");
    assert_eq!(entry["status"], "OUT_OF_SERVICE");
    assert_eq!(entry["outcome"], 200);
    assert_eq!(entry["applied"], true);
    assert!(entry["at"].as_i64().unwrap() > 0);
}

#[tokio::test]
async fn an_override_removed_leaves_an_entry() {
    let server = server(&[]).await;
    register(&server, "orders", "o1").await;
    set_override(&server, "o1", "OUT_OF_SERVICE").await;
    let path = "/apps/ORDERS/o1/status";
    assert_eq!(send_as_user(&server, Method::DELETE, path).await, 200);
    let (entries, _) = audit_entries(&server).await;
    let entry = &entries[0];
    assert_eq!(entry["action"], "status-override-removed");
    assert_eq!(entry["principal"], USER);
    assert_eq!(entry["address"], "127.0.0.1");
    assert_eq!(entry["id"], "o1");
    assert_eq!(entry["outcome"], 200);
}

#[tokio::test]
async fn an_override_on_an_unknown_instance_is_audited_as_refused() {
    let server = server(&[]).await;
    let path = "/apps/ORDERS/ghost/status?value=DOWN";
    assert_eq!(send_as_user(&server, Method::PUT, path).await, 404);
    let (entries, _) = audit_entries(&server).await;
    assert_eq!(entries[0]["outcome"], 404);
    assert_eq!(entries[0]["applied"], false);
}

#[tokio::test]
async fn a_cancel_from_another_address_is_audited() {
    let server = server(&[]).await;
    register(&server, "orders", "o1").await;
    let status = send(request(
        &server,
        &from("127.0.0.1"),
        Method::DELETE,
        "/apps/ORDERS/o1",
    ))
    .await;
    assert_eq!(status, 200);
    let (entries, _) = audit_entries(&server).await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["action"], "deregistered");
    assert_eq!(entries[0]["address"], "127.0.0.1");
    assert_eq!(entries[0]["id"], "o1");
    assert_eq!(entries[0]["outcome"], 200);
}

#[tokio::test]
async fn a_cancel_from_the_instances_own_address_is_not_audited() {
    let server = server(&[]).await;
    register(&server, "orders", "o1").await;
    let own = from(INSTANCE_ADDRESS);
    assert_eq!(
        send(request(&server, &own, Method::DELETE, "/apps/ORDERS/o1")).await,
        200
    );
    let (entries, _) = audit_entries(&server).await;
    assert!(entries.is_empty(), "{entries:?}");
}

#[tokio::test]
async fn a_metadata_update_by_another_address_lists_its_keys_but_not_their_values() {
    let server = server(&[]).await;
    register(&server, "orders", "o1").await;
    let path = "/apps/ORDERS/o1/metadata?zone=eu-1&token=t0p-s3cret-value";
    assert_eq!(send_as_user(&server, Method::PUT, path).await, 200);
    let (entries, body) = audit_entries(&server).await;
    assert_eq!(entries[0]["action"], "metadata-updated");
    assert_eq!(
        entries[0]["metadataKeys"],
        serde_json::json!(["zone", "token"])
    );
    assert!(!body.contains("t0p-s3cret-value"), "{body}");
}

#[tokio::test]
async fn a_metadata_update_by_the_instance_itself_is_not_audited() {
    let server = server(&[]).await;
    register(&server, "orders", "o1").await;
    let own = from(INSTANCE_ADDRESS);
    let path = "/apps/ORDERS/o1/metadata?zone=eu-1";
    assert_eq!(send(request(&server, &own, Method::PUT, path)).await, 200);
    let (entries, _) = audit_entries(&server).await;
    assert!(entries.is_empty(), "{entries:?}");
}

#[tokio::test]
async fn twenty_wrong_passwords_leave_one_entry_counting_twenty() {
    let server = server(&[]).await;
    for _ in 0..20 {
        let guess = server.get_as("/apps", "mallory", "guess-pa55word").await;
        assert_eq!(guess.status(), 401);
    }
    let (entries, body) = audit_entries(&server).await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry = &entries[0];
    assert_eq!(entry["action"], "credentials-refused");
    assert_eq!(entry["user"], "mallory");
    assert_eq!(entry["address"], "127.0.0.1");
    assert_eq!(entry["count"], 20);
    assert_eq!(entry["outcome"], 401);
    assert!(!body.contains("guess-pa55word"), "{body}");
}

#[tokio::test]
async fn replication_from_a_sender_that_is_not_a_peer_is_audited_as_refused() {
    let server = server(&[]).await;
    let batch = request(
        &server,
        &server.http,
        Method::POST,
        "/peerreplication/batch/",
    )
    .header("Content-Type", "application/json")
    .body(r#"{"replicationList":[]}"#);
    assert_eq!(send(batch).await, 403);
    let (entries, _) = audit_entries(&server).await;
    assert_eq!(entries[0]["action"], "replication-refused");
    assert_eq!(entries[0]["principal"], USER);
    assert_eq!(entries[0]["outcome"], 403);
}

#[tokio::test]
async fn the_event_stream_carries_an_audit_event() {
    // Without authentication, so the stream needs no credentials: the principal is anonymous.
    let server = TestServer::start(&[]).await;
    server.register("orders", "o1").await;
    let mut events = Subscription::open(&server, "").await;
    assert_eq!(
        server
            .put("/apps/ORDERS/o1/status?value=OUT_OF_SERVICE")
            .await,
        200
    );
    loop {
        let (name, event) = events.next().await;
        if name == "audit" {
            assert_eq!(event["action"], "status-override-set");
            assert_eq!(event["principal"], "anonymous");
            assert_eq!(event["id"], "o1");
            return;
        }
    }
}

/// `path` under namespace `team-a`'s base.
fn in_team_a(server: &TestServer, path: &str) -> String {
    server.root_url(&format!("/ns/team-a/eureka{path}"))
}

/// ORDERS/a1 registered in namespace `team-a` and given an override there.
async fn override_in_team_a(server: &TestServer, client: &Client) {
    let registered = client
        .post(in_team_a(server, "/apps/ORDERS"))
        .basic_auth(USER, Some(PASSWORD))
        .header("Content-Type", "application/json")
        .body(spring_body("ORDERS", "a1"))
        .sent()
        .await;
    assert_eq!(registered.status(), 204);
    let set = client
        .put(in_team_a(
            server,
            "/apps/ORDERS/a1/status?value=OUT_OF_SERVICE",
        ))
        .basic_auth(USER, Some(PASSWORD))
        .sent()
        .await;
    assert_eq!(set.status(), 200);
}

#[tokio::test]
async fn an_entry_names_its_namespace_and_is_listed_in_that_namespace_only() {
    let server = server(&[]).await;
    register(&server, "ORDERS", "o1").await;
    set_override(&server, "o1", "OUT_OF_SERVICE").await;
    override_in_team_a(&server, &server.http).await;

    let (entries, _) = audit_entries(&server).await;
    let ids: Vec<(&Value, &Value)> = entries
        .iter()
        .map(|e| (&e["namespace"], &e["id"]))
        .collect();
    assert_eq!(ids, [(&Value::from("default"), &Value::from("o1"))]);

    let team_a: Value = request_json(&server, &in_team_a(&server, "/dashboard/audit")).await;
    let entries = team_a["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["namespace"], "team-a");
    assert_eq!(entries[0]["id"], "a1");
    assert_eq!(entries[0]["action"], "status-override-set");
}

async fn request_json(server: &TestServer, url: &str) -> Value {
    let response = server
        .http
        .get(url)
        .basic_auth(USER, Some(PASSWORD))
        .sent()
        .await;
    assert_eq!(response.status(), 200);
    serde_json::from_str(&response.text().await.unwrap()).unwrap()
}

#[tokio::test]
async fn an_audit_event_is_published_on_its_namespace_s_stream_only() {
    // Without authentication, so the streams need no credentials.
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o1").await;
    let anonymous = |method: Method, url: String| server.http.request(method, url);
    let created = anonymous(Method::POST, in_team_a(&server, "/apps/ORDERS"))
        .header("Content-Type", "application/json")
        .body(spring_body("ORDERS", "a1"))
        .sent()
        .await;
    assert_eq!(created.status(), 204);
    let mut default_stream = Subscription::open(&server, "").await;
    let mut team_a_stream = Subscription::open_url(&server, &in_team_a(&server, "/events")).await;
    let set = anonymous(
        Method::PUT,
        in_team_a(&server, "/apps/ORDERS/a1/status?value=OUT_OF_SERVICE"),
    )
    .sent()
    .await;
    assert_eq!(set.status(), 200);
    assert_eq!(
        server
            .put("/apps/ORDERS/o1/status?value=OUT_OF_SERVICE")
            .await,
        200
    );
    let first_audit = async |stream: &mut Subscription| loop {
        let (name, event) = stream.next().await;
        if name == "audit" {
            return event;
        }
    };
    let in_team_a_event = first_audit(&mut team_a_stream).await;
    assert_eq!(
        (&in_team_a_event["namespace"], &in_team_a_event["id"]),
        (&Value::from("team-a"), &Value::from("a1"))
    );
    // team-a's act came first: the default stream's first audit event is its own.
    let in_default = first_audit(&mut default_stream).await;
    assert_eq!(
        (&in_default["namespace"], &in_default["id"]),
        (&Value::from("default"), &Value::from("o1"))
    );
}

#[tokio::test]
async fn the_list_is_newest_first() {
    let server = server(&[]).await;
    for id in ["o1", "o2"] {
        register(&server, "orders", id).await;
        set_override(&server, id, "OUT_OF_SERVICE").await;
    }
    let (entries, _) = audit_entries(&server).await;
    let ids: Vec<&str> = entries
        .iter()
        .map(|entry| entry["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["o2", "o1"]);
}

#[tokio::test]
async fn the_list_keeps_at_most_the_retained_entries() {
    let server = server(&["--heureka.audit.retained=3"]).await;
    register(&server, "orders", "o1").await;
    for status in ["DOWN", "UP", "DOWN", "UP", "OUT_OF_SERVICE"] {
        set_override(&server, "o1", status).await;
    }
    let (entries, _) = audit_entries(&server).await;
    let statuses: Vec<&str> = entries
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["OUT_OF_SERVICE", "UP", "DOWN"]);
}

#[tokio::test]
async fn nothing_is_recorded_when_the_audit_is_off() {
    let server = server(&["--heureka.audit.enabled=false"]).await;
    register(&server, "orders", "o1").await;
    set_override(&server, "o1", "OUT_OF_SERVICE").await;
    let (entries, _) = audit_entries(&server).await;
    assert!(entries.is_empty(), "{entries:?}");
}

#[tokio::test]
async fn the_audit_list_needs_the_dashboards_credentials() {
    let server = server(&[]).await;
    assert_eq!(server.get("/dashboard/audit", None).await.status(), 401);
}

#[tokio::test]
async fn no_password_or_authorization_value_reaches_an_entry() {
    let server = server(&[]).await;
    register(&server, "orders", "o1").await;
    set_override(&server, "o1", "OUT_OF_SERVICE").await;
    for _ in 0..3 {
        let guess = server.get_as("/apps", "mallory", "guess-pa55word").await;
        assert_eq!(guess.status(), 401);
    }
    let (_, body) = audit_entries(&server).await;
    assert!(body.contains("status-override-set"), "{body}");
    assert!(body.contains("credentials-refused"), "{body}");
    for secret in [PASSWORD, "guess-pa55word", "Basic ", "uthorization"] {
        assert!(!body.contains(secret), "{secret} in {body}");
    }
}
