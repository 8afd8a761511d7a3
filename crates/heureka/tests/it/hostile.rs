//! Hostile load against the real binary: slowloris, idle floods, oversized heads, endless and
//! stalled bodies. Each test holds the attack open while other clients are served, and checks
//! the process's memory and open files in `/proc` against a stated bound. No test measures
//! time: the deadlines are configured short, and every wait is bounded by `PATIENCE`.

use heureka_testkit::{spring_body, Sent};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::process::{
    closed_by_peer, connect, raise_own_open_file_limit, read_to_end, status_of, write_bounded,
    HeurekaProcess,
};

/// What the server may hold beyond its connections: the listener, the runtime's own
/// descriptors, standard streams.
const OTHER_OPEN_FILES: usize = 32;

/// Resident memory that a server under these attacks stays below. An idle debug build takes
/// about 5 MiB; before the limits, 1,000 partial heads of 380 KB took 387 MB.
const RSS_BOUND: u64 = 64 * 1024 * 1024;

/// Opens `count` connections to the server and sends each `bytes`, keeping them open.
async fn connect_all(server: &HeurekaProcess, count: usize, bytes: &[u8]) -> Vec<TcpStream> {
    let mut streams = Vec::with_capacity(count);
    for _ in 0..count {
        let mut stream = connect(server).await;
        // The server may already have closed an older one of these to make room; a write
        // that fails is part of the attack failing.
        let _ = write_bounded(&mut stream, bytes).await;
        streams.push(stream);
    }
    streams
}

/// Other clients, each on a new connection, are answered while the attack holds.
async fn assert_others_answered(server: &HeurekaProcess) {
    for _ in 0..10 {
        assert_eq!(
            server.get_status("/eureka/apps").await,
            Some(200),
            "another client was not answered; log:\n{}",
            server.log()
        );
    }
}

/// Asserts the server holds no more open files than `max_connections` connections and its
/// own, and stays within its memory bound.
fn assert_bounded(server: &HeurekaProcess, max_connections: usize) {
    let open = server.open_files();
    assert!(
        open <= max_connections + OTHER_OPEN_FILES,
        "{open} open files with a limit of {max_connections} connections"
    );
    assert_memory_bounded(server);
}

fn assert_memory_bounded(server: &HeurekaProcess) {
    let rss = server.rss_bytes();
    assert!(
        rss < RSS_BOUND,
        "RSS {} MiB is over the {} MiB bound",
        rss >> 20,
        RSS_BOUND >> 20
    );
}

const PARTIAL_HEAD: &[u8] = b"GET /eureka/apps HTTP/1.1\r\nHost: attacker\r\nX-Slow: ";

#[tokio::test]
async fn slowloris_beyond_the_connection_limit_leaves_others_answered() {
    raise_own_open_file_limit();
    let server = HeurekaProcess::start(&["--server.tomcat.max-connections=200"]);
    let _attack = connect_all(&server, 2_000, PARTIAL_HEAD).await;
    assert_others_answered(&server).await;
    assert_bounded(&server, 200);
}

#[tokio::test]
async fn idle_connections_beyond_the_limit_leave_others_answered() {
    raise_own_open_file_limit();
    let server = HeurekaProcess::start(&["--server.tomcat.max-connections=100"]);
    // Connections that never send a byte, and kept-alive ones that went quiet after a request.
    let _silent = connect_all(&server, 500, b"").await;
    let mut kept_alive = connect_all(
        &server,
        200,
        b"GET /eureka/apps HTTP/1.1\r\nHost: idle\r\n\r\n",
    )
    .await;
    assert_others_answered(&server).await;
    assert_bounded(&server, 100);
    kept_alive.clear();
}

#[tokio::test]
async fn heads_over_the_header_limit_are_not_buffered() {
    raise_own_open_file_limit();
    let server = HeurekaProcess::start(&[]);
    // The reproduction: 1,000 connections each holding a 380 KB unfinished head.
    let mut head = PARTIAL_HEAD.to_vec();
    head.resize(380 * 1024, b'a');
    let _attack = connect_all(&server, 1_000, &head).await;
    assert_others_answered(&server).await;
    assert_memory_bounded(&server);
}

#[tokio::test]
async fn a_head_over_the_header_limit_gets_431() {
    let server = HeurekaProcess::start(&[]);
    // Exactly the 8 KB limit of an unfinished head: the server reads all of it, so it can
    // answer before it closes.
    let mut head = PARTIAL_HEAD.to_vec();
    head.resize(8 * 1024, b'a');
    let mut stream = TcpStream::connect(server.address()).await.unwrap();
    stream.write_all(&head).await.unwrap();
    assert_eq!(status_of(&read_to_end(&mut stream).await), Some(431));
}

#[tokio::test]
async fn the_header_limit_is_configurable() {
    let server = HeurekaProcess::start(&["--server.max-http-request-header-size=64KB"]);
    let mut stream = TcpStream::connect(server.address()).await.unwrap();
    let request = format!(
        "GET /eureka/apps HTTP/1.1\r\nHost: test\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
        "a".repeat(16 * 1024)
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    assert_eq!(status_of(&read_to_end(&mut stream).await), Some(200));
}

#[tokio::test]
async fn endless_bodies_are_cut_off_at_the_body_limit() {
    raise_own_open_file_limit();
    // Each connection may hold up to the limit while its body arrives, so the memory bound
    // needs the attackers times the limit well below it: 50 x 1 MB by default came within a
    // few MiB of it, 50 x 256 KB does not.
    let server = HeurekaProcess::start(&["--heureka.max-request-body-size=256KB"]);
    let head = b"POST /eureka/apps/ORDERS HTTP/1.1\r\nHost: attacker\r\n\
                 Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    let chunk = format!("4000\r\n{}\r\n", "x".repeat(0x4000));
    let mut attackers = tokio::task::JoinSet::new();
    for _ in 0..50 {
        let mut stream = connect(&server).await;
        let chunk = chunk.clone();
        attackers.spawn(async move {
            let _ = write_bounded(&mut stream, head).await;
            // Far past the body limit, unless the server stops it first.
            for _ in 0..1024 {
                if write_bounded(&mut stream, chunk.as_bytes()).await.is_err() {
                    return true;
                }
            }
            false
        });
    }
    while let Some(stopped) = attackers.join_next().await {
        assert!(stopped.unwrap(), "a 16 MB body was read to its end");
    }
    assert_others_answered(&server).await;
    assert_memory_bounded(&server);
}

#[tokio::test]
async fn a_stalled_body_gets_408_after_the_body_timeout() {
    let server = HeurekaProcess::start(&["--heureka.request-body-timeout=500ms"]);
    let mut stream = TcpStream::connect(server.address()).await.unwrap();
    stream
        .write_all(
            b"POST /eureka/apps/ORDERS HTTP/1.1\r\nHost: test\r\n\
              Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"instance\":",
        )
        .await
        .unwrap();
    let response = read_to_end(&mut stream).await;
    assert_eq!(status_of(&response), Some(408));
    let text = String::from_utf8_lossy(&response);
    assert!(
        text.contains("request not received in full within 500ms"),
        "{text}"
    );
}

#[tokio::test]
async fn a_head_sent_a_byte_at_a_time_is_closed_at_the_connection_timeout() {
    let server = HeurekaProcess::start(&["--server.tomcat.connection-timeout=500ms"]);
    let mut stream = TcpStream::connect(server.address()).await.unwrap();
    stream.write_all(PARTIAL_HEAD).await.unwrap();
    // Each byte would reset a timeout counted between reads; the deadline holds regardless.
    let mut closed = false;
    for _ in 0..600 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        if write_bounded(&mut stream, b"a").await.is_err() {
            closed = true;
            break;
        }
    }
    assert!(
        closed,
        "the connection was still open after a minute of trickling"
    );
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_at_the_keep_alive_timeout() {
    let server = HeurekaProcess::start(&["--server.tomcat.keep-alive-timeout=500ms"]);
    let mut stream = TcpStream::connect(server.address()).await.unwrap();
    stream
        .write_all(b"GET /eureka/apps HTTP/1.1\r\nHost: test\r\n\r\n")
        .await
        .unwrap();
    // The response arrives, then, with no further request, the server closes.
    let received = read_to_end(&mut stream).await;
    assert_eq!(status_of(&received), Some(200));
    assert!(
        closed_by_peer(&mut stream).await,
        "still open after a minute"
    );
}

#[tokio::test]
async fn a_connection_idle_after_heartbeats_answered_at_once_is_closed_at_the_keep_alive_timeout() {
    // Heartbeats skip the listener's per-request work (`connection.rs`, AnswersAtOnce): each
    // answer must still end the exchange, so that the next head is read and the wait after the
    // last one has its deadline.
    let server = HeurekaProcess::start(&["--server.tomcat.keep-alive-timeout=500ms"]);
    let registered = reqwest::Client::new()
        .post(format!("http://{}/eureka/apps/ORDERS", server.address()))
        .header("Content-Type", "application/json")
        .body(spring_body("ORDERS", "orders-1"))
        .sent()
        .await;
    assert_eq!(registered.status(), 204);
    let mut stream = TcpStream::connect(server.address()).await.unwrap();
    let heartbeat = "PUT /eureka/apps/ORDERS/orders-1?status=UP HTTP/1.1\r\nHost: test\r\n\r\n";
    stream
        .write_all(heartbeat.repeat(2).as_bytes())
        .await
        .unwrap();
    let received = String::from_utf8_lossy(&read_to_end(&mut stream).await).into_owned();
    assert_eq!(
        received.matches("HTTP/1.1 200 OK").count(),
        2,
        "both heartbeats renew: {received}"
    );
    assert!(
        closed_by_peer(&mut stream).await,
        "still open after a minute"
    );
}

#[tokio::test]
async fn running_out_of_open_files_does_not_stop_the_server() {
    raise_own_open_file_limit();
    // 64 descriptors: fewer than the connections below, whatever max-connections says.
    let mut server = HeurekaProcess::start_with_open_file_limit(64, &[]);
    let _attack = connect_all(&server, 200, PARTIAL_HEAD).await;
    assert_others_answered(&server).await;
    assert!(server.is_running());
    assert!(
        server.log().contains("cannot accept connections"),
        "the server never ran out of descriptors, so this test tested nothing:\n{}",
        server.log()
    );
}

/// A register body of about `size` bytes: one Spring-shaped instance with a large metadata value.
fn large_register_body(id: &str, size: usize) -> String {
    let body = crate::support::spring_body("soak", id);
    let filler = "x".repeat(size);
    body.replacen(
        "\"metadata\":{",
        &format!("\"metadata\":{{\"filler\":\"{filler}\","),
        1,
    )
}

#[tokio::test]
async fn a_register_cancel_loop_of_a_large_instance_keeps_memory_bounded() {
    // Issue 7, defect 4: each cancel kept a full copy of the instance in the delta queue for
    // the retention window, so 1,000 rounds of one 900 KB instance took RSS to 893 MB.
    // Metadata this large is over the default limit (32KB); the test is about the delta queue.
    let server = HeurekaProcess::start(&["--heureka.limits.max-metadata-bytes=1MB"]);
    let http = reqwest::Client::new();
    let base = format!("http://{}/eureka", server.address());
    let body = large_register_body("big-1", 900 * 1024);
    for _ in 0..200 {
        let registered = http
            .post(format!("{base}/apps/SOAK"))
            .header("Content-Type", "application/json")
            .body(body.clone())
            .sent()
            .await;
        assert_eq!(registered.status(), 204);
        let cancelled = http.delete(format!("{base}/apps/SOAK/big-1")).sent().await;
        assert_eq!(cancelled.status(), 200);
    }
    // 200 copies would be 180 MB; the delta keeps the latest one only.
    assert_memory_bounded(&server);
    assert_others_answered(&server).await;
}
