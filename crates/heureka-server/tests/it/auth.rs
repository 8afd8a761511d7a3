//! HTTP Basic authentication, on when `spring.security.user.*` is configured.

use crate::support::TestServer;

const CREDENTIALS: [&str; 2] = [
    "--spring.security.user.name=eureka",
    "--spring.security.user.password=s3cret",
];

#[tokio::test]
async fn requests_without_credentials_get_401() {
    let server = TestServer::start(&CREDENTIALS).await;
    let response = server.get("/apps", None).await;
    assert_eq!(response.status(), 401);
    assert!(response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .starts_with("Basic"));
}

#[tokio::test]
async fn wrong_password_gets_401() {
    let server = TestServer::start(&CREDENTIALS).await;
    let response = server
        .http
        .get(server.url("/apps"))
        .basic_auth("eureka", Some("guess"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn credentials_in_the_service_url_are_accepted() {
    let server = TestServer::start(&CREDENTIALS).await;
    let url = server
        .url("/apps")
        .replace("http://", "http://eureka:s3cret@");
    let response = server.http.get(url).send().await.unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn writes_need_credentials_too() {
    let server = TestServer::start(&CREDENTIALS).await;
    let response = server
        .http
        .post(server.url("/apps/ORDERS"))
        .header("Content-Type", "application/json")
        .body(crate::support::spring_body("ORDERS", "o-1"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    let response = server
        .http
        .post(server.url("/apps/ORDERS"))
        .basic_auth("eureka", Some("s3cret"))
        .header("Content-Type", "application/json")
        .body(crate::support::spring_body("ORDERS", "o-1"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
}

#[tokio::test]
async fn without_configured_credentials_everything_is_open() {
    let server = TestServer::start(&[]).await;
    assert_eq!(server.get("/apps", None).await.status(), 200);
}

/// `GET /apps` with `Authorization: <header>`; the status.
async fn status_with_authorization(server: &TestServer, header: &str) -> u16 {
    server
        .http
        .get(server.url("/apps"))
        .header("Authorization", header)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

// base64("eureka:s3cret") is ZXVyZWthOnMzY3JldA==.

#[tokio::test]
async fn lower_case_scheme_is_accepted() {
    let server = TestServer::start(&CREDENTIALS).await;
    assert_eq!(
        status_with_authorization(&server, "basic ZXVyZWthOnMzY3JldA==").await,
        200
    );
}

#[tokio::test]
async fn unpadded_base64_is_accepted() {
    let server = TestServer::start(&CREDENTIALS).await;
    assert_eq!(
        status_with_authorization(&server, "Basic ZXVyZWthOnMzY3JldA").await,
        200
    );
}

#[tokio::test]
async fn user_name_is_matched_ignoring_case_as_spring_does() {
    let server = TestServer::start(&CREDENTIALS).await;
    // base64("EUREKA:s3cret")
    assert_eq!(
        status_with_authorization(&server, "Basic RVVSRUtBOnMzY3JldA==").await,
        200
    );
    // base64("eureka:S3CRET"): the password is exact.
    assert_eq!(
        status_with_authorization(&server, "Basic ZXVyZWthOlMzQ1JFVA==").await,
        401
    );
}

#[tokio::test]
async fn other_schemes_get_401() {
    let server = TestServer::start(&CREDENTIALS).await;
    assert_eq!(
        status_with_authorization(&server, "Bearer ZXVyZWthOnMzY3JldA==").await,
        401
    );
}
