//! HTTP Basic authentication for the whole API, on when `spring.security.user.*` is set.
//!
//! This is what Spring Security's default setup gives a Eureka server, and what clients with
//! `http://user:pass@host/eureka/` in their service URL send.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;

use crate::http::error::ApiError;
use crate::state::SharedState;

/// Middleware: lets the request through only with the configured credentials.
pub(crate) async fn require_basic_auth(
    State(state): State<SharedState>,
    request: Request,
    next: Next,
) -> Response {
    // The layer is only installed when credentials are configured.
    let Some(expected) = &state.settings.basic_auth_header else {
        return next.run(request).await;
    };
    let presented = request.headers().get(header::AUTHORIZATION);
    if presented
        .is_some_and(|presented| constant_time_eq(presented.as_bytes(), expected.as_bytes()))
    {
        return next.run(request).await;
    }
    // Spring Security logs failed authentication at debug only; an operator chasing a client
    // that cannot register needs to see it, so Heureka says which request and why, at INFO,
    // and never what was presented.
    let why = if presented.is_some() {
        "wrong credentials"
    } else {
        "no credentials"
    };
    tracing::info!(
        method = %request.method(),
        path = request.uri().path(),
        why,
        "rejected unauthenticated request (401)"
    );
    ApiError::Unauthorized.into_response()
}

/// Whether a request counts as authorized: authentication is off, or it presents the
/// configured credentials. For endpoints that answer everyone but show details only to
/// authorized callers (`/actuator/health`).
pub(crate) fn is_authorized(state: &SharedState, headers: &HeaderMap) -> bool {
    let Some(expected) = &state.settings.basic_auth_header else {
        return true;
    };
    headers
        .get(header::AUTHORIZATION)
        .is_some_and(|presented| constant_time_eq(presented.as_bytes(), expected.as_bytes()))
}

/// The exact `Authorization` header value that the credentials produce.
pub(crate) fn basic_auth_header(user: &str, password: &str) -> String {
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    format!("Basic {token}")
}

/// Compares without an early exit, so response time does not leak how much of a guess matched.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
