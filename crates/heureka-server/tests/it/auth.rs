//! HTTP Basic authentication, on when `spring.security.user.*` is configured.

use crate::support::{assert_basic_challenge, spring_body, Method, Sent, TestServer, CREDENTIALS};

#[tokio::test]
async fn requests_without_credentials_get_401() {
    let server = TestServer::start(&CREDENTIALS).await;
    assert_basic_challenge(&server.get("/apps", None).await);
}

#[tokio::test]
async fn wrong_password_gets_401() {
    let server = TestServer::start(&CREDENTIALS).await;
    let response = server.get_as("/apps", "eureka", "guess").await;
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn credentials_in_the_service_url_are_accepted() {
    let server = TestServer::start(&CREDENTIALS).await;
    let url = server
        .url("/apps")
        .replace("http://", "http://eureka:s3cret@");
    let response = server.http.get(url).sent().await;
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn writes_need_credentials_too() {
    let server = TestServer::start(&CREDENTIALS).await;
    let register = |password: Option<&str>| {
        let mut request = server.request(Method::POST, "/apps/ORDERS");
        if let Some(password) = password {
            request = request.basic_auth("eureka", Some(password));
        }
        request
            .header("Content-Type", "application/json")
            .body(spring_body("ORDERS", "o-1"))
            .sent()
    };
    assert_eq!(register(None).await.status(), 401);
    assert_eq!(register(Some("s3cret")).await.status(), 204);
}

#[tokio::test]
async fn without_configured_credentials_everything_is_open() {
    let server = TestServer::start(&[]).await;
    assert_eq!(server.get("/apps", None).await.status(), 200);
}

/// `GET /apps` with `Authorization: <header>`; the status.
async fn status_with_authorization(server: &TestServer, header: &str) -> u16 {
    server
        .request(Method::GET, "/apps")
        .header("Authorization", header)
        .sent()
        .await
        .status()
        .as_u16()
}

/// [`status_with_authorization`] on a server of its own that has [`CREDENTIALS`].
async fn status_authorized_by(header: &str) -> u16 {
    let server = TestServer::start(&CREDENTIALS).await;
    status_with_authorization(&server, header).await
}

// base64("eureka:s3cret") is ZXVyZWthOnMzY3JldA==.

#[tokio::test]
async fn lower_case_scheme_is_accepted() {
    assert_eq!(
        status_authorized_by("basic ZXVyZWthOnMzY3JldA==").await,
        200
    );
}

#[tokio::test]
async fn unpadded_base64_is_accepted() {
    assert_eq!(status_authorized_by("Basic ZXVyZWthOnMzY3JldA").await, 200);
}

#[tokio::test]
async fn user_name_is_matched_ignoring_case_as_spring_does() {
    let server = TestServer::start(&CREDENTIALS).await;
    // base64("EUREKA:s3cret")
    let upper_case_user = "Basic RVVSRUtBOnMzY3JldA==";
    assert_eq!(
        status_with_authorization(&server, upper_case_user).await,
        200
    );
    // base64("eureka:S3CRET"): the password is exact.
    let upper_case_password = "Basic ZXVyZWthOlMzQ1JFVA==";
    assert_eq!(
        status_with_authorization(&server, upper_case_password).await,
        401
    );
}

#[tokio::test]
async fn other_schemes_get_401() {
    assert_eq!(
        status_authorized_by("Bearer ZXVyZWthOnMzY3JldA==").await,
        401
    );
}
