//! An in-process server on Tokio's clock, for the integration tests that wait for timers. Not
//! an API: hidden from the docs and used by nothing else.
//!
//! It is started as [`crate::serve`] starts one (the same state, router and background tasks,
//! through `serve::start`), but its clock is [`Clock::tokio`] and its requests go through the
//! router with `oneshot`, as `fuzzing.rs` sends them, not through a socket. On a paused runtime
//! (`#[tokio::test(start_paused = true)]`) a test then advances time past a deadline and
//! asserts at once: leases, eviction, the renews bucket, delta retention, the response
//! caches' ages and every timer move together, and nothing waits in real time. A socket
//! cannot take part: a paused runtime that waits on the kernel advances its clock meanwhile,
//! firing timeouts that never were. So this server has no peers and does not register itself.

use std::net::SocketAddr;

use axum::body::{Body, HttpBody};
use axum::http::{HeaderMap, Method, Request};
use heureka_core::Millis;
use tower::ServiceExt;

use crate::clock::Clock;
use crate::config::Config;
use crate::connection::{AnswersAtOnce, Sender};
use crate::serve::{Lanes, Running};
use crate::state::AppState;

/// Where the server's clock starts: its `now` at start-up, in milliseconds since the Unix
/// epoch (2023-11-14T22:13:20Z), so that timestamps in documents are predictable.
pub const EPOCH_MS: Millis = 1_700_000_000_000;

/// The port the server believes it listens on (it listens on none); it appears only in the
/// dashboard's and the status page's documents.
const PORT: u16 = 8761;

/// A running server without a listener; its background tasks stop when it is dropped.
pub struct Server {
    running: Running,
}

/// A response with its body read to the end.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Response {
    /// The body as text (lossily, so that a test's assertion shows a bad body, not a panic).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl Server {
    /// Starts a server running `config`, with its peers (`eureka.client.service-url.*`) and
    /// its own registration (`register-with-eureka`) turned off: both need sockets. Spawns
    /// the background tasks, so it must be called inside a Tokio runtime.
    pub fn start(config: Config) -> Server {
        Server::start_serving(config, Lanes::FastLane)
    }

    /// [`Server::start`], with every request served by the router: the reference the fast
    /// lane (`fast_lane.rs`) is compared with.
    pub fn start_router_only(config: Config) -> Server {
        Server::start_serving(config, Lanes::RouterOnly)
    }

    fn start_serving(mut config: Config, lanes: Lanes) -> Server {
        config.client.service_url.clear();
        config.client.register_with_eureka = false;
        config.client.fetch_registry = false;
        let state = AppState::new(&config, Clock::tokio(EPOCH_MS), PORT)
            .expect("the persistence store opens");
        Server {
            running: crate::serve::start(&state, &config, PORT, None, lanes),
        }
    }

    /// Sends `request` through the server's router and returns the response with its body
    /// unread: an event stream's body never ends. A request without a body is first offered
    /// to be answered at once, as the listener offers it (`connection.rs`).
    pub async fn call(&self, request: Request<Body>) -> axum::response::Response {
        if request.body().is_end_stream() {
            if let Some(response) = self.running.app.answer_at_once(&request) {
                return response;
            }
        }
        let response = self.running.app.clone().oneshot(request).await;
        match response {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }

    /// How many requests the fast lane (`fast_lane.rs`) has answered on this thread, in any
    /// server: on a current-thread runtime, every request a test sent.
    pub fn fast_lane_answers() -> u64 {
        crate::fast_lane::answered_on_this_thread()
    }

    /// Sends `method path` (the path as a client sends it, base path included) with
    /// `headers` and `body`, and reads the whole response.
    pub async fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Body>,
    ) -> Response {
        self.send(request(method, path, headers, body.into())).await
    }

    /// [`Server::request`] as if it came over a connection from `sender`, as the listener
    /// marks it: a registry fetch then books its consumer (`consumers.rs`).
    pub async fn request_from(
        &self,
        sender: SocketAddr,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Body>,
    ) -> Response {
        let mut request = request(method, path, headers, body.into());
        request.extensions_mut().insert(Sender(sender));
        self.send(request).await
    }

    async fn send(&self, request: Request<Body>) -> Response {
        let response = self.call(request).await;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("the body is read to its end");
        Response {
            status,
            headers,
            body: body.to_vec(),
        }
    }
}

fn request(method: &str, path: &str, headers: &[(&str, &str)], body: Body) -> Request<Body> {
    let method = Method::from_bytes(method.as_bytes()).expect("a valid method");
    let mut request = Request::builder().method(method).uri(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.body(body).expect("a valid request")
}
