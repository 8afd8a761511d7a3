//! The layer every request passes through on its way out: it times the request for the
//! metrics (by route template), logs requests the server rejected as malformed, and writes the
//! access log when it is on.
//!
//! Credentials never reach a log line: only the method, path, query, status and time are
//! written, never a header.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use crate::http::error::Rejection;
use crate::metrics::RequestLabels;
use crate::state::SharedState;

/// Middleware: see the module docs.
pub(crate) async fn observe(
    State(state): State<SharedState>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let method = method_label(request.method());
    // Set by the router once a route matched; absent for requests no route takes.
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_owned();
    let uri = request.uri().clone();
    let response = next.run(request).await;
    let elapsed = started.elapsed();
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
    if state.settings.access_log {
        tracing::info!(
            target: "heureka_server::access",
            method,
            uri = %uri,
            status = status.as_u16(),
            micros = elapsed.as_micros() as u64,
            "access"
        );
    }
    if state.settings.metrics_enabled {
        let labels = RequestLabels {
            method,
            route,
            status: status.as_u16(),
        };
        state.metrics.observe_request(&labels, elapsed);
    }
    response
}

/// Answers that say the request itself was wrong (bad body, too large, unknown encoding).
/// 401, 404 on a heartbeat and the like are logged where their meaning is known.
fn is_malformed(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::BAD_REQUEST
            | StatusCode::PAYLOAD_TOO_LARGE
            | StatusCode::UNSUPPORTED_MEDIA_TYPE
            | StatusCode::UNPROCESSABLE_ENTITY
    )
}

/// The method as a label: the methods of the API by name, anything else as `OTHER`, so that
/// invented methods cannot multiply the series.
fn method_label(method: &Method) -> &'static str {
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
