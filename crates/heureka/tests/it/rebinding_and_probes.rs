//! What a stranger can make the real binary do for them: a web page that rebinds its own DNS
//! name to the registry must not read or write it through a visitor's browser (`Host` is
//! checked on browser requests), and a registration must not point the health checks at
//! addresses outside `heureka.health-checks.allowed-networks` (a port scan whose verdicts and
//! latencies would be read back from the dashboard).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use crate::process::{read_to_end, status_of, HeurekaProcess};
use crate::support::spring_body;
use heureka_testkit::Sent;

/// Sends `request` on a new connection; the status and the whole answer.
async fn exchange(server: &HeurekaProcess, request: &str) -> (Option<u16>, String) {
    let mut stream = TcpStream::connect(server.address()).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let answer = read_to_end(&mut stream).await;
    (
        status_of(&answer),
        String::from_utf8_lossy(&answer).into_owned(),
    )
}

/// `method path` under `host`, with `headers` (each ending in CRLF).
fn request(method: &str, path: &str, host: &str, headers: &str) -> String {
    format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n")
}

/// What a rebinding page's `fetch` of its own origin carried in Chromium 156 over plain HTTP
/// (recorded): no `Origin` and no `Sec-Fetch-*`, which a browser sends only to `https://` and
/// loopback origins.
const CHROMIUM_READ: &str = "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 \
                             (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36\r\n\
                             Accept: */*\r\nAccept-Encoding: gzip, deflate\r\n\
                             Accept-Language: en-US,en;q=0.9\r\n";

/// The same read from a browser that lets the page set `User-Agent` (Firefox), the page
/// having set it, and `Accept-Language`, to look like a client's: it cannot drop the latter.
const DISGUISED_READ: &str = "User-Agent: Java-EurekaClient/v1.10.18\r\nAccept: */*\r\n\
                              Accept-Language: *\r\n";

/// What a page's `fetch` carries in a browser at a loopback origin (fetch metadata included).
const SAME_ORIGIN_FETCH: &str = "Sec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: cors\r\n\
                                 Sec-Fetch-Dest: empty\r\nUser-Agent: Mozilla/5.0\r\n\
                                 Accept-Language: en-US\r\n";

async fn register(server: &HeurekaProcess, body: &str) {
    let response = reqwest::Client::new()
        .post(format!("http://{}/eureka/apps/ORDERS", server.address()))
        .header("Content-Type", "application/json")
        .body(body.to_owned())
        .sent()
        .await;
    assert_eq!(response.status().as_u16(), 204);
}

#[tokio::test]
async fn a_dns_rebinding_page_can_neither_read_nor_write_the_registry() {
    let server = HeurekaProcess::start(&[]);
    register(&server, &spring_body("ORDERS", "o1")).await;
    let port = server.port;
    let rebound = format!("attacker.example:{port}");

    // The page reads the registry as its own origin: refused, with a reason.
    for read in [CHROMIUM_READ, DISGUISED_READ, SAME_ORIGIN_FETCH] {
        let (status, answer) =
            exchange(&server, &request("GET", "/eureka/apps", &rebound, read)).await;
        assert_eq!(status, Some(403), "{read}: {answer}");
        assert!(answer.contains("DNS rebinding refused"), "{answer}");
        assert!(
            answer.contains("heureka.security.allowed-hosts"),
            "{answer}"
        );
        assert!(
            !answer.contains("10.0.0.5"),
            "the registry leaked: {answer}"
        );
    }
    // The page writes with an Origin that matches the Host it was served under.
    let origin = format!("Origin: http://attacker.example:{port}\r\n{CHROMIUM_READ}");
    let (status, _) = exchange(
        &server,
        &request("DELETE", "/eureka/apps/ORDERS/o1", &rebound, &origin),
    )
    .await;
    assert_eq!(status, Some(403));
    server.wait_for_log("DNS rebinding (403)").await;

    // The dashboard in a browser at the server's address, and clients under any name, pass.
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        let (status, _) = exchange(
            &server,
            &request("GET", "/eureka/apps", &host, SAME_ORIGIN_FETCH),
        )
        .await;
        assert_eq!(status, Some(200), "{host}");
    }
    let (status, answer) = exchange(&server, &request("GET", "/eureka/apps", &rebound, "")).await;
    assert_eq!(status, Some(200), "a client without a browser's marks");
    assert!(
        answer.contains("o1"),
        "the write above changed the registry"
    );
}

#[tokio::test]
async fn a_host_listed_in_allowed_hosts_may_be_used_by_a_browser() {
    let server = HeurekaProcess::start(&["--heureka.security.allowed-hosts=*.example.com"]);
    let host = format!("eureka.example.com:{}", server.port);
    let (status, _) = exchange(
        &server,
        &request("GET", "/eureka/apps", &host, SAME_ORIGIN_FETCH),
    )
    .await;
    assert_eq!(status, Some(200));
}

/// A TCP port on 127.0.0.1 that counts the connections made to it.
async fn counting_port() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (port, accepted)
}

/// Checks every 100 ms, without jitter.
const CHECKS: [&str; 4] = [
    "--heureka.health-checks.enabled=true",
    "--heureka.health-checks.interval=100ms",
    "--heureka.health-checks.timeout=500ms",
    "--heureka.health-checks.jitter=0",
];

#[tokio::test]
async fn health_checks_probe_nothing_outside_the_allowed_networks() {
    let mut args = CHECKS.to_vec();
    args.push("--heureka.health-checks.allowed-networks=10.0.0.0/8");
    let server = HeurekaProcess::start(&args);
    let (port, accepted) = counting_port().await;
    // An instance that claims this machine's loopback as its own address (its port is
    // connected to at its ipAddr; a name that resolves outside is the server's test
    // `outside_the_allowed_networks_nothing_is_connected_to_not_even_by_name`).
    let body = spring_body("ORDERS", "o1")
        .replace("\"hostName\":\"10.0.0.5\"", "\"hostName\":\"localhost\"")
        .replace("\"ipAddr\":\"10.0.0.5\"", "\"ipAddr\":\"127.0.0.1\"")
        .replace("http://10.0.0.5:8080/actuator/health", "")
        .replace("\"$\":8080", &format!("\"$\":{port}"));
    register(&server, &body).await;

    let line = server.wait_for_log_line("health check refused").await;
    assert!(line.contains("WARN") && line.contains("o1"), "{line}");
    assert!(
        line.contains("127.0.0.1 is outside heureka.health-checks.allowed-networks"),
        "{line}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 0, "the port was probed");

    let get = |path: &str| {
        let url = format!("http://{}{path}", server.address());
        async move { reqwest::get(url).await.unwrap().text().await.unwrap() }
    };
    let view = get("/eureka/dashboard/health-checks").await;
    assert!(view.contains(r#""refused":true"#), "{view}");
    let metrics = get("/actuator/prometheus").await;
    assert!(
        metrics.lines().any(|line| line
            .starts_with(r#"heureka_health_checks_total{outcome="refused"} "#)
            && !line.ends_with(" 0")),
        "{metrics}"
    );
    assert!(get("/eureka/apps/ORDERS/o1").await.contains("UP"));

    // Logged once, not once a round: o1 is refused again in the round that refuses o2.
    register(&server, &body.replace("\"o1\"", "\"o2\"")).await;
    server.wait_for_log("id=o2 target=").await;
    let log = server.log();
    let refusals_of_o1 = log
        .lines()
        .filter(|line| line.contains("health check refused") && line.contains("id=o1"))
        .count();
    assert_eq!(refusals_of_o1, 1, "{log}");
}

#[tokio::test]
async fn by_default_the_cloud_metadata_address_is_not_probed() {
    let server = HeurekaProcess::start(&CHECKS);
    let body = spring_body("ORDERS", "o1").replace("10.0.0.5", "169.254.169.254");
    register(&server, &body).await;

    server
        .wait_for_log("169.254.169.254 is outside heureka.health-checks.allowed-networks")
        .await;
}
