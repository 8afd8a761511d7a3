//! HTTP Basic authentication for the whole API, on when `spring.security.user.*` is set.
//!
//! This is what Spring Security's default setup gives a Eureka server, and what clients with
//! `http://user:pass@host/eureka/` in their service URL send; the header is read as Spring
//! Security reads it (`basic.rs`).

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::http::basic::Credentials;
use crate::http::error::ApiError;
use crate::http::principal::Principal;
use crate::state::SharedState;

/// Middleware: lets the request through only with the configured credentials.
pub(crate) async fn require_basic_auth(
    State(state): State<SharedState>,
    mut request: Request,
    next: Next,
) -> Response {
    if let Some(principal) = authenticate(&state, request.headers()) {
        request.extensions_mut().insert(principal);
        return next.run(request).await;
    }
    // Spring Security logs failed authentication at debug only; an operator chasing a client
    // that cannot register needs to see it, so Heureka says which request and why, at INFO,
    // and never what was presented.
    let why = if request.headers().contains_key(header::AUTHORIZATION) {
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
    crate::http::audit::credentials_refused(&state, &request);
    ApiError::Unauthorized.into_response()
}

/// Whether a request counts as authorized: authentication is off, or it presents the
/// configured credentials, or the peers' own (`heureka.replication.peer-user.*`: a peer may
/// do whatever a client may). Also for endpoints that answer everyone but show details only
/// to authorized callers (`/actuator/health`).
pub(crate) fn is_authorized(state: &SharedState, headers: &HeaderMap) -> bool {
    let settings = &state.settings;
    if settings.basic_auth_header.is_none() {
        return true;
    }
    let presented = headers.get(header::AUTHORIZATION);
    presents(&settings.basic_auth_header, presented)
        || presents(&settings.peer_auth_header, presented)
}

/// Who the request's credentials say it is: the configured user, or the peers' own; `None`
/// when authentication is on and they match neither.
fn authenticate(state: &SharedState, headers: &HeaderMap) -> Option<Principal> {
    let settings = &state.settings;
    let Some(user) = &settings.basic_auth_header else {
        return Some(Principal::Anonymous);
    };
    let presented = headers.get(header::AUTHORIZATION);
    if presents(&Some(user.clone()), presented) {
        let name = presented
            .and_then(|value| Credentials::from_header(value.as_bytes()))
            .map(|credentials| credentials.user().to_owned())
            .unwrap_or_default();
        return Some(Principal::User(name));
    }
    if presents(&settings.peer_auth_header, presented) {
        let name = presented
            .and_then(|value| Credentials::from_header(value.as_bytes()))
            .map(|credentials| credentials.user().to_owned())
            .unwrap_or_default();
        return Some(Principal::Peer(name));
    }
    None
}

/// Whether `presented` carries the credentials of `expected` (an `Authorization` value this
/// module encoded); never when none are expected.
pub(crate) fn presents(expected: &Option<String>, presented: Option<&HeaderValue>) -> bool {
    let Some(expected) = expected else {
        return false;
    };
    let presented = presented.and_then(|value| Credentials::from_header(value.as_bytes()));
    // The expected value is this module's own encoding, so it always parses.
    let expected = Credentials::from_header(expected.as_bytes());
    matches!((presented, expected), (Some(presented), Some(expected)) if presented.matches(&expected))
}
