//! The push follower against scripted servers on real sockets: which `Last-Event-ID` each new
//! stream asks with (the last message applied after a break, none after a hash mismatch), where
//! it asks after a 429, and how acknowledgements are sent (one at a time, the versions that came
//! meanwhile coalesced into the newest).

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{broadcast, mpsc};

use crate::events::{ClientEvent, FetchKind};
use crate::registry_copy::RegistryCopy;
use crate::transport::Transport;

/// A request the scripted server received: its head, and the connection to answer on.
struct Request {
    head: String,
    connection: TcpStream,
}

impl Request {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    }

    /// Starts an event stream: the head, then whatever [`Request::send`] writes.
    async fn open_stream(&mut self) {
        self.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
            .await;
    }

    async fn send(&mut self, event: &str, id: &str, data: &str) {
        self.write(&format!("event: {event}\nid: {id}\ndata: {data}\n\n"))
            .await;
    }

    async fn too_many(mut self) {
        self.write("HTTP/1.1 429 Too Many Requests\r\nretry-after: 1\r\nconnection: close\r\n\r\n")
            .await;
    }

    async fn no_content(mut self) {
        self.write("HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n")
            .await;
    }

    async fn write(&mut self, text: &str) {
        self.connection.write_all(text.as_bytes()).await.unwrap();
    }
}

/// The scripted server: stream requests (`GET`) and acknowledgements (`POST`), in the order
/// they come.
struct Scripted {
    streams: mpsc::UnboundedReceiver<Request>,
    acks: mpsc::UnboundedReceiver<Request>,
}

impl Scripted {
    /// Listens on a free port; the client's service URL.
    async fn start() -> (Scripted, String) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/eureka/", listener.local_addr().unwrap());
        let (streams, stream_requests) = mpsc::unbounded_channel();
        let (acks, ack_requests) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((connection, _)) = listener.accept().await {
                let request = read_head(connection).await;
                let to = if request.head.starts_with("POST") {
                    &acks
                } else {
                    &streams
                };
                let _ = to.send(request);
            }
        });
        let scripted = Scripted {
            streams: stream_requests,
            acks: ack_requests,
        };
        (scripted, url)
    }

    async fn next_stream(&mut self) -> Request {
        within_patience(self.streams.recv()).await.unwrap()
    }

    async fn next_ack(&mut self) -> Request {
        within_patience(self.acks.recv()).await.unwrap()
    }
}

async fn read_head(mut connection: TcpStream) -> Request {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if connection.read(&mut byte).await.unwrap_or(0) == 0 {
            break;
        }
        head.push(byte[0]);
    }
    Request {
        head: String::from_utf8_lossy(&head).into_owned(),
        connection,
    }
}

/// A bound against a hang, far above what any step takes.
async fn within_patience<T>(step: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), step)
        .await
        .expect("within 20 s")
}

/// The follower of `url`, running until the test ends, and the copy's events.
fn follower(url: &str) -> broadcast::Receiver<ClientEvent> {
    follower_of(&[url.to_owned()])
}

/// The follower of the service URLs `urls`, in this order.
fn follower_of(urls: &[String]) -> broadcast::Receiver<ClientEvent> {
    let (events, receiver) = broadcast::channel(64);
    let copy = Arc::new(RegistryCopy::new(
        true,
        ("BILLING".to_owned(), "b1".to_owned()),
        events,
    ));
    let transport = Transport::new(
        urls,
        Duration::from_secs(30),
        Duration::from_secs(1200),
        (Duration::from_secs(5), Duration::from_secs(5)),
        None,
    )
    .unwrap();
    tokio::spawn(super::follow(copy, Arc::new(transport)));
    receiver
}

/// A document of ORDERS with instances `o1`…`oN` `UP`, at `version`, with `hashcode`.
fn document(version: u64, instances: usize, hashcode: &str) -> String {
    let instances: Vec<String> = (1..=instances)
        .map(|n| {
            format!(
                r#"{{"instanceId":"o{n}","app":"ORDERS","hostName":"h","ipAddr":"10.0.0.1","status":"UP","port":{{"$":80,"@enabled":"true"}},"dataCenterInfo":{{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}},"actionType":"ADDED"}}"#
            )
        })
        .collect();
    format!(
        r#"{{"applications":{{"versions__delta":"{version}","apps__hashcode":"{hashcode}","application":[{{"name":"ORDERS","instance":[{}]}}]}}}}"#,
        instances.join(",")
    )
}

/// Waits for the copy's next refresh of `kind`.
async fn refreshed(events: &mut broadcast::Receiver<ClientEvent>, kind: FetchKind) {
    within_patience(async {
        loop {
            if let ClientEvent::CacheRefreshed { kind: got, .. } = events.recv().await.unwrap() {
                if got == kind {
                    return;
                }
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_stream_that_ends_is_resumed_from_the_last_message_applied() {
    let (mut server, url) = Scripted::start().await;
    let mut events = follower(&url);

    let mut first = server.next_stream().await;
    assert_eq!(first.header("last-event-id"), None);
    first.open_stream().await;
    first
        .send("snapshot", "p-0", &document(7, 1, "UP_1_"))
        .await;
    first.send("delta", "p-1", &document(8, 2, "UP_2_")).await;
    refreshed(&mut events, FetchKind::PushedDelta).await;
    drop(first);

    let second = server.next_stream().await;
    assert_eq!(second.header("last-event-id").as_deref(), Some("p-1"));
}

#[tokio::test]
async fn a_delta_whose_hash_differs_is_followed_by_a_stream_without_last_event_id() {
    let (mut server, url) = Scripted::start().await;
    let _events = follower(&url);

    let mut first = server.next_stream().await;
    first.open_stream().await;
    first
        .send("snapshot", "p-0", &document(7, 1, "UP_1_"))
        .await;
    // Two instances after the delta, but the server counts five: the copy missed some.
    first.send("delta", "p-1", &document(8, 2, "UP_5_")).await;

    let second = server.next_stream().await;
    assert_eq!(second.header("last-event-id"), None);
}

#[tokio::test]
async fn versions_pushed_while_an_acknowledgement_is_in_flight_are_acknowledged_once_as_the_newest()
{
    let (mut server, url) = Scripted::start().await;
    let mut events = follower(&url);
    let mut stream = server.next_stream().await;
    stream.open_stream().await;
    stream
        .send("snapshot", "p-0", &document(7, 1, "UP_1_"))
        .await;

    // The first acknowledgement is held unanswered while two more versions are pushed.
    let held = server.next_ack().await;
    assert!(
        held.head.starts_with("POST /eureka/push/ack?version=7 "),
        "{}",
        held.head
    );
    stream.send("delta", "p-1", &document(8, 2, "UP_2_")).await;
    refreshed(&mut events, FetchKind::PushedDelta).await;
    stream.send("delta", "p-2", &document(9, 3, "UP_3_")).await;
    refreshed(&mut events, FetchKind::PushedDelta).await;
    assert!(
        server.acks.try_recv().is_err(),
        "one acknowledgement at a time"
    );
    held.no_content().await;

    let next = server.next_ack().await;
    assert!(
        next.head.starts_with("POST /eureka/push/ack?version=9 "),
        "{}",
        next.head
    );
}

#[tokio::test]
async fn a_stream_refused_for_too_many_is_asked_for_at_the_next_service_url() {
    let (mut full, first) = Scripted::start().await;
    let (mut other, second) = Scripted::start().await;
    let _events = follower_of(&[first, second]);

    full.next_stream().await.too_many().await;
    let asked = other.next_stream().await;
    assert!(
        asked.head.starts_with("GET /eureka/push "),
        "{}",
        asked.head
    );
}
