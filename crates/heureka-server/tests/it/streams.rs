//! Event streams against their limits, over raw sockets: the budget in all and per client
//! address (429 beyond, with the connection closed; room again once a stream ends), and a
//! subscriber that stops reading closed. Keep-alive comments are sent every 100 ms here, so a
//! stream whose client has gone is noticed within moments; every wait is on a condition.

use std::net::SocketAddr;

use heureka_testkit::{eventually, PATIENCE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::support::{spring_body_with_blob, TestServer};

/// A stream request's answer: its status, the head (and whatever followed it in the same
/// reads), and the connection.
struct Answer {
    status: u16,
    head: String,
    connection: TcpStream,
}

/// Sends `GET /eureka/events` from the loopback address `from` (every 127.x.y.z is this host)
/// and reads the response head.
async fn open_stream(server: &TestServer, from: [u8; 4]) -> Answer {
    open_stream_with_buffer(server, from, None).await
}

async fn open_stream_with_buffer(
    server: &TestServer,
    from: [u8; 4],
    receive_buffer: Option<u32>,
) -> Answer {
    let socket = TcpSocket::new_v4().unwrap();
    if let Some(size) = receive_buffer {
        socket.set_recv_buffer_size(size).unwrap();
    }
    socket.bind(SocketAddr::from((from, 0))).unwrap();
    let address = SocketAddr::from(([127, 0, 0, 1], server.port));
    let mut connection = socket.connect(address).await.unwrap();
    connection
        .write_all(
            b"GET /eureka/events HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n\r\n",
        )
        .await
        .unwrap();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    while !received.windows(4).any(|window| window == b"\r\n\r\n") {
        let read = tokio::time::timeout(PATIENCE, connection.read(&mut buffer))
            .await
            .expect("a response head")
            .unwrap();
        assert!(read > 0, "closed before a response head");
        received.extend_from_slice(&buffer[..read]);
    }
    let head = String::from_utf8_lossy(&received).into_owned();
    let status = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    Answer {
        status,
        head,
        connection,
    }
}

/// Reads until the server closes the connection (true), or `PATIENCE` passes (false).
async fn closed_by_server(connection: &mut TcpStream) -> bool {
    let mut buffer = [0u8; 65536];
    tokio::time::timeout(PATIENCE, async {
        loop {
            match connection.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// The streams open, as the metrics count them.
async fn open_streams(server: &TestServer) -> Option<u64> {
    let text = server
        .http
        .get(server.root_url("/actuator/prometheus"))
        .send()
        .await
        .ok()?
        .text()
        .await
        .ok()?;
    crate::metrics::sample(&text, "heureka_event_stream_subscribers", &[]).map(|value| value as u64)
}

/// Waits until the server counts `count` open streams: it learns that a client left when its
/// next keep-alive comment cannot be written, which nothing a test can await announces.
async fn wait_for_open_streams(server: &TestServer, count: u64) {
    eventually(&format!("{count} event streams open"), || async {
        open_streams(server).await == Some(count)
    })
    .await;
}

/// A server allowing `max` event streams, `per_client` of them from one address, with
/// keep-alive comments every 100 ms.
async fn with_stream_limits(max: usize, per_client: usize) -> TestServer {
    let max = format!("--heureka.events.max-streams={max}");
    let per_client = format!("--heureka.events.max-streams-per-client={per_client}");
    TestServer::start(&[
        &max,
        &per_client,
        "--heureka.events.keep-alive-interval=100ms",
    ])
    .await
}

/// `count` event streams opened from 127.0.0.1; asserts each is admitted.
async fn open_streams_from(server: &TestServer, count: usize) -> Vec<Answer> {
    let mut open = Vec::new();
    for _ in 0..count {
        let answer = open_stream(server, [127, 0, 0, 1]).await;
        assert_eq!(answer.status, 200, "{}", answer.head);
        open.push(answer);
    }
    open
}

fn assert_refused(answer: &Answer, limit_key: &str) {
    assert_eq!(answer.status, 429, "{}", answer.head);
    let head = answer.head.to_ascii_lowercase();
    assert!(head.contains("\r\nretry-after: "), "{}", answer.head);
    assert!(
        head.contains("\r\nconnection: close\r\n"),
        "{}",
        answer.head
    );
    assert!(answer.head.contains(limit_key), "{}", answer.head);
}

/// Asserts one more stream from 127.0.0.1 is refused naming `limit_key`, and holds no
/// connection: the server closes it.
async fn refused_and_closed(server: &TestServer, limit_key: &str) {
    let mut refused = open_stream(server, [127, 0, 0, 1]).await;
    assert_refused(&refused, limit_key);
    assert!(closed_by_server(&mut refused.connection).await);
}

#[tokio::test]
async fn streams_beyond_the_budget_are_refused_and_admitted_again_once_one_ends() {
    let server = with_stream_limits(3, 3).await;
    let mut open = open_streams_from(&server, 3).await;
    refused_and_closed(&server, "(heureka.events.max-streams)").await;
    let metrics = crate::metrics::scrape(&server).await;
    assert!(
        metrics.contains("\nheureka_event_streams_refused_total 1\n"),
        "{metrics}"
    );
    drop(open.pop());
    wait_for_open_streams(&server, 2).await;
    assert_eq!(open_stream(&server, [127, 0, 0, 1]).await.status, 200);
}

#[tokio::test]
async fn one_client_address_is_held_to_its_own_stream_limit() {
    let server = with_stream_limits(10, 2).await;
    let mut first_client = open_streams_from(&server, 2).await;
    refused_and_closed(&server, "heureka.events.max-streams-per-client").await;
    // Another address has a limit of its own.
    let other = open_stream(&server, [127, 0, 0, 2]).await;
    assert_eq!(other.status, 200, "{}", other.head);
    drop(first_client.pop());
    wait_for_open_streams(&server, 2).await;
    assert_eq!(open_stream(&server, [127, 0, 0, 1]).await.status, 200);
}

#[tokio::test]
async fn a_subscriber_that_stops_reading_is_closed() {
    let server = TestServer::start(&[
        "--heureka.events.keep-alive-interval=100ms",
        "--heureka.events.send-timeout=500ms",
        // 80 KB of metadata per instance is over the default limit (32KB).
        "--heureka.limits.max-metadata-bytes=100KB",
    ])
    .await;
    let mut stalled = open_stream_with_buffer(&server, [127, 0, 0, 1], Some(4096)).await;
    assert_eq!(stalled.status, 200, "{}", stalled.head);
    // About 8 MB of events (each registration's carries the instance): more than the socket
    // buffers and hyper's between the server and a client that reads no more.
    for i in 0..100 {
        let body = spring_body_with_blob("ORDERS", &format!("o-{i}"), 80_000);
        let response = server.post_json("/apps/ORDERS", &body).await;
        assert_eq!(response.status(), 204);
    }
    wait_for_open_streams(&server, 0).await;
    assert!(closed_by_server(&mut stalled.connection).await);
    // The server goes on serving streams.
    assert_eq!(open_stream(&server, [127, 0, 0, 1]).await.status, 200);
}
