//! The answers handlers share: an encoded document, a JSON document of Heureka's own, and the
//! REST answer to a write from core's outcome.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use heureka_core::instance_write_status_code;
use heureka_wire::Format;

use crate::http::error::ApiError;

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

/// A JSON body of Heureka's own documents (dashboard, health checks, consumers).
pub(crate) fn json(body: Vec<u8>) -> Response {
    let mut response = body.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
