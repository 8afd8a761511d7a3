//! The layer every request passes through on its way out: it times the request for the
//! metrics (by route template), logs requests the server rejected as malformed, and writes the
//! access log when it is on.
//!
//! Credentials never reach a log line: only the method, path, query, status and time are
//! written, never a header.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use axum::extract::{MatchedPath, Request};
use axum::http::{Method, Uri};
use axum::response::Response;
use pin_project_lite::pin_project;
use tower::{Layer, Service};

use crate::clock;
use crate::http::error::{is_malformed, Rejection};
use crate::metrics::{KeptSeries, RequestLabels, RouteLabel};
use crate::state::SharedState;

/// The layer: see the module docs. A service of its own rather than `middleware::from_fn`,
/// which clones the inner service, boxes it and boxes its future on every request.
#[derive(Clone)]
pub(crate) struct ObserveLayer(pub(crate) SharedState);

impl<S> Layer<S> for ObserveLayer {
    type Service = Observe<S>;

    fn layer(&self, inner: S) -> Observe<S> {
        Observe {
            state: self.0.clone(),
            inner,
        }
    }
}

/// A request's URI as its client sent it, set where the dispatcher rewrote the path (a
/// namespace's `{prefix}/{name}` taken off), so that log lines name the namespace, as the fast
/// lane's do.
#[derive(Clone, Debug)]
pub(crate) struct AsSent(pub(crate) Uri);

#[derive(Clone)]
pub(crate) struct Observe<S> {
    state: SharedState,
    inner: S,
}

impl<S> Service<Request> for Observe<S>
where
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Observed<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let started = clock::instant();
        let method = method_label(request.method());
        // Set by the router once a route matched; absent for requests no route takes.
        let route = request
            .extensions()
            .get::<MatchedPath>()
            .map_or(RouteLabel::Unmatched, |path| {
                RouteLabel::Matched(path.clone())
            });
        // Shares the request's bytes; only a log line reads it. A namespaced request's path
        // lost its namespace on the way in: the log shows the one the client sent.
        let uri = request
            .extensions()
            .get::<AsSent>()
            .map_or_else(|| request.uri().clone(), |sent| sent.0.clone());
        Observed {
            inner: self.inner.call(request),
            request: Some(Observing {
                state: self.state.clone(),
                started,
                method,
                route,
                uri,
            }),
        }
    }
}

pin_project! {
    /// The inner service's answer, observed as it comes.
    pub(crate) struct Observed<F> {
        #[pin]
        inner: F,
        request: Option<Observing>,
    }
}

/// What is known of a request before it is answered.
struct Observing {
    state: SharedState,
    started: clock::Instant,
    method: &'static str,
    route: RouteLabel,
    uri: Uri,
}

impl<F, E> Future for Observed<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let result = ready!(this.inner.poll(cx));
        if let (Ok(response), Some(request)) = (&result, this.request.take()) {
            request.answered(response);
        }
        Poll::Ready(result)
    }
}

impl Observing {
    fn answered(self, response: &Response) {
        let Observing {
            state,
            started,
            method,
            route,
            uri,
        } = self;
        answered(
            &state,
            started,
            Series::Labels(method, route),
            &uri,
            response,
        );
    }
}

/// The metrics series an answered request counts in.
pub(crate) enum Series<'k> {
    /// Its method and route, with the answer's status.
    Labels(&'static str, RouteLabel),
    /// A series kept by the caller, whose labels (status included) are the answer's.
    Kept(&'k KeptSeries),
}

/// Observes an answered request: the rejection's log line, the access log, the metrics. The
/// fast lane (`fast_lane.rs`) observes the heartbeats it answers here too.
pub(crate) fn answered(
    state: &SharedState,
    started: clock::Instant,
    series: Series<'_>,
    uri: &Uri,
    response: &Response,
) {
    let method = match &series {
        Series::Labels(method, _) => *method,
        Series::Kept(kept) => kept.labels().method,
    };
    let elapsed = clock::instant().saturating_duration_since(started);
    let status = response.status();
    if is_malformed(status) {
        let reason = response
            .extensions()
            .get::<Rejection>()
            .map_or("", |rejection| rejection.0.as_str());
        tracing::warn!(
            method,
            path = uri.path(),
            status = status.as_u16(),
            reason,
            "rejected request"
        );
    }
    if state.observe.access_log {
        tracing::info!(
            target: "heureka_server::access",
            method,
            uri = %uri,
            status = status.as_u16(),
            micros = elapsed.as_micros() as u64,
            "access"
        );
    }
    if !state.observe.metrics_enabled {
        return;
    }
    match series {
        Series::Labels(method, route) => {
            let labels = RequestLabels {
                method,
                route,
                status: status.as_u16(),
            };
            state.observe.metrics.observe_request(&labels, elapsed);
        }
        Series::Kept(kept) => state.observe.metrics.observe_kept(kept, elapsed),
    }
}

/// The method as a label: the methods of the API by name, anything else as `OTHER`, so that
/// invented methods cannot multiply the series.
pub(crate) fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}
