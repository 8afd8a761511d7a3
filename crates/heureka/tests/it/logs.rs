//! The log of the real binary: what a client sends cannot forge a line of it, a takeover
//! is warned with both endpoints, and administrative acts are audit lines without secrets. An app name or
//! instance id with CR/LF or terminal escapes in it is written escaped, inside its own line.

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::process::{read_to_end, status_of, HeurekaProcess};
use crate::support::spring_body;
use heureka_testkit::Sent;

/// What a forger would like an operator to read as a line of its own.
const FORGED: &str = "INFO forged: instance drained by operator";

async fn exchange(server: &HeurekaProcess, request: String) -> Option<u16> {
    let mut stream = TcpStream::connect(server.address()).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    status_of(&read_to_end(&mut stream).await)
}

/// `POST /eureka/apps/ORDERS` of `body` as JSON; the status.
async fn register(server: &HeurekaProcess, body: &str) -> Option<u16> {
    let request = format!(
        "POST /eureka/apps/ORDERS HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    exchange(server, request).await
}

fn assert_no_line_starts_with_the_forgery(log: &str) {
    assert!(
        !log.lines()
            .any(|line| line.trim_start().starts_with("INFO forged")),
        "a client wrote a log line of its own:\n{log}"
    );
}

#[tokio::test]
async fn an_instance_id_with_a_line_break_stays_inside_its_log_line() {
    let server = HeurekaProcess::start(&[]);
    // JSON escapes: the id the server decodes holds a real CR LF and an ESC.
    let id = format!("o-1\\r\\n{FORGED}\\u001b[2J");
    let body = spring_body("ORDERS", &id);
    assert_eq!(register(&server, &body).await, Some(204));
    server.wait_for_log("registered instance").await;
    let log = server.log();
    assert!(
        log.contains(&format!("o-1\\r\\n{FORGED}\\u{{1b}}[2J")),
        "the id is not in the log, escaped:\n{log}"
    );
    assert_no_line_starts_with_the_forgery(&log);
}

#[tokio::test]
async fn a_percent_encoded_line_break_in_a_path_stays_inside_its_log_line() {
    let server = HeurekaProcess::start(&[]);
    let forged_path = FORGED.replace(' ', "%20");
    let request = format!(
        "DELETE /eureka/apps/ORDERS%0D%0A{forged_path}/o-1 HTTP/1.1\r\nHost: test\r\n\
         Connection: close\r\n\r\n"
    );
    assert_eq!(exchange(&server, request).await, Some(404));
    // The refusal is logged with the app name the path decodes to, escaped.
    server
        .wait_for_log(&format!("app=ORDERS\\r\\n{FORGED}"))
        .await;
    assert_no_line_starts_with_the_forgery(&server.log());
}

#[tokio::test]
async fn a_takeover_is_a_warning_naming_both_endpoints() {
    let server = HeurekaProcess::start(&[]);
    for ip in ["10.0.0.5", "10.6.6.6"] {
        let body = spring_body("ORDERS", "o-1").replace("10.0.0.5", ip);
        assert_eq!(register(&server, &body).await, Some(204));
    }
    let line = server.wait_for_log_line("instance taken over").await;
    assert!(line.contains("WARN"), "{line}");
    assert!(
        line.contains("previous=10.0.0.5:8080") && line.contains("incoming=10.6.6.6:8080"),
        "{line}"
    );
}

#[tokio::test]
async fn administrative_acts_and_refused_credentials_are_audit_lines_without_secrets() {
    let mut server = HeurekaProcess::start(&[
        "--spring.security.user.name=admin",
        "--spring.security.user.password=s3cret-pa55",
    ]);
    let http = reqwest::Client::new();
    let url = |path: &str| format!("http://{}/eureka/{path}", server.address());
    let as_admin =
        |request: reqwest::RequestBuilder| request.basic_auth("admin", Some("s3cret-pa55"));
    let registered = as_admin(http.post(url("apps/ORDERS")))
        .header("Content-Type", "application/json")
        .body(spring_body("ORDERS", "o1"))
        .sent()
        .await;
    assert_eq!(registered.status().as_u16(), 204);
    let override_path = url("apps/ORDERS/o1/status?value=OUT_OF_SERVICE");
    let overridden = as_admin(http.put(override_path)).sent().await;
    assert_eq!(overridden.status().as_u16(), 200);
    for _ in 0..3 {
        let guess = http
            .get(url("apps"))
            .basic_auth("mallory", Some("guess-pa55word"))
            .sent()
            .await;
        assert_eq!(guess.status().as_u16(), 401);
    }
    // The refusals' summary is logged when its minute closes, or at shutdown.
    server.terminate();
    assert!(server.wait_for_exit().await.is_some(), "the server exits");
    let log = server.log();
    assert!(
        log.contains(r#"action="status-override-set" principal=admin"#),
        "{log}"
    );
    assert!(
        log.lines().any(
            |line| line.contains(r#"action="credentials-refused""#) && line.contains("count=3")
        ),
        "one line summarises the three refusals:\n{log}"
    );
    for secret in ["s3cret-pa55", "guess-pa55word", "Basic "] {
        assert!(!log.contains(secret), "{secret} in the log:\n{log}");
    }
}
