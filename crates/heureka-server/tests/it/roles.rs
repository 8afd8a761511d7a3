//! The roles matrix (`heureka.security.users[<n>].roles`): each kind of request, by each kind
//! of user, answered as the matrix says; everything beyond a user's roles is a 403 with a
//! reason, a request proving no user a 401.

use reqwest::{Method, StatusCode};

use crate::support::{spring_body, Sent, TestServer};

/// A node with a user of each kind; replication is taken from any address, so that only the
/// roles decide.
const USERS: &[&str] = &[
    "--heureka.replication.peers-only=false",
    "--spring.security.user.name=admin",
    "--spring.security.user.password=admin-pw",
    "--heureka.replication.peer-user.name=peer-user",
    "--heureka.replication.peer-user.password=peer-user-pw",
    "--heureka.security.users[0].name=reader",
    "--heureka.security.users[0].password=reader-pw",
    "--heureka.security.users[0].roles=read",
    "--heureka.security.users[1].name=registrar",
    "--heureka.security.users[1].password=registrar-pw",
    "--heureka.security.users[1].roles=register",
    "--heureka.security.users[2].name=orders",
    "--heureka.security.users[2].password=orders-pw",
    "--heureka.security.users[2].roles=register",
    "--heureka.security.users[2].apps=orders",
    "--heureka.security.users[3].name=operator",
    "--heureka.security.users[3].password={noop}operator-pw",
    "--heureka.security.users[3].roles=admin",
    "--heureka.security.users[4].name=peer",
    "--heureka.security.users[4].password=peer-pw",
    "--heureka.security.users[4].roles=peer",
];

/// The kinds of request, in the order of a row's expected statuses.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Fetch,
    Register,
    Renew,
    Cancel,
    OverrideSet,
    OverrideRemove,
    Metadata,
    ReplicationBatch,
    DashboardSummary,
}

const KINDS: [Kind; 9] = [
    Kind::Fetch,
    Kind::Register,
    Kind::Renew,
    Kind::Cancel,
    Kind::OverrideSet,
    Kind::OverrideRemove,
    Kind::Metadata,
    Kind::ReplicationBatch,
    Kind::DashboardSummary,
];

/// The statuses of a request each kind allows.
const ALLOWED: [u16; 9] = [200, 204, 200, 200, 200, 200, 200, 200, 200];

/// The request of `kind` about `app`'s instance `{app}-1`.
fn request(kind: Kind, app: &str) -> (Method, String, Option<String>) {
    let instance = format!("/apps/{app}/{app}-1");
    match kind {
        Kind::Fetch => (Method::GET, "/apps".into(), None),
        Kind::Register => (
            Method::POST,
            format!("/apps/{app}"),
            Some(spring_body(app, &format!("{app}-1"))),
        ),
        Kind::Renew => (Method::PUT, instance, None),
        Kind::Cancel => (Method::DELETE, instance, None),
        Kind::OverrideSet => (
            Method::PUT,
            format!("{instance}/status?value=OUT_OF_SERVICE"),
            None,
        ),
        Kind::OverrideRemove => (Method::DELETE, format!("{instance}/status"), None),
        Kind::Metadata => (Method::PUT, format!("{instance}/metadata?zone=a"), None),
        Kind::ReplicationBatch => (
            Method::POST,
            "/peerreplication/batch/".into(),
            Some(r#"{"replicationList":[]}"#.into()),
        ),
        Kind::DashboardSummary => (Method::GET, "/dashboard/summary".into(), None),
    }
}

/// Sends `kind` about `app` as `user` (no credentials for `None`); the status and body.
async fn send(
    server: &TestServer,
    user: Option<(&str, &str)>,
    kind: Kind,
    app: &str,
) -> (u16, String) {
    let (method, path, body) = request(kind, app);
    let mut request = server.http.request(method, server.url(&path));
    if let Some(body) = body {
        request = request
            .header("Content-Type", "application/json")
            .body(body);
    }
    if let Some((name, password)) = user {
        request = request.basic_auth(name, Some(password));
    }
    let response = request.sent().await;
    (response.status().as_u16(), response.text().await.unwrap())
}

/// Registers `{app}-1` afresh as the all-powerful user, so each request finds it.
async fn fresh_instance(server: &TestServer, app: &str) {
    let admin = Some(("admin", "admin-pw"));
    let (status, _) = send(server, admin, Kind::Register, app).await;
    assert_eq!(status, 204, "registered {app} as admin");
}

/// Asserts what `user` is answered for each kind of request about `app`, in [`KINDS`]' order
/// (fetch, register, renew, cancel, override set, override remove, metadata, replication
/// batch, dashboard summary): `Y` where the request is allowed, else `refused` (403 or 401).
async fn assert_row(user: Option<(&str, &str)>, app: &str, allowed: [bool; 9], refused: u16) {
    let server = TestServer::start(USERS).await;
    for (n, kind) in KINDS.into_iter().enumerate() {
        fresh_instance(&server, app).await;
        let (status, body) = send(&server, user, kind, app).await;
        let expected = if allowed[n] { ALLOWED[n] } else { refused };
        assert_eq!(status, expected, "{user:?} {kind:?} {app}: {body}");
    }
}

const Y: bool = true;
const N: bool = false;

#[tokio::test]
async fn the_spring_user_may_do_everything() {
    assert_row(
        Some(("admin", "admin-pw")),
        "ORDERS",
        [Y, Y, Y, Y, Y, Y, Y, Y, Y],
        403,
    )
    .await;
}

#[tokio::test]
async fn a_reader_may_only_fetch() {
    assert_row(
        Some(("reader", "reader-pw")),
        "ORDERS",
        [Y, N, N, N, N, N, N, N, Y],
        403,
    )
    .await;
}

#[tokio::test]
async fn a_registrar_may_register_renew_cancel_and_update_metadata_but_not_override() {
    let user = Some(("registrar", "registrar-pw"));
    assert_row(user, "ORDERS", [Y, Y, Y, Y, N, N, Y, N, Y], 403).await;
}

#[tokio::test]
async fn a_registrar_limited_to_orders_may_write_orders() {
    let user = Some(("orders", "orders-pw"));
    assert_row(user, "ORDERS", [Y, Y, Y, Y, N, N, Y, N, Y], 403).await;
}

#[tokio::test]
async fn a_registrar_limited_to_orders_may_only_fetch_other_apps() {
    let user = Some(("orders", "orders-pw"));
    assert_row(user, "PAYMENTS", [Y, N, N, N, N, N, N, N, Y], 403).await;
}

#[tokio::test]
async fn an_admin_may_do_everything_but_replication() {
    let user = Some(("operator", "operator-pw"));
    assert_row(user, "ORDERS", [Y, Y, Y, Y, Y, Y, Y, N, Y], 403).await;
}

#[tokio::test]
async fn a_peer_may_replicate_and_fetch_but_not_write_as_a_client() {
    assert_row(
        Some(("peer", "peer-pw")),
        "ORDERS",
        [Y, N, N, N, N, N, N, Y, Y],
        403,
    )
    .await;
}

#[tokio::test]
async fn the_peer_user_is_a_peer() {
    let user = Some(("peer-user", "peer-user-pw"));
    assert_row(user, "ORDERS", [Y, N, N, N, N, N, N, Y, Y], 403).await;
}

#[tokio::test]
async fn without_credentials_nothing_is_allowed() {
    assert_row(None, "ORDERS", [N, N, N, N, N, N, N, N, N], 401).await;
}

#[tokio::test]
async fn a_refusal_names_the_user_its_roles_and_the_role_needed() {
    let server = TestServer::start(USERS).await;
    let reader = Some(("reader", "reader-pw"));
    let (status, reason) = send(&server, reader, Kind::Register, "ORDERS").await;
    assert_eq!(status, 403);
    assert_eq!(
        reason,
        "user 'reader' (roles read) may not POST /eureka/apps/ORDERS: needs register"
    );
}

#[tokio::test]
async fn a_refusal_beyond_the_listed_apps_names_them() {
    let server = TestServer::start(USERS).await;
    let orders = Some(("orders", "orders-pw"));
    let (status, reason) = send(&server, orders, Kind::Register, "PAYMENTS").await;
    assert_eq!(status, 403);
    assert!(
        reason.ends_with("register is limited to ORDERS"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_replicated_write_needs_the_peer_role() {
    let server = TestServer::start(USERS).await;
    fresh_instance(&server, "ORDERS").await;
    let renew = |user: &str, password: &str| {
        server
            .request(Method::PUT, "/apps/ORDERS/ORDERS-1")
            .header("x-netflix-discovery-replication", "true")
            .basic_auth(user, Some(password))
            .send()
    };
    assert_eq!(
        renew("operator", "operator-pw").await.unwrap().status(),
        403
    );
    assert_eq!(renew("peer", "peer-pw").await.unwrap().status(), 200);
}

/// The dashboard summary's `may.admin` for `user`.
async fn may_admin(server: &TestServer, user: (&str, &str)) -> bool {
    let (status, body) = send(server, Some(user), Kind::DashboardSummary, "ORDERS").await;
    assert_eq!(status, 200);
    let summary: serde_json::Value = serde_json::from_str(&body).unwrap();
    summary["may"]["admin"].as_bool().unwrap()
}

#[tokio::test]
async fn the_dashboard_summary_says_whether_the_user_may_take_the_admin_actions() {
    let server = TestServer::start(USERS).await;
    assert!(may_admin(&server, ("operator", "operator-pw")).await);
    assert!(!may_admin(&server, ("reader", "reader-pw")).await);
}

#[tokio::test]
async fn with_authentication_off_the_dashboard_offers_the_admin_actions() {
    let server = TestServer::start(&[]).await;
    let (_, body) = server.get_text("/dashboard/summary", None).await;
    let summary: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(summary["may"]["admin"], true);
}

/// `GET /apps` as `user`; the status.
async fn fetch_as(server: &TestServer, user: &str, password: &str) -> StatusCode {
    server.get_as("/apps", user, password).await.status()
}

#[tokio::test]
async fn a_bcrypt_password_is_checked_against_its_hash() {
    let hash = bcrypt::hash("hashed-pw", 4).unwrap();
    let password = format!("--heureka.security.users[0].password={{bcrypt}}{hash}");
    let server = TestServer::start(&[
        "--heureka.security.users[0].name=reader",
        &password,
        "--heureka.security.users[0].roles=read",
    ])
    .await;
    assert_eq!(fetch_as(&server, "reader", "hashed-pw").await, 200);
    assert_eq!(fetch_as(&server, "reader", "other-pw").await, 401);
}

#[tokio::test]
async fn a_noop_password_is_the_text_after_it() {
    let server = TestServer::start(USERS).await;
    assert_eq!(fetch_as(&server, "operator", "operator-pw").await, 200);
    assert_eq!(
        fetch_as(&server, "operator", "{noop}operator-pw").await,
        401
    );
}

#[tokio::test]
async fn a_wrong_password_is_401() {
    let server = TestServer::start(USERS).await;
    assert_eq!(fetch_as(&server, "reader", "guess").await, 401);
}

#[tokio::test]
async fn users_alone_turn_authentication_on() {
    let server = TestServer::start(&[
        "--heureka.security.users[0].name=reader",
        "--heureka.security.users[0].password=reader-pw",
        "--heureka.security.users[0].roles=read",
    ])
    .await;
    assert_eq!(server.get("/apps", None).await.status(), 401);
}
