//! Request handlers: extract, call the registry under a short lock, map the outcome.
//!
//! Protocol decisions live in `heureka-core`; a handler only translates between HTTP and the
//! registry's calls and outcomes.

pub(crate) mod actuator;
pub(crate) mod apps;
pub(crate) mod consumers;
pub(crate) mod dashboard;
pub(crate) mod events;
pub(crate) mod health_checks;
pub(crate) mod instances;
pub(crate) mod overrides;
pub(crate) mod replication;
pub(crate) mod stamped;
pub(crate) mod status;

use std::borrow::Cow;
use std::convert::Infallible;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use heureka_core::{instance_write_status_code, InstanceStatus, Millis};
use heureka_wire::Format;

use crate::http::error::ApiError;

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
    /// The first value of `key` (Eureka's `getFirst`), percent-decoded.
    pub(crate) fn first(&self, key: &str) -> Option<Cow<'_, str>> {
        form_urlencoded::parse(self.0.query()?.as_bytes())
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
    }
}

/// Whether a write is a peer's replica or a client's, by its replication header.
pub(crate) use crate::http::origin::origin;

/// A 200 response carrying an encoded document.
pub(crate) fn document(format: Format, body: impl Into<Bytes>) -> Response {
    let mut response = (StatusCode::OK, body.into()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    response
}

/// The REST answer to a write, from the status code core gives its outcome
/// (`RenewOutcome::status_code`, `instance_write_status_code`): 200 or 404 here, since the one
/// 409 carries a document and `instances::renew` answers it itself.
pub(crate) fn written(status_code: u16) -> Result<StatusCode, ApiError> {
    // Core's code for a write of an instance it does not hold; a heartbeat's 404 is the same.
    if status_code == instance_write_status_code(false) {
        return Err(ApiError::NotFound);
    }
    debug_assert_eq!(
        status_code,
        instance_write_status_code(true),
        "a write answered with a document"
    );
    Ok(StatusCode::OK)
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

/// A JSON body of Heureka's own documents (dashboard, health checks, consumers).
pub(crate) fn json(body: Vec<u8>) -> Response {
    let mut response = body.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
