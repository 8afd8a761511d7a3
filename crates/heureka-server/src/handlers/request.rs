//! What handlers read from a request beyond axum's extractors: the headers moved rather than
//! copied, the sender's address, the query string read in place, and the parameters Eureka
//! defines (`lastDirtyTimestamp`, a status), each refused with Eureka's meaning when malformed.

use std::borrow::Cow;
use std::convert::Infallible;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, Uri};
use heureka_core::{InstanceStatus, Millis};

use crate::http::error::ApiError;
use crate::namespaces::InNamespace;
use crate::state::SharedState;

/// The state of the request's namespace: the one `dispatch.rs` put in the request,
/// else the router's own, the default namespace's (which a request to it finds at no cost).
pub(crate) struct Ns(pub(crate) SharedState);

impl FromRequestParts<SharedState> for Ns {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &SharedState) -> Result<Ns, Infallible> {
        Ok(Ns(InNamespace::of(&parts.extensions)
            .unwrap_or(state)
            .clone()))
    }
}

/// The request's headers, moved out of the request instead of copied (axum's `HeaderMap`
/// extractor clones the map, an allocation per request on the heartbeat path). Handlers take
/// it after every other parts extractor; nothing after it reads headers.
#[derive(Debug)]
pub(crate) struct Headers(pub(crate) HeaderMap);

impl<S: Send + Sync> FromRequestParts<S> for Headers {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Headers, Infallible> {
        Ok(Headers(std::mem::take(&mut parts.headers)))
    }
}

/// The address the request came from, when it crossed a socket (`connection::Sender`): peer
/// batches are traced to their sender.
#[derive(Debug)]
pub(crate) struct SenderAddress(pub(crate) Option<std::net::SocketAddr>);

impl<S: Send + Sync> FromRequestParts<S> for SenderAddress {
    type Rejection = Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        _state: &S,
    ) -> Result<SenderAddress, Infallible> {
        Ok(SenderAddress(
            parts
                .extensions
                .get::<crate::connection::Sender>()
                .map(|sender| sender.0),
        ))
    }
}

impl std::fmt::Display for SenderAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(address) => address.ip().fmt(f),
            None => f.write_str("unknown"),
        }
    }
}

/// The query string, read in place: the same pairs, decoded the same way, as axum's
/// `Query<Vec<(String, String)>>` (both use `form_urlencoded`), without building a `Vec` and a
/// `String` per name and value on every heartbeat. Keeps the URI (a reference count, no copy).
#[derive(Debug)]
pub(crate) struct QueryParams(Uri);

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<QueryParams, Infallible> {
        Ok(QueryParams(parts.uri.clone()))
    }
}

impl QueryParams {
    /// Every pair, in order, percent-decoded.
    pub(crate) fn pairs(&self) -> form_urlencoded::Parse<'_> {
        form_urlencoded::parse(self.0.query().unwrap_or_default().as_bytes())
    }

    /// The first value of `key` (Eureka's `getFirst`), percent-decoded.
    pub(crate) fn first(&self, key: &str) -> Option<Cow<'_, str>> {
        form_urlencoded::parse(self.0.query()?.as_bytes())
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
    }
}

/// Query parameters in order, first value per key (Eureka's `getFirst`).
pub(crate) fn first<'a>(query: &'a [(String, String)], key: &str) -> Option<&'a str> {
    query
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.as_str())
}

/// `lastDirtyTimestamp` must be a number when present; Eureka would throw a 500 here.
pub(crate) fn last_dirty_timestamp(query: &[(String, String)]) -> Result<Option<Millis>, ApiError> {
    parse_last_dirty_timestamp(first(query, "lastDirtyTimestamp"))
}

/// The value of a `lastDirtyTimestamp` parameter, if one was given.
pub(crate) fn parse_last_dirty_timestamp(value: Option<&str>) -> Result<Option<Millis>, ApiError> {
    match value {
        None | Some("") => Ok(None),
        Some(value) => value.trim().parse().map(Some).map_err(|_| {
            ApiError::BadRequest(format!(
                "lastDirtyTimestamp '{value}' is not a number of milliseconds"
            ))
        }),
    }
}

/// A status named in a query parameter: exact enum names only, as Eureka's `valueOf`.
pub(crate) fn status_param(name: &str, value: &str) -> Result<InstanceStatus, ApiError> {
    InstanceStatus::from_name(value).ok_or_else(|| {
        ApiError::BadRequest(format!(
            "{name} '{value}' is not one of UP, DOWN, STARTING, OUT_OF_SERVICE, UNKNOWN"
        ))
    })
}
