//! Namespaces over real sockets (`docs/namespaces.md`): each is a registry of its own under
//! `/ns/{name}/eureka`, reached by path or by the `x-namespace` header, created by its first
//! registration, listed at `/ns`, and closed to users bound to other namespaces.

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::events::Subscription;
use crate::push::Push;
use crate::support::{spring_body, Sent, TestServer};

async fn json(response: reqwest::Response) -> Value {
    serde_json::from_str(&response.text().await.unwrap()).unwrap()
}

/// `path` under the API of namespace `ns`.
fn in_ns(server: &TestServer, ns: &str, path: &str) -> String {
    server.root_url(&format!("/ns/{ns}/eureka{path}"))
}

async fn register_in(server: &TestServer, ns: &str, app: &str, id: &str) -> reqwest::Response {
    server
        .http
        .post(in_ns(server, ns, &format!("/apps/{app}")))
        .header("Content-Type", "application/json")
        .body(spring_body(app, id))
        .sent()
        .await
}

/// The instance ids `url` (a full fetch) lists, sorted.
async fn ids_at(server: &TestServer, url: &str) -> Vec<String> {
    let response = server
        .http
        .get(url)
        .header("Accept", "application/json")
        .sent()
        .await;
    assert_eq!(response.status(), 200, "{url}");
    let apps: Value = json(response).await;
    let mut ids = Vec::new();
    for app in apps["applications"]["application"].as_array().unwrap() {
        for instance in app["instance"].as_array().unwrap() {
            ids.push(instance["instanceId"].as_str().unwrap().to_owned());
        }
    }
    ids.sort();
    ids
}

async fn listing(server: &TestServer) -> Value {
    let response = server.http.get(server.root_url("/ns")).sent().await;
    assert_eq!(response.status(), 200);
    json(response).await
}

fn names(listing: &Value) -> Vec<&str> {
    listing["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|namespace| namespace["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn the_same_app_in_two_namespaces_is_two_registries() {
    let server = TestServer::start(&[]).await;
    assert_eq!(
        register_in(&server, "team-a", "ORDERS", "a1")
            .await
            .status(),
        204
    );
    assert_eq!(
        register_in(&server, "team-b", "ORDERS", "b1")
            .await
            .status(),
        204
    );
    assert_eq!(
        ids_at(&server, &in_ns(&server, "team-a", "/apps")).await,
        ["a1"]
    );
    assert_eq!(
        ids_at(&server, &in_ns(&server, "team-b", "/apps")).await,
        ["b1"]
    );
    assert!(ids_at(&server, &server.url("/apps")).await.is_empty());
}

#[tokio::test]
async fn a_write_in_one_namespace_changes_no_other_namespaces_delta_or_hashcode() {
    let server = TestServer::start(&[]).await;
    register_in(&server, "team-a", "ORDERS", "a1").await;
    register_in(&server, "team-b", "ORDERS", "b1").await;
    let delta = |ns: &'static str| {
        let url = in_ns(&server, ns, "/apps/delta");
        let http = server.http.clone();
        async move {
            let response = http
                .get(url)
                .header("Accept", "application/json")
                .sent()
                .await;
            json(response).await
        }
    };
    let before = delta("team-b").await;
    let cancel = server
        .http
        .delete(in_ns(&server, "team-a", "/apps/ORDERS/a1"))
        .sent()
        .await;
    assert_eq!(cancel.status(), 200);
    let after = delta("team-b").await;
    assert_eq!(
        before, after,
        "team-b's delta is untouched by team-a's cancel"
    );
    assert_eq!(after["applications"]["apps__hashcode"], "UP_1_");
}

#[tokio::test]
async fn the_namespace_prefix_default_is_the_unprefixed_api() {
    let server = TestServer::start(&[]).await;
    assert_eq!(
        register_in(&server, "default", "ORDERS", "d1")
            .await
            .status(),
        204
    );
    assert_eq!(ids_at(&server, &server.url("/apps")).await, ["d1"]);
}

#[tokio::test]
async fn the_x_namespace_header_names_the_namespace_of_an_unprefixed_path() {
    let server = TestServer::start(&[]).await;
    register_in(&server, "team-a", "ORDERS", "a1").await;
    let response = server
        .request(Method::GET, "/apps/ORDERS/a1")
        .header("x-namespace", "Team-A")
        .header("Accept", "application/json")
        .sent()
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(server.status(Method::GET, "/apps/ORDERS/a1").await, 404);
}

#[tokio::test]
async fn a_namespace_not_created_yet_reads_as_an_empty_registry_and_is_not_created_by_reads() {
    let server = TestServer::start(&[]).await;
    assert!(ids_at(&server, &in_ns(&server, "later", "/apps"))
        .await
        .is_empty());
    let renew = server
        .http
        .put(in_ns(&server, "later", "/apps/ORDERS/x1"))
        .sent()
        .await;
    assert_eq!(
        renew.status(),
        404,
        "a heartbeat for an unknown instance, as Eureka answers"
    );
    assert_eq!(names(&listing(&server).await), ["default"]);
}

#[tokio::test]
async fn the_listing_counts_each_namespaces_applications_and_instances() {
    let server = TestServer::start(&[]).await;
    register_in(&server, "team-a", "ORDERS", "a1").await;
    register_in(&server, "team-a", "ORDERS", "a2").await;
    register_in(&server, "team-a", "BILLING", "a3").await;
    let listing = listing(&server).await;
    assert_eq!(names(&listing), ["default", "team-a"]);
    let team_a = &listing["namespaces"][1];
    assert_eq!(team_a["applications"], 2);
    assert_eq!(team_a["instances"], 3);
    assert!(team_a["selfPreservation"].is_boolean());
}

#[tokio::test]
async fn an_invalid_namespace_name_is_a_400_naming_the_rule() {
    let server = TestServer::start(&[]).await;
    let response = server
        .http
        .get(server.root_url("/ns/-bad/eureka/apps"))
        .sent()
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let reason = response.text().await.unwrap();
    assert!(reason.contains("starts with a letter or digit"), "{reason}");
}

#[tokio::test]
async fn without_auto_create_only_declared_namespaces_take_registrations() {
    let server = TestServer::start(&[
        "--heureka.namespaces.auto-create=false",
        "--heureka.namespaces.declared=team-a",
    ])
    .await;
    assert_eq!(
        register_in(&server, "team-a", "ORDERS", "a1")
            .await
            .status(),
        204
    );
    let refused = register_in(&server, "team-b", "ORDERS", "b1").await;
    assert_eq!(refused.status(), 404);
    let reason = refused.text().await.unwrap();
    assert!(
        reason.contains("heureka.namespaces.auto-create is false"),
        "{reason}"
    );
    assert_eq!(names(&listing(&server).await), ["default", "team-a"]);
}

#[tokio::test]
async fn beyond_the_maximum_a_new_namespace_is_refused_with_403() {
    let server = TestServer::start(&["--heureka.namespaces.max=1"]).await;
    assert_eq!(
        register_in(&server, "team-a", "ORDERS", "a1")
            .await
            .status(),
        204
    );
    let refused = register_in(&server, "team-b", "ORDERS", "b1").await;
    assert_eq!(refused.status(), 403);
    let reason = refused.text().await.unwrap();
    assert!(reason.contains("heureka.namespaces.max=1"), "{reason}");
    assert_eq!(
        register_in(&server, "team-a", "ORDERS", "a2")
            .await
            .status(),
        204
    );
}

const TEAM_A_USER: [&str; 5] = [
    "--heureka.security.users[0].name=alice",
    "--heureka.security.users[0].password=secret",
    "--heureka.security.users[0].roles=read,register",
    "--heureka.security.users[0].namespaces=team-a",
    "--spring.security.user.name=admin",
];

async fn guarded() -> TestServer {
    let mut args = TEAM_A_USER.to_vec();
    args.push("--spring.security.user.password=admin-secret");
    TestServer::start(&args).await
}

#[tokio::test]
async fn a_user_bound_to_a_namespace_registers_and_reads_there() {
    let server = guarded().await;
    let registered = server
        .http
        .post(in_ns(&server, "team-a", "/apps/ORDERS"))
        .basic_auth("alice", Some("secret"))
        .header("Content-Type", "application/json")
        .body(spring_body("ORDERS", "a1"))
        .sent()
        .await;
    assert_eq!(registered.status(), 204);
    let read = server
        .http
        .get(in_ns(&server, "team-a", "/apps/ORDERS"))
        .basic_auth("alice", Some("secret"))
        .sent()
        .await;
    assert_eq!(read.status(), 200);
}

#[tokio::test]
async fn a_user_bound_to_a_namespace_gets_403_in_another_and_in_default() {
    let server = guarded().await;
    for url in [
        in_ns(&server, "team-b", "/apps/ORDERS"),
        server.url("/apps/ORDERS"),
    ] {
        let refused = server
            .http
            .post(&url)
            .basic_auth("alice", Some("secret"))
            .header("Content-Type", "application/json")
            .body(spring_body("ORDERS", "x1"))
            .sent()
            .await;
        assert_eq!(refused.status(), 403, "{url}");
        let reason = refused.text().await.unwrap();
        assert!(
            reason.contains("may not use namespace") && !reason.contains('\n'),
            "{reason}"
        );
    }
    let listing = server
        .http
        .get(server.root_url("/ns"))
        .basic_auth("admin", Some("admin-secret"))
        .sent()
        .await;
    let listing: Value = json(listing).await;
    assert_eq!(
        names(&listing),
        ["default"],
        "the refused write created nothing"
    );
}

#[tokio::test]
async fn the_listing_shows_a_bound_user_only_its_namespaces() {
    let server = guarded().await;
    for ns in ["team-a", "team-b"] {
        let response = server
            .http
            .post(in_ns(&server, ns, "/apps/ORDERS"))
            .basic_auth("admin", Some("admin-secret"))
            .header("Content-Type", "application/json")
            .body(spring_body("ORDERS", "x1"))
            .sent()
            .await;
        assert_eq!(response.status(), 204);
    }
    let listing = server
        .http
        .get(server.root_url("/ns"))
        .basic_auth("alice", Some("secret"))
        .sent()
        .await;
    let listing: Value = json(listing).await;
    assert_eq!(names(&listing), ["team-a"]);
}

#[tokio::test]
async fn a_namespaces_own_max_instances_is_its_quota_and_leaves_the_others_alone() {
    let server = TestServer::start(&["--heureka.namespaces.max-instances.team-a=1"]).await;
    assert_eq!(
        register_in(&server, "team-a", "ORDERS", "a1")
            .await
            .status(),
        204
    );
    let refused = register_in(&server, "team-a", "ORDERS", "a2").await;
    assert_eq!(refused.status(), 403);
    let reason = refused.text().await.unwrap();
    assert!(reason.contains("limit of 1 instances"), "{reason}");
    for id in ["b1", "b2"] {
        assert_eq!(
            register_in(&server, "team-b", "ORDERS", id).await.status(),
            204
        );
    }
}

#[tokio::test]
async fn a_namespaces_push_stream_carries_its_writes_only() {
    let server = TestServer::start(&[]).await;
    register_in(&server, "team-a", "ORDERS", "a1").await;
    let mut push = Push::from(server.http.get(in_ns(&server, "team-a", "/push"))).await;
    let snapshot = push.next().await;
    assert_eq!(snapshot.event, "snapshot");
    register_in(&server, "team-b", "ORDERS", "b1").await;
    register_in(&server, "team-a", "ORDERS", "a2").await;
    let delta = push.next().await;
    let ids: Vec<String> = delta.instances().into_iter().map(|(id, ..)| id).collect();
    assert_eq!(ids, ["a2"], "team-b's registration is not in team-a's push");
}

#[tokio::test]
async fn a_push_stream_opened_before_its_namespace_exists_ends_when_it_is_created() {
    let server = TestServer::start(&[]).await;
    let early = server.http.get(in_ns(&server, "team-a", "/push"));
    let mut push = Push::from(early).await;
    assert_eq!(push.next().await.event, "snapshot");
    register_in(&server, "team-a", "ORDERS", "a1").await;
    push.ends().await;
    let mut again = Push::from(server.http.get(in_ns(&server, "team-a", "/push"))).await;
    let snapshot = again.next().await;
    let ids: Vec<String> = snapshot
        .instances()
        .into_iter()
        .map(|(id, ..)| id)
        .collect();
    assert_eq!(ids, ["a1"], "the reconnected stream is the namespace's");
}

#[tokio::test]
async fn an_event_stream_opened_before_its_namespace_exists_ends_when_it_is_created() {
    let server = TestServer::start(&[]).await;
    let early = server.http.get(in_ns(&server, "team-a", "/events"));
    let mut events = Subscription::from(early).await;
    register_in(&server, "team-a", "ORDERS", "a1").await;
    events.ends().await;
    let mut again = Subscription::from(server.http.get(in_ns(&server, "team-a", "/events"))).await;
    register_in(&server, "team-a", "ORDERS", "a2").await;
    let (name, event) = again.next_change().await;
    assert_eq!(
        (name.as_str(), &event["id"]),
        ("registered", &Value::from("a2"))
    );
}

#[tokio::test]
async fn a_namespaces_event_stream_carries_its_writes_only() {
    let server = TestServer::start(&[]).await;
    register_in(&server, "team-a", "ORDERS", "a1").await;
    let mut events = Subscription::from(server.http.get(in_ns(&server, "team-a", "/events"))).await;
    register_in(&server, "team-b", "ORDERS", "b1").await;
    register_in(&server, "team-a", "ORDERS", "a2").await;
    let (name, event) = events.next_change().await;
    assert_eq!(name, "registered");
    assert_eq!(event["id"], "a2");
}

/// A full fetch of namespace `ns` by a client Eureka's rate limiter does not privilege.
async fn fetch_status(server: &TestServer, ns: &str) -> u16 {
    server
        .http
        .get(in_ns(server, ns, "/apps"))
        .header("DiscoveryIdentity-Name", "curl")
        .sent()
        .await
        .status()
        .as_u16()
}

#[tokio::test]
async fn one_namespaces_fetch_storm_does_not_throttle_anothers_clients() {
    let server = TestServer::start(&[
        "--eureka.server.rate-limiter-enabled=true",
        "--eureka.server.rate-limiter-burst-size=2",
        "--eureka.server.rate-limiter-registry-fetch-average-rate=1",
        "--eureka.server.rate-limiter-full-fetch-average-rate=1",
    ])
    .await;
    register_in(&server, "team-a", "ORDERS", "a1").await;
    register_in(&server, "team-b", "ORDERS", "b1").await;
    let mut storm = Vec::new();
    for _ in 0..10 {
        storm.push(fetch_status(&server, "team-a").await);
    }
    assert!(storm.contains(&503), "team-a is throttled: {storm:?}");
    assert_eq!(fetch_status(&server, "team-b").await, 200);
}

#[tokio::test]
async fn a_percent_encoded_namespace_name_is_the_same_namespace() {
    let server = TestServer::start(&[]).await;
    register_in(&server, "team-a", "ORDERS", "a1").await;
    let url = server.root_url("/ns/team%2Da/eureka/apps");
    assert_eq!(ids_at(&server, &url).await, ["a1"]);
}
