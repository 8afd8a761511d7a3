//! A server per test, `heureka-testkit`'s, started through this crate; the request bodies
//! real clients send; and the servers most tests start from.

heureka_testkit::in_process_server!(InProcess);

/// A running server; it stops when the test's runtime ends.
pub type TestServer = heureka_testkit::TestServer<InProcess>;

pub use heureka_testkit::{assert_basic_challenge, spring_body, spring_body_with_blob, Sent};
pub use reqwest::Method;

/// The arguments that turn HTTP Basic authentication on, for the user `eureka` with the
/// password `s3cret`.
pub const CREDENTIALS: [&str; 2] = [
    "--spring.security.user.name=eureka",
    "--spring.security.user.password=s3cret",
];

/// A server with HTTP Basic authentication on, for `user` with `password`.
pub async fn guarded_by(user: &str, password: &str) -> TestServer {
    let user = format!("--spring.security.user.name={user}");
    let password = format!("--spring.security.user.password={password}");
    TestServer::start(&[&user, &password]).await
}

/// A server started with `args` holding one instance, `ORDERS/o-1`, registered as a Spring
/// client registers.
pub async fn holding_o1(args: &[&str]) -> TestServer {
    let server = TestServer::start(args).await;
    server.register("ORDERS", "o-1").await;
    server
}

/// [`holding_o1`], and its registry as JSON: what "nothing changed" is checked against.
pub async fn with_one_instance(args: &[&str]) -> (TestServer, String) {
    let server = holding_o1(args).await;
    let before = server.registry_json().await;
    (server, before)
}

/// `bytes` compressed with gzip at `level`, as a client sends a `Content-Encoding: gzip` body.
pub fn gzip(bytes: &[u8], level: flate2::Compression) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), level);
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// A gzip body inflated to the text it holds.
pub fn gunzip(bytes: &[u8]) -> String {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_string(&mut text)
        .unwrap();
    text
}
