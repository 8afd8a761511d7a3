//! The push stream over real sockets (`docs/push.md`): a snapshot first, then one delta per
//! write; resuming with `Last-Event-ID`; acknowledgments booking the consumer; the stream's
//! own budget; 404 when it is off, as from the Java server.

use std::time::Duration;

use serde_json::Value;

use crate::support::{guarded_by, Method, Sent, TestServer};

/// One push stream, read message by message; shared with `cluster.rs`.
pub(crate) struct Push {
    response: reqwest::Response,
    buffer: String,
}

/// One message: its event name, id and JSON document.
pub(crate) struct Message {
    pub(crate) event: String,
    id: String,
    doc: Value,
}

impl Message {
    fn version(&self) -> u64 {
        self.doc["applications"]["versions__delta"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    }

    /// Each instance in the document as (id, status, actionType).
    pub(crate) fn instances(&self) -> Vec<(String, String, String)> {
        let apps = self.doc["applications"]["application"].as_array().unwrap();
        apps.iter()
            .flat_map(|app| app["instance"].as_array().unwrap().iter())
            .map(|instance| {
                let field = |name: &str| instance[name].as_str().unwrap_or("").to_owned();
                (field("instanceId"), field("status"), field("actionType"))
            })
            .collect()
    }
}

impl Push {
    pub(crate) async fn open(
        server: &TestServer,
        query: &str,
        last_event_id: Option<&str>,
    ) -> Push {
        let mut request = server.request(Method::GET, &format!("/push{query}"));
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id);
        }
        Push::from(request).await
    }

    /// The stream `request` opens.
    pub(crate) async fn from(request: reqwest::RequestBuilder) -> Push {
        let response = request.sent().await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Push {
            response,
            buffer: String::new(),
        }
    }

    /// The next message; the bound only turns a missing one into a failure.
    pub(crate) async fn next(&mut self) -> Message {
        loop {
            if let Some(message) = self.take() {
                return message;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.response.chunk())
                .await
                .expect("a message within 20 s")
                .unwrap()
                .expect("the stream stays open");
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    /// Reads to the end of the stream, which must come within 20 s (keep-alives do not
    /// extend it), with no message before it.
    pub(crate) async fn ends(&mut self) {
        let to_the_end = async {
            while let Some(chunk) = self.response.chunk().await.unwrap() {
                self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
                assert!(self.take().is_none(), "no message before the end");
            }
        };
        tokio::time::timeout(Duration::from_secs(20), to_the_end)
            .await
            .expect("the stream ends within 20 s");
    }

    fn take(&mut self) -> Option<Message> {
        while let Some(end) = self.buffer.find("\n\n") {
            let block: String = self.buffer.drain(..end + 2).collect();
            let field = |name: &str| {
                block
                    .lines()
                    .find_map(|line| line.strip_prefix(name))
                    .map(str::to_owned)
            };
            if let (Some(event), Some(id), Some(data)) =
                (field("event: "), field("id: "), field("data: "))
            {
                let doc = serde_json::from_str(&data).expect("data is JSON");
                return Some(Message { event, id, doc });
            }
        }
        None
    }
}

#[tokio::test]
async fn a_stream_starts_with_a_snapshot_at_the_registrys_version() {
    let server = TestServer::start(&[]).await;
    server.register("orders", "o1").await;
    let mut push = Push::open(&server, "?app=orders", None).await;
    let snapshot = push.next().await;
    assert_eq!(snapshot.event, "snapshot");
    assert_eq!(
        snapshot.instances(),
        [("o1".to_owned(), "UP".to_owned(), "ADDED".to_owned())]
    );
    let delta: Value = serde_json::from_str(&server.json_ok("/apps/delta").await).unwrap();
    assert_eq!(
        snapshot.version().to_string(),
        delta["applications"]["versions__delta"]
    );
}

#[tokio::test]
async fn a_status_change_and_a_cancel_are_pushed_as_they_happen() {
    let server = TestServer::start(&[]).await;
    server.register("orders", "o1").await;
    let mut push = Push::open(&server, "?app=orders", None).await;
    push.next().await;
    server.take_out_of_service("orders", "o1").await;
    let modified = push.next().await;
    assert_eq!(modified.event, "delta");
    assert_eq!(
        modified.instances(),
        [(
            "o1".to_owned(),
            "OUT_OF_SERVICE".to_owned(),
            "MODIFIED".to_owned()
        )]
    );
    assert_eq!(server.delete("/apps/orders/o1").await, 200);
    let deleted = push.next().await;
    assert_eq!(deleted.instances()[0].2, "DELETED");
    assert_eq!(
        deleted.doc["applications"]["apps__hashcode"], "",
        "the whole registry's: nothing left"
    );
}

#[tokio::test]
async fn a_stream_following_one_application_is_not_sent_the_others() {
    let server = TestServer::start(&[]).await;
    let mut push = Push::open(&server, "?app=ORDERS", None).await;
    push.next().await;
    server.register("billing", "b1").await;
    server.register("orders", "o1").await;
    let next = push.next().await;
    assert_eq!(next.instances()[0].0, "o1");
}

#[tokio::test]
async fn a_stream_that_resumes_is_sent_what_it_missed_and_no_snapshot() {
    let server = TestServer::start(&[]).await;
    let mut push = Push::open(&server, "?app=orders", None).await;
    let last = push.next().await.id;
    drop(push);
    server.register("orders", "o1").await;
    server.register("orders", "o2").await;
    let mut resumed = Push::open(&server, "?app=orders", Some(&last)).await;
    let (first, second) = (resumed.next().await, resumed.next().await);
    assert_eq!(
        (first.event.as_str(), second.event.as_str()),
        ("delta", "delta")
    );
    assert_eq!(
        (
            first.instances()[0].0.as_str(),
            second.instances()[0].0.as_str()
        ),
        ("o1", "o2")
    );
}

#[tokio::test]
async fn a_last_event_id_from_another_node_starts_with_a_snapshot() {
    let server = TestServer::start(&[]).await;
    let mut push = Push::open(&server, "", Some("00000000000000ff-3")).await;
    assert_eq!(push.next().await.event, "snapshot");
}

#[tokio::test]
async fn an_acknowledgment_books_the_consumer_with_the_version_it_applied() {
    let server = TestServer::start(&[]).await;
    let agent = "Apache-HttpClient/5.5 (Java/17.0.15)";
    let stream = server
        .request(Method::GET, "/push")
        .header("User-Agent", agent)
        .sent()
        .await;
    let mut push = Push {
        response: stream,
        buffer: String::new(),
    };
    let version = push.next().await.version();
    let ack = server
        .request(Method::POST, &format!("/push/ack?version={version}"))
        .header("User-Agent", agent)
        .sent()
        .await;
    assert_eq!(ack.status(), 204);
    let consumers: Value = serde_json::from_str(&server.json_ok("/consumers").await).unwrap();
    let consumer = &consumers["consumers"][0];
    assert_eq!(consumer["agent"], agent);
    assert_eq!(consumer["version"], version);
    assert_eq!(consumer["push"], true, "{consumers}");
}

#[tokio::test]
async fn an_acknowledgment_of_a_version_the_node_has_not_reached_is_refused() {
    let server = TestServer::start(&[]).await;
    let refused = server
        .request(Method::POST, "/push/ack?version=999999")
        .sent()
        .await;
    assert_eq!(refused.status(), 400);
    let reason = refused.text().await.unwrap();
    assert!(
        reason.contains("newer than this node's registry"),
        "{reason}"
    );
    let consumers = server.json_ok("/consumers").await;
    assert!(consumers.contains(r#""consumers":[]"#), "{consumers}");
}

#[tokio::test]
async fn push_off_answers_404_as_a_server_without_push_does() {
    let server = TestServer::start(&["--heureka.push.enabled=false"]).await;
    assert_eq!(server.status(Method::GET, "/push").await, 404);
    assert_eq!(
        server.status(Method::POST, "/push/ack?version=1").await,
        404
    );
}

#[tokio::test]
async fn push_streams_beyond_their_budget_are_refused_and_event_streams_are_not() {
    let server = TestServer::start(&["--heureka.push.max-subscribers-per-client=1"]).await;
    let _held = Push::open(&server, "", None).await;
    let refused = server.request(Method::GET, "/push").sent().await;
    assert_eq!(refused.status(), 429);
    let reason = refused.text().await.unwrap();
    assert!(
        reason.contains("heureka.push.max-subscribers-per-client"),
        "{reason}"
    );
    let events = server.request(Method::GET, "/events").sent().await;
    assert_eq!(events.status(), 200);
}

#[tokio::test]
async fn a_reader_follows_the_push_with_the_apis_credentials_and_nobody_else_does() {
    let server = guarded_by("eureka", "s3cret").await;
    assert_eq!(server.status(Method::GET, "/push").await, 401);
    let response = server.get_as("/push", "eureka", "s3cret").await;
    assert_eq!(response.status(), 200);
}
