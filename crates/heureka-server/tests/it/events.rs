//! The event stream over a real socket: events are numbered in order and filtered by app,
//! peers going down and up are reported, webhooks are delivered and retried. That every kind
//! of change arrives, the timers' among them (renewals, eviction), is in `timers.rs`, on
//! paused time.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::support::{guarded_by, Sent, TestServer};

/// A subscription to `GET {base}/events`, parsed as Server-Sent Events; shared with
/// `audit.rs`.
pub(crate) struct Subscription {
    response: reqwest::Response,
    buffer: SseBuffer,
}

impl Subscription {
    pub(crate) async fn open(server: &TestServer, query: &str) -> Subscription {
        Subscription::open_url(server, &server.url(&format!("/events{query}"))).await
    }

    /// The stream at `url`: another namespace's (`/ns/{name}/eureka/events`).
    pub(crate) async fn open_url(server: &TestServer, url: &str) -> Subscription {
        Subscription::from(server.http.get(url)).await
    }

    /// The subscription `request` opens.
    pub(crate) async fn from(request: reqwest::RequestBuilder) -> Subscription {
        let response = request.sent().await;
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"],
            "text/event-stream",
            "SSE content type"
        );
        Subscription {
            response,
            buffer: SseBuffer::default(),
        }
    }

    /// The next event (name, payload); the bounded wait only guards against a hang.
    pub(crate) async fn next(&mut self) -> (String, Value) {
        let response = &mut self.response;
        let chunk = async || response.chunk().await.unwrap();
        self.buffer.next_event(chunk).await
    }

    /// Reads to the end of the stream, which must come within 20 s.
    pub(crate) async fn ends(&mut self) {
        let to_the_end = async { while self.response.chunk().await.unwrap().is_some() {} };
        tokio::time::timeout(std::time::Duration::from_secs(20), to_the_end)
            .await
            .expect("the stream ends within 20 s");
    }

    /// The next event that is not a `renewals` event with nothing renewed (those also report
    /// moving self-preservation numbers).
    pub(crate) async fn next_change(&mut self) -> (String, Value) {
        loop {
            let (name, event) = self.next().await;
            if name != "renewals" || event["total"] != 0 {
                return (name, event);
            }
        }
    }
}

/// Server-Sent Events as their chunks arrive, read block by block; shared with the paused-time
/// subscription in `timers.rs`.
#[derive(Default)]
pub(crate) struct SseBuffer(String);

impl SseBuffer {
    /// The next event, reading a chunk with `chunk` (`None` once the stream ended) while no
    /// whole event is in; the bound, 20 s (of paused time where the clock is paused), only
    /// turns a missing event into a failure.
    pub(crate) async fn next_event(
        &mut self,
        mut chunk: impl AsyncFnMut() -> Option<bytes::Bytes>,
    ) -> (String, Value) {
        loop {
            if let Some(event) = self.take_event() {
                return event;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), chunk())
                .await
                .expect("an event within 20 s")
                .expect("the stream stays open");
            self.push(&chunk);
        }
    }

    /// The first whole event received and not yet taken, keep-alive comments skipped.
    fn take_event(&mut self) -> Option<(String, Value)> {
        while let Some(end) = self.0.find("\n\n") {
            let block: String = self.0.drain(..end + 2).collect();
            if let Some(event) = parse_event(&block) {
                return Some(event);
            }
        }
        None
    }

    fn push(&mut self, chunk: &[u8]) {
        self.0.push_str(std::str::from_utf8(chunk).unwrap());
    }
}

/// One Server-Sent Events block as (event name, JSON payload); `None` for a keep-alive
/// comment, which has neither.
fn parse_event(block: &str) -> Option<(String, Value)> {
    let mut name = None;
    let mut data = String::new();
    for line in block.lines() {
        if let Some(value) = line.strip_prefix("event:") {
            name = Some(value.trim().to_owned());
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push_str(value.trim_start());
        }
    }
    Some((name?, serde_json::from_str(&data).expect("data is JSON")))
}

#[tokio::test]
async fn sequence_numbers_increase_by_one_event_after_event() {
    let server = TestServer::start(&[]).await;
    let mut events = Subscription::open(&server, "").await;
    for id in ["o1", "o2", "o3"] {
        server.register("orders", id).await;
    }
    // Every event from the first registration on, whatever its kind: the one-second
    // `renewals` flush may fall between two registrations, and takes a number too.
    let (mut seqs, mut registered) = (Vec::new(), 0);
    while registered < 3 {
        let (name, event) = events.next().await;
        if name == "registered" {
            registered += 1;
        }
        if registered > 0 {
            seqs.push(event["seq"].as_u64().unwrap());
        }
    }
    for pair in seqs.windows(2) {
        assert_eq!(pair[1], pair[0] + 1, "{seqs:?}");
    }
}

#[tokio::test]
async fn an_app_filter_drops_other_apps_events() {
    let server = TestServer::start(&[]).await;
    let mut events = Subscription::open(&server, "?app=orders").await;
    server.register("billing", "b1").await;
    server.register("orders", "o1").await;
    let (name, event) = events.next_change().await;
    assert_eq!(name, "registered");
    assert_eq!(event["app"], "ORDERS");
}

#[tokio::test]
async fn a_takeover_is_an_event_with_both_endpoints_before_the_registration() {
    let server = TestServer::start(&[]).await;
    server.register("orders", "o1").await;
    let mut events = Subscription::open(&server, "?app=orders").await;
    let moved = crate::support::spring_body("orders", "o1").replace("10.0.0.5", "10.6.6.6");
    assert_eq!(server.post_json("/apps/orders", &moved).await.status(), 204);
    let (name, event) = events.next_change().await;
    assert_eq!(name, "takeover");
    assert_eq!(event["previous"], "10.0.0.5:8080");
    assert_eq!(event["incoming"], "10.6.6.6:8080");
    let (name, event) = events.next_change().await;
    assert_eq!(name, "registered");
    assert_eq!(event["instance"]["ipAddr"], "10.6.6.6");
}

#[tokio::test]
async fn the_stream_needs_credentials_when_auth_is_on() {
    let server = guarded_by("admin", "secret").await;
    let (status, _) = server.get_text("/events", None).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn a_peer_that_goes_down_and_comes_back_is_reported_each_time() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let peer_port = listener.local_addr().unwrap().port();
    drop(listener);
    let own = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let own_port = own.local_addr().unwrap().port();
    let urls = format!(
        "--eureka.client.service-url.defaultZone=http://127.0.0.1:{own_port}/eureka/,http://127.0.0.1:{peer_port}/eureka/"
    );
    let server = TestServer::start_on(own, &[&urls, "--eureka.client.fetch-registry=false"]).await;
    let mut events = Subscription::open(&server, "").await;
    server.register("orders", "o1").await;
    let down = loop {
        let (name, event) = events.next_change().await;
        if name == "peer-down" {
            break event;
        }
    };
    assert_eq!(
        down["peer"],
        format!("http://127.0.0.1:{peer_port}/eureka/")
    );
    let peer = tokio::net::TcpListener::bind(("127.0.0.1", peer_port))
        .await
        .unwrap();
    let _peer = TestServer::start_on(peer, &[&urls]).await;
    let up = loop {
        let (name, event) = events.next_change().await;
        assert_ne!(name, "peer-down", "one peer-down per outage");
        if name == "peer-up" {
            break event;
        }
    };
    assert_eq!(up["peer"], down["peer"]);
}

type Call = (String, StatusCode, Value);

async fn next_call(calls: &mut mpsc::UnboundedReceiver<Call>) -> Call {
    tokio::time::timeout(Duration::from_secs(20), calls.recv())
        .await
        .expect("a webhook call within 20 s")
        .unwrap()
}

/// A tiny webhook receiver: answers 500 to its first request and 200 afterwards, and hands
/// every request's event header and body to the test.
async fn webhook_receiver() -> (String, mpsc::UnboundedReceiver<Call>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let (sender, receiver) = mpsc::unbounded_channel();
    let calls = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
            let sender = sender.clone();
            let calls = calls.clone();
            async move {
                let status = if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                    StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    StatusCode::OK
                };
                let event = headers["x-heureka-event"].to_str().unwrap().to_owned();
                let _ = sender.send((event, status, serde_json::from_str(&body).unwrap()));
                status
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, receiver)
}

#[tokio::test]
async fn webhooks_get_the_events_they_asked_for_and_a_failed_delivery_is_retried() {
    let (url, mut calls) = webhook_receiver().await;
    let server = TestServer::start(&[
        &format!("--heureka.webhooks[0].url={url}"),
        "--heureka.webhooks[0].events=registered,cancelled",
    ])
    .await;
    server.register("orders", "o1").await;
    server
        .put("/apps/ORDERS/o1/status?value=OUT_OF_SERVICE")
        .await;
    assert_eq!(server.delete("/apps/ORDERS/o1").await, 200);
    let (event, status, first) = next_call(&mut calls).await;
    assert_eq!(
        (event.as_str(), status),
        ("registered", StatusCode::INTERNAL_SERVER_ERROR)
    );
    let (event, status, retried) = next_call(&mut calls).await;
    assert_eq!((event.as_str(), status), ("registered", StatusCode::OK));
    assert_eq!(retried, first, "the retry sends the same event");
    let (event, _, cancelled) = next_call(&mut calls).await;
    assert_eq!(event, "cancelled", "status-changed was not asked for");
    assert_eq!(cancelled["id"], "o1");
}
