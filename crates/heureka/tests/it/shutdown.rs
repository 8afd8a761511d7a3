//! SIGTERM against the real binary: in-flight requests finish, and no client, however stalled,
//! keeps the process alive past the grace period. Only how the process exits is asserted, never
//! how fast; every wait is bounded by `PATIENCE`.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::process::{read_to_end, status_of, HeurekaProcess, PATIENCE};
use crate::support::spring_body;

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
    assert_exits_cleanly(&mut server).await;
    assert!(
        server.log().contains("grace period over"),
        "{}",
        server.log()
    );
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
    let metadata = format!(
        r#""management.port":"8080","blob":"{}""#,
        "b".repeat(80_000)
    );
    for i in 0..100 {
        let body = spring_body("ORDERS", &format!("o-{i}"))
            .replace(r#""management.port":"8080""#, &metadata);
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
    stream
        .write_all(b"GET /eureka/apps HTTP/1.1\r\nHost: test\r\nAccept: application/json\r\n\r\n")
        .await
        .unwrap();
    // Read the start of the response, then stop reading.
    let mut status_line = [0u8; 12];
    tokio::time::timeout(PATIENCE, stream.read_exact(&mut status_line))
        .await
        .expect("the response starts")
        .unwrap();
    assert_eq!(status_of(&status_line), Some(200));
    server.terminate();
    assert_exits_cleanly(&mut server).await;
    assert!(
        server.log().contains("grace period over"),
        "{}",
        server.log()
    );
}
