//! SIGTERM against the real binary: in-flight requests finish, and no client, however stalled,
//! keeps the process alive past the grace period. Only how the process exits is asserted, never
//! how fast; every wait is bounded by `PATIENCE`.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::process::{closed_by_peer, connect, read_to_end, status_of, HeurekaProcess, PATIENCE};
use crate::support::{spring_body, spring_body_with_blob};

/// Starts a register request whose body has not arrived, and returns once the server is
/// inside the handler waiting for it (it has answered `100 Continue`).
async fn stalled_register(server: &HeurekaProcess, body_length: usize) -> TcpStream {
    let mut stream = TcpStream::connect(server.address()).await.unwrap();
    let head = format!(
        "POST /eureka/apps/ORDERS HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n\
         Content-Length: {body_length}\r\nExpect: 100-continue\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut continue_line = [0u8; 25];
    tokio::time::timeout(PATIENCE, stream.read_exact(&mut continue_line))
        .await
        .expect("the server answers 100 Continue")
        .unwrap();
    assert!(continue_line.starts_with(b"HTTP/1.1 100 Continue"));
    stream
}

async fn assert_exits_cleanly(server: &mut HeurekaProcess) {
    let status = server.wait_for_exit().await;
    let log = server.log();
    let status = status.unwrap_or_else(|| panic!("still running after SIGTERM; log:\n{log}"));
    assert!(status.success(), "exited with {status}; log:\n{log}");
}

#[tokio::test]
async fn sigterm_lets_an_in_flight_request_finish() {
    let mut server = HeurekaProcess::start(&[]);
    let body = spring_body("ORDERS", "o-1");
    let mut stream = stalled_register(&server, body.len()).await;
    server.terminate();
    server.wait_for_log("finishing in-flight requests").await;
    // The server has stopped accepting, but the request it was reading is still served.
    stream.write_all(body.as_bytes()).await.unwrap();
    let response = read_to_end(&mut stream).await;
    assert_eq!(status_of(&response), Some(204));
    assert_exits_cleanly(&mut server).await;
    assert!(!server.log().contains("grace period over"));
}

#[tokio::test]
async fn sigterm_with_a_stalled_request_exits_after_the_grace_period() {
    let mut server = HeurekaProcess::start(&[
        "--spring.lifecycle.timeout-per-shutdown-phase=500ms",
        // Longer than any test: only the grace period can end this request.
        "--heureka.request-body-timeout=1h",
    ]);
    let _stalled = stalled_register(&server, 1000).await;
    server.terminate();
    assert_exits_after_the_grace_period(&mut server).await;
}

#[tokio::test]
async fn sigterm_with_a_client_not_reading_its_response_exits_after_the_grace_period() {
    let mut server = HeurekaProcess::start(&[
        "--spring.lifecycle.timeout-per-shutdown-phase=500ms",
        "--server.tomcat.keep-alive-timeout=1h",
        // 80 KB of metadata per instance is over the default limit (32KB).
        "--heureka.limits.max-metadata-bytes=100KB",
    ]);
    // A registry of about 8 MB of JSON: more than the socket buffers between the two ends.
    for i in 0..100 {
        let body = spring_body_with_blob("ORDERS", &format!("o-{i}"), 80_000);
        let request = format!(
            "POST /eureka/apps/ORDERS HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let mut stream = TcpStream::connect(server.address()).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        assert_eq!(status_of(&read_to_end(&mut stream).await), Some(204));
    }
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket
        .connect(server.address().parse().unwrap())
        .await
        .unwrap();
    let full_fetch = b"GET /eureka/apps HTTP/1.1\r\nHost: test\r\nAccept: application/json\r\n\r\n";
    // Read the start of the response, then stop reading.
    let started = status_line(&mut stream, full_fetch, "the response starts").await;
    assert_eq!(started, Some(200));
    server.terminate();
    assert_exits_after_the_grace_period(&mut server).await;
}

/// Asserts the process exits as it should, once the grace period was over.
async fn assert_exits_after_the_grace_period(server: &mut HeurekaProcess) {
    assert_exits_cleanly(server).await;
    assert!(
        server.log().contains("grace period over"),
        "{}",
        server.log()
    );
}

/// Writes `request` on `stream` and reads its response's status line (its first 12 bytes),
/// `what` saying which; its status.
async fn status_line(stream: &mut TcpStream, request: &[u8], what: &str) -> Option<u16> {
    stream.write_all(request).await.unwrap();
    let mut status_line = [0u8; 12];
    tokio::time::timeout(PATIENCE, stream.read_exact(&mut status_line))
        .await
        .expect(what)
        .unwrap();
    status_of(&status_line)
}

/// Sends a request on `stream` and reads its whole response (by its `Content-Length`),
/// leaving the connection kept alive.
async fn exchange_kept_alive(stream: &mut TcpStream, path: &str) {
    let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let complete = |received: &[u8]| {
        let text = String::from_utf8_lossy(received);
        let Some((head, body)) = text.split_once("\r\n\r\n") else {
            return false;
        };
        let length: usize = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse().ok())?
            })
            .expect("a Content-Length");
        body.len() >= length
    };
    while !complete(&received) {
        let read = tokio::time::timeout(PATIENCE, stream.read(&mut buffer))
            .await
            .expect("a response")
            .unwrap();
        assert!(read > 0, "closed before the response ended");
        received.extend_from_slice(&buffer[..read]);
    }
    assert_eq!(status_of(&received), Some(200));
}

#[tokio::test]
async fn sigterm_closes_idle_and_partial_head_connections_at_once_and_finishes_a_request() {
    // Deadlines and grace longer than any test: only the shutdown can close these connections
    // before the request in progress ends.
    let mut server = HeurekaProcess::start(&[
        "--spring.lifecycle.timeout-per-shutdown-phase=1h",
        "--server.tomcat.connection-timeout=1h",
        "--server.tomcat.keep-alive-timeout=1h",
    ]);
    let mut idle = connect(&server).await;
    exchange_kept_alive(&mut idle, "/actuator/health/liveness").await;
    let mut partial = connect(&server).await;
    partial
        .write_all(b"GET /eureka/apps HTTP/1.1\r\nHost: te")
        .await
        .unwrap();
    let body = spring_body("ORDERS", "o-1");
    let mut in_progress = stalled_register(&server, body.len()).await;
    server.terminate();
    assert!(closed_by_peer(&mut idle).await, "the idle connection");
    assert!(closed_by_peer(&mut partial).await, "the partial head");
    // The request in progress is still served, and the process exits once it has been.
    in_progress.write_all(body.as_bytes()).await.unwrap();
    assert_eq!(status_of(&read_to_end(&mut in_progress).await), Some(204));
    assert_exits_cleanly(&mut server).await;
    assert!(!server.log().contains("grace period over"));
}

#[tokio::test]
async fn sigterm_ends_open_event_streams_at_once() {
    let mut server = HeurekaProcess::start(&["--spring.lifecycle.timeout-per-shutdown-phase=1h"]);
    let mut stream = connect(&server).await;
    let subscribe = b"GET /eureka/events HTTP/1.1\r\nHost: test\r\n\r\n";
    let started = status_line(&mut stream, subscribe, "the stream starts").await;
    assert_eq!(started, Some(200));
    server.terminate();
    // The stream ends with its last chunk, as a stream that is over does.
    let rest = read_to_end(&mut stream).await;
    assert!(
        rest.ends_with(b"0\r\n\r\n"),
        "{}",
        String::from_utf8_lossy(&rest)
    );
    assert_exits_cleanly(&mut server).await;
    assert!(!server.log().contains("grace period over"));
}
