//! Accepting and serving connections: HTTP/1.1 over hyper, under the limits of
//! [`ConnectionConfig`] that keep slow, idle and hostile clients from holding the server.
//!
//! A connection is either *waiting* for a complete request head or *busy* with a request. Every
//! wait has a deadline: `connection-timeout` after the connection was accepted, and
//! `keep-alive-timeout` after each response was handed to hyper (so it also bounds a client
//! that stops reading its response). A busy request's body must arrive within
//! `request-body-timeout`, or it is answered 408. Nothing a client does, or fails to do, holds
//! a connection open without a deadline.
//!
//! At `max-connections`, a new connection closes the one that has waited longest for a head
//! (among those its task has looked at: a head may be sitting unread in a new one). Under a
//! slowloris the attackers, which never finish a head, are closed oldest first, while a real
//! client, whose head arrives at once, is busy and left alone; so however many attackers
//! connect, others are answered. When no connection can be closed (all are busy, each within
//! its deadline), new connections wait in the backlog, as in Tomcat.
//! Errors such as "too many open files" close the longest-waiting connection too, to free a
//! descriptor, and the loop pauses briefly and goes on.
//!
//! An event stream is busy for as long as it lasts, so it is watched instead: hyper must take
//! from it (an event, or the keep-alive comment sent every `heureka.events.keep-alive-interval`)
//! within the limits the handler marks its response with ([`EventStreamLimits`]), or its client
//! has stopped reading and the connection is closed; and it ends at its maximum age. How many
//! streams may be open is the handler's budget (`events/budget.rs`), which keeps them from
//! filling `max-connections`.
//!
//! Shutdown stops accepting and closes at once every connection between requests (idle, or
//! with part of a head: nothing is in progress there), ends event streams, lets in-flight
//! exchanges finish, and after the grace period (`spring.lifecycle.timeout-per-shutdown-phase`)
//! drops the rest.

use std::convert::Infallible;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::{sleep, sleep_until};

use crate::clock::{self, Instant};
use tower::{Service, ServiceExt};

use self::table::{Deadline, Slot, Table};
use self::wait::Woke;
use crate::config::ConnectionConfig;
use crate::connection::{AnswersAtOnce, ClientCertificate, Sender};
use crate::http::error::ApiError;
use crate::log_budget::LogBudget;
use crate::tls::ServerTls;
use heureka_tls::rustls;

mod table;
mod wait;

/// How long the accept loop pauses after an error such as "too many open files", once it has
/// closed a waiting connection to free a descriptor.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(20);

/// Refused TLS handshakes logged a minute: a client retrying with a certificate the server
/// refuses, or a scanner, must not flood the log; the lines left out are counted.
const REFUSED_HANDSHAKES_LOGGED_PER_MINUTE: u32 = 10;

/// hyper's own read-buffer limit; raised only for a header limit above it.
const HYPER_DEFAULT_MAX_BUF: usize = 8192 + 4096 * 100;

/// Serves `app` on every connection `listener` accepts until `shutdown` completes, then drains
/// the connections for at most the grace period.
pub(crate) async fn serve<S>(
    listener: TcpListener,
    app: S,
    limits: &ConnectionConfig,
    tls: Option<Arc<ServerTls>>,
    shutdown: impl Future<Output = ()>,
) where
    S: Service<Request, Response = Response, Error = Infallible> + AnswersAtOnce,
    S: Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let table = Arc::new(Table::new(limits.max_connections));
    let http = http1_builder(limits);
    let timeouts = Timeouts {
        keep_alive: limits.keep_alive_timeout,
        request_body: limits.request_body_timeout,
    };
    let (stop, stopped) = watch::channel(());
    let mut connections = JoinSet::new();
    let mut evicting = Throttle::default();
    let mut full = Throttle::default();
    let mut accept_errors = Throttle::default();
    let refused_handshakes = Arc::new(parking_lot::Mutex::new(LogBudget::new(
        REFUSED_HANDSHAKES_LOGGED_PER_MINUTE,
    )));
    let mut shutdown = pin!(shutdown);
    'accept: loop {
        tokio::select! {
            biased;
            () = &mut shutdown => break,
            // Reap finished connections so the set holds only open ones.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let (slot, evicted) = loop {
                        if let Some(admitted) = table.admit(limits.connection_timeout) {
                            break admitted;
                        }
                        if let Some(times) = full.hit() {
                            tracing::warn!(
                                max_connections = limits.max_connections,
                                times,
                                "connection limit reached and no connection is waiting for a \
                                 request: new connections wait"
                            );
                        }
                        // Busy connections end within their deadlines, and new ones are
                        // examined within moments; meanwhile newcomers queue in the backlog,
                        // as they do in Tomcat.
                        tokio::select! {
                            () = &mut shutdown => break 'accept,
                            () = table.room.notified() => {}
                        }
                    };
                    if let Some(times) = evicted.then(|| evicting.hit()).flatten() {
                        tracing::warn!(
                            max_connections = limits.max_connections,
                            times,
                            "connection limit reached: closing the connections that have \
                             waited longest for a request"
                        );
                    }
                    let task = serve_connection(
                        stream, slot, app.clone(), http.clone(), timeouts, stopped.clone(),
                        tls.as_ref().map(|tls| (tls.current(), refused_handshakes.clone())),
                    );
                    connections.spawn(task);
                    if evicted {
                        // At the limit, let the new connection be examined before the next
                        // one arrives and looks for a connection to close.
                        tokio::task::yield_now().await;
                    }
                }
                Err(error) if is_about_one_connection(&error) => {}
                Err(error) => {
                    if let Some(times) = accept_errors.hit() {
                        tracing::warn!(
                            %error,
                            times,
                            "cannot accept connections: closing the one that has waited longest \
                             for a request, and retrying"
                        );
                    }
                    table.close_longest_waiting();
                    tokio::select! {
                        () = &mut shutdown => break,
                        () = sleep(ACCEPT_ERROR_PAUSE) => {}
                    }
                }
            }
        }
    }
    drop(listener);
    drain(connections, stop, limits.shutdown_grace).await;
}

/// Asks every connection to finish its exchange and close, and waits up to `grace` for them.
async fn drain(mut connections: JoinSet<()>, stop: watch::Sender<()>, grace: Duration) {
    stop.send_replace(());
    if !connections.is_empty() {
        tracing::info!(
            open = connections.len(),
            ?grace,
            "finishing in-flight requests"
        );
    }
    let drained = tokio::time::timeout(grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = connections.len(),
            ?grace,
            "grace period over: closing the remaining connections"
        );
        connections.abort_all();
    }
}

fn http1_builder(limits: &ConnectionConfig) -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder
        // The deadlines here replace hyper's header timer, which cannot tell a first head
        // from a kept-alive wait.
        .header_read_timeout(None)
        .max_header_size(limits.max_header_bytes)
        .max_buf_size(limits.max_header_bytes.max(HYPER_DEFAULT_MAX_BUF));
    builder
}

/// Errors that concern the one connection being accepted (it was reset before we took it);
/// the listener itself is fine.
fn is_about_one_connection(error: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::ConnectionAborted
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionRefused
            | ErrorKind::Interrupted
    )
}

/// Marks a response as an event stream, which never ends by itself: the listener closes it
/// when hyper has taken nothing from it for `stall_after` (its client stopped reading), ends
/// it after `max_age`, and ends it at shutdown.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventStreamLimits {
    pub(crate) stall_after: Duration,
    pub(crate) max_age: Duration,
}

/// The deadlines a connection's task and service apply.
#[derive(Debug, Clone, Copy)]
struct Timeouts {
    keep_alive: Duration,
    request_body: Duration,
}

/// One connection, until its deadline, its eviction, its client, or the end of the grace period
/// closes it.
async fn serve_connection<S>(
    stream: TcpStream,
    slot: Arc<Slot>,
    app: S,
    http: http1::Builder,
    timeouts: Timeouts,
    stop: watch::Receiver<()>,
    tls: Option<(
        Arc<rustls::ServerConfig>,
        Arc<parking_lot::Mutex<LogBudget>>,
    )>,
) where
    S: Service<Request, Response = Response, Error = Infallible> + AnswersAtOnce,
    S: Clone + Send + 'static,
    S::Future: Send + 'static,
{
    // As Tomcat does: responses are written whole, so Nagle's algorithm would only add delay.
    let _ = stream.set_nodelay(true);
    let sender = stream.peer_addr().ok().map(Sender);
    let Some(tls) = tls else {
        let service = Exchange::new(app, &slot, timeouts, sender, None, &stop);
        return serve_http(TokioIo::new(stream), service, slot, http, timeouts, stop).await;
    };
    // Boxed: a TLS connection's handshake and stream state take about 6 KiB, which every plain
    // connection's task would otherwise reserve as well (its future is sized for its largest
    // state), and a connection holding a push stream lives for minutes.
    let connection = Connection {
        stream,
        sender,
        slot,
        http,
        timeouts,
        stop,
    };
    Box::pin(serve_tls(connection, app, tls)).await;
}

/// What serving a connection needs besides the application and its TLS configuration.
struct Connection {
    stream: TcpStream,
    sender: Option<Sender>,
    slot: Arc<Slot>,
    http: http1::Builder,
    timeouts: Timeouts,
    stop: watch::Receiver<()>,
}

/// [`serve_connection`] over TLS: the handshake, then HTTP/1.1 on the encrypted stream.
async fn serve_tls<S>(
    connection: Connection,
    app: S,
    (tls, refusals): (
        Arc<rustls::ServerConfig>,
        Arc<parking_lot::Mutex<LogBudget>>,
    ),
) where
    S: Service<Request, Response = Response, Error = Infallible> + AnswersAtOnce,
    S: Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let Connection {
        stream,
        sender,
        slot,
        http,
        timeouts,
        stop,
    } = connection;
    // The handshake is a wait for the client like a request head's: under the same deadline,
    // and the connection can be closed for room meanwhile.
    slot.examined();
    let Some(stream) = handshake(stream, tls, &slot, stop.clone()).await else {
        return;
    };
    let stream = match stream {
        Ok(stream) => stream,
        Err(error) => return refused_handshake(&error, sender.as_ref(), &refusals),
    };
    let certificate = stream
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|chain| chain.first())
        .map(|leaf| ClientCertificate(Arc::new(heureka_tls::certificate_names(leaf))));
    let service = Exchange::new(app, &slot, timeouts, sender, certificate, &stop);
    serve_http(TokioIo::new(stream), service, slot, http, timeouts, stop).await;
}

/// The TLS handshake of a new connection, within the connection's wait for its first request
/// head; `None` if it timed out, the connection was closed for room, or the server is
/// stopping, else how it ended.
async fn handshake(
    stream: TcpStream,
    tls: Arc<rustls::ServerConfig>,
    slot: &Slot,
    mut stop: watch::Receiver<()>,
) -> Option<std::io::Result<tokio_rustls::server::TlsStream<TcpStream>>> {
    let mut accepting = pin!(tokio_rustls::TlsAcceptor::from(tls).accept(stream));
    loop {
        let Deadline::Waiting(deadline) = slot.deadline(clock::instant()) else {
            return None;
        };
        tokio::select! {
            biased;
            accepted = accepting.as_mut() => return Some(accepted),
            () = sleep_until(deadline) => {}
            () = slot.wake.notified() => {}
            _ = stop.changed() => return None,
        }
    }
}

/// A failed handshake: when the server refused it (a client certificate it does not accept, a
/// client that does not speak TLS…), a WARN naming the client's address and the reason in
/// plain words, within the budget; Tomcat logs nothing and the client is told only an alert
/// such as `certificate_unknown`. A client that closed or reset the connection mid-handshake
/// (a port probe, a load balancer's check) was refused nothing: debug only.
fn refused_handshake(
    error: &std::io::Error,
    sender: Option<&Sender>,
    budget: &parking_lot::Mutex<LogBudget>,
) {
    let Some(reason) = heureka_tls::explain_refusal(error) else {
        tracing::debug!(%error, "TLS handshake ended by the client");
        return;
    };
    if let Some(suppressed) = budget.lock().take(clock::instant()) {
        tracing::warn!(
            client = %sender.map_or_else(|| "unknown".to_owned(), |sender| sender.0.to_string()),
            %reason,
            suppressed,
            "refused a TLS handshake"
        );
    }
}

/// HTTP/1.1 on one connection (plain or TLS) until it ends.
async fn serve_http<S, I>(
    io: TokioIo<I>,
    service: Exchange<S>,
    slot: Arc<Slot>,
    http: http1::Builder,
    timeouts: Timeouts,
    mut stop: watch::Receiver<()>,
) where
    S: Service<Request, Response = Response, Error = Infallible> + AnswersAtOnce,
    S: Clone + Send + 'static,
    S::Future: Send + 'static,
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let mut connection = pin!(http.serve_connection(io, service));
    // One poll reads whatever the client has sent: a complete head makes the connection busy.
    let first = std::future::poll_fn(|cx| Poll::Ready(connection.as_mut().poll(cx))).await;
    if first.is_ready() {
        return;
    }
    slot.examined();
    // The task looks at its phase only when its timer fires, when it is told to close, and on
    // shutdown; a request beginning or ending does not wake it. That is sound because a wait's
    // deadline is never earlier than the timer: a busy connection's next wait begins after now
    // and lasts `keep-alive-timeout`, so a timer set that far ahead finds it (or finds it busy
    // again). Heartbeats on a kept-alive connection thus cost no wake-up and no timer.
    let mut timer = pin!(sleep_until(clock::instant()));
    let mut stopping = false;
    let waits = wait::OtherWaits::new();
    loop {
        let now = clock::instant();
        let check_at = match slot.deadline(now) {
            Deadline::CloseNow => return,
            // At shutdown a connection between requests has nothing in progress to finish:
            // neither an idle one nor one that has sent part of a head.
            Deadline::Waiting(_) if stopping => return,
            Deadline::Stalled => {
                tracing::info!(
                    "closing an event stream whose client has stopped reading \
                     (heureka.events.send-timeout)"
                );
                return;
            }
            Deadline::Waiting(deadline) | Deadline::Streaming(deadline) => deadline,
            Deadline::Busy => now + timeouts.keep_alive,
        };
        timer.as_mut().reset(check_at);
        let told = pin!(slot.wake.notified());
        let already_stopping = stopping;
        let stop_changed = pin!(async {
            if already_stopping {
                std::future::pending::<()>().await;
            }
            let _ = stop.changed().await;
        });
        let (waiting, timer) = (connection.as_mut(), timer.as_mut());
        match wait::first_of(&waits, waiting, timer, told, stop_changed).await {
            Woke::Ended(result) => {
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended");
                }
                return;
            }
            Woke::Look => {}
            Woke::Stopping => {
                stopping = true;
                connection.as_mut().graceful_shutdown();
            }
        }
    }
}

/// The hyper service of one connection: marks the connection busy for each request, offers a
/// bodiless one to be answered at once ([`AnswersAtOnce`]), else bounds the time its body may
/// take and tags it with its sender, and hands back a body that marks the end of the exchange.
#[derive(Debug)]
struct Exchange<S> {
    app: S,
    slot: Arc<Slot>,
    timeouts: Timeouts,
    sender: Option<Sender>,
    certificate: Option<ClientCertificate>,
    /// Changes at shutdown: ends the connection's event stream, if it has one.
    stopped: watch::Receiver<()>,
}

impl<S> Exchange<S> {
    fn new(
        app: S,
        slot: &Arc<Slot>,
        timeouts: Timeouts,
        sender: Option<Sender>,
        certificate: Option<ClientCertificate>,
        stopped: &watch::Receiver<()>,
    ) -> Exchange<S> {
        Exchange {
            app,
            slot: Arc::clone(slot),
            timeouts,
            sender,
            certificate,
            stopped: stopped.clone(),
        }
    }
}

impl<S> hyper::service::Service<http::Request<Incoming>> for Exchange<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + AnswersAtOnce,
    S: Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = http::Response<ExchangeBody>;
    type Error = Infallible;
    type Future = Exchanged;

    fn call(&self, request: http::Request<Incoming>) -> Exchanged {
        self.slot.begin_request();
        // A request without a body (a heartbeat, a fetch) has nothing left to wait for from
        // the client, so it needs no timer.
        let bodiless = request.body().is_end_stream();
        if bodiless {
            if let Some(response) = self.app.answer_at_once(&request) {
                let slot = Arc::clone(&self.slot);
                let keep_alive = self.timeouts.keep_alive;
                return Exchanged::Now(Some(response.map(|body| ExchangeBody {
                    body,
                    slot,
                    keep_alive,
                    stream: None,
                })));
            }
        }
        let app = self.app.clone();
        let slot = Arc::clone(&self.slot);
        let timeouts = self.timeouts;
        let mut stopped = self.stopped.clone();
        let sender = self.sender;
        let certificate = self.certificate.clone();
        Exchanged::Later(Box::pin(async move {
            let mut request = request.map(Body::new);
            if let Some(sender) = sender {
                request.extensions_mut().insert(sender);
            }
            if let Some(certificate) = certificate {
                request.extensions_mut().insert(certificate);
            }
            // The handler reads the body, so bounding the handler bounds the body; a trickle
            // of bytes does not reset it.
            let handled = if bodiless {
                Ok(app.oneshot(request).await)
            } else {
                tokio::time::timeout(timeouts.request_body, app.oneshot(request)).await
            };
            let response = match handled {
                Ok(Ok(response)) => response,
                Ok(Err(never)) => match never {},
                Err(_elapsed) => ApiError::RequestTimeout(format!(
                    "request not received in full within {:?}",
                    timeouts.request_body
                ))
                .into_response(),
            };
            let stream = response
                .extensions()
                .get::<EventStreamLimits>()
                .copied()
                .map(|limits| {
                    slot.begin_stream(limits.stall_after);
                    let end: EndOfStream = Box::pin(async move {
                        tokio::select! {
                            _ = stopped.changed() => {}
                            () = sleep(limits.max_age) => {}
                        }
                    });
                    StreamWatch {
                        stall_after: limits.stall_after,
                        end: Some(end),
                    }
                });
            Ok(response.map(|body| ExchangeBody {
                body,
                slot,
                keep_alive: timeouts.keep_alive,
                stream,
            }))
        }))
    }
}

/// An exchange's answer: given at once ([`AnswersAtOnce`]), or under way.
enum Exchanged {
    /// `None` once taken.
    Now(Option<http::Response<ExchangeBody>>),
    Later(Pin<Box<dyn Future<Output = Result<http::Response<ExchangeBody>, Infallible>> + Send>>),
}

impl Future for Exchanged {
    type Output = Result<http::Response<ExchangeBody>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Exchanged::Now(response) => Poll::Ready(Ok(response
                .take()
                .expect("an exchange answered at once is polled once"))),
            Exchanged::Later(future) => future.as_mut().poll(cx),
        }
    }
}

/// A response body that, once hyper has taken all of it (and drops it), starts the
/// connection's wait for its next request head.
#[derive(Debug)]
struct ExchangeBody {
    body: Body,
    slot: Arc<Slot>,
    keep_alive: Duration,
    /// Set when the body is an event stream.
    stream: Option<StreamWatch>,
}

/// Completes when an event stream should end: at shutdown, or at its maximum age.
type EndOfStream = Pin<Box<dyn Future<Output = ()> + Send>>;

/// What the body of an event stream tells the connection, and when it ends.
struct StreamWatch {
    stall_after: Duration,
    /// `None` once the stream has ended.
    end: Option<EndOfStream>,
}

impl std::fmt::Debug for StreamWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamWatch")
            .field("stall_after", &self.stall_after)
            .field("ended", &self.end.is_none())
            .finish()
    }
}

impl HttpBody for ExchangeBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if let Some(watch) = &mut this.stream {
            // Ending the body, rather than dropping the connection, sends the last chunk: the
            // client sees the stream end cleanly and reconnects.
            let Some(end) = &mut watch.end else {
                return Poll::Ready(None);
            };
            if end.as_mut().poll(cx).is_ready() {
                watch.end = None;
                return Poll::Ready(None);
            }
            // Hyper asks for more only when it has room to write: the client is reading.
            this.slot.stream_polled(watch.stall_after);
        }
        Pin::new(&mut this.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        let ended = self
            .stream
            .as_ref()
            .is_some_and(|watch| watch.end.is_none());
        ended || self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for ExchangeBody {
    fn drop(&mut self) {
        self.slot.end_response(self.keep_alive);
    }
}

/// A warning that repeats under load is logged at most once a minute, with how many times it
/// happened since.
#[derive(Debug, Default)]
struct Throttle {
    last: Option<Instant>,
    times: u64,
}

impl Throttle {
    fn hit(&mut self) -> Option<u64> {
        self.times += 1;
        let now = clock::instant();
        if self
            .last
            .is_some_and(|last| now - last < Duration::from_secs(60))
        {
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.times))
    }
}
