//! `ApiError`: every way a request can fail, and the one place that maps them to status codes.
//!
//! Handlers, the listener, authentication and the decompression layer all refuse through it.
//! The integers inside a peer batch's answer are not HTTP statuses of this response: they come
//! from core's outcome mapping (`RenewOutcome::status_code`, `instance_write_status_code`).
//!
//! Eureka answers most failures with an empty body; where we add a body it is one line of
//! plain text saying why, so a human with `curl` learns what to fix. Real clients ignore it.

use axum::extract::rejection::BytesRejection;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use heureka_core::InvalidRegistration;

use crate::replication::STARTING_HEADER;

#[derive(Debug)]
pub(crate) enum ApiError {
    /// Unknown app or instance. Eureka sends no body.
    NotFound,
    /// An endpoint this node does not serve as configured: 404, as for a server without it,
    /// with the reason.
    NotServed(String),
    /// Malformed or invalid input; the reason is sent as the body.
    BadRequest(String),
    /// A new instance while the registry holds `heureka.limits.max-instances`: 403 with the
    /// reason, since the request is well-formed and only this node's capacity refuses it.
    RegistryFull(String),
    /// Eureka's answer to a delta fetch while deltas are disabled.
    Forbidden,
    /// A registry read before the start-up sync is done: 403 as Eureka answers it, marked
    /// with [`STARTING_HEADER`] so that a Heureka peer in its own start-up sync can tell this
    /// node is starting too (a Java server's 403 carries no such mark).
    Starting,
    /// A read naming `regions=` before every remote region's first successful fetch: 403, as
    /// Eureka answers it, with the regions still starting as the reason.
    RegionsStarting(String),
    /// A write a browser sent from another site's page (`http/cross_site.rs`): 403 with the
    /// reason.
    CrossSite(String),
    /// Missing or wrong credentials while authentication is on.
    Unauthorized,
    /// An authenticated request beyond its user's roles (`security/roles.rs`): 403 with the
    /// reason, naming the user, its roles and the role needed.
    NotPermitted(String),
    /// Replication from a sender that is not a peer (`http/peers_only.rs`); the reason says
    /// who and which key decides.
    NotAPeer(String),
    /// A body in a format neither codec reads.
    UnsupportedMediaType(String),
    /// A body in a `Content-Encoding` we do not decode (only `gzip` and `identity` pass):
    /// 415 with `Accept-Encoding: gzip` and no body, as tower-http's decoder answers.
    UnsupportedContentEncoding,
    /// The body could not be read: 413 when it exceeds the limit (after decompression, so a
    /// small gzip bomb too), 400 when its stream fails (a corrupt gzip). Answered in axum's
    /// own words, as before the handlers took the rejection themselves.
    BodyNotRead(BytesRejection),
    /// A peer's heartbeat older than our copy: the response carries our copy (Eureka's 409).
    Conflict(Box<Response>),
    /// A client's registration of an id whose live lease is at another endpoint, while
    /// `heureka.refuse-takeovers` is on: 409 with the reason.
    TakeoverRefused(String),
    /// A registry fetch over Eureka's rate limiter while it is enabled (`http/rate_limit.rs`):
    /// 503, as Eureka answers it; clients retry on another server or later.
    Throttled(String),
    /// The request body did not arrive in time; the connection is closed after the answer.
    RequestTimeout(String),
    /// An event or push stream over its budget (`heureka.events.max-streams*`,
    /// `heureka.push.max-subscribers*`): 429 with
    /// `Retry-After`, and the connection closed, so a refused attempt holds no connection.
    TooManyStreams(String),
}

/// The `Retry-After` of a refused event stream, in seconds: streams end within a keep-alive
/// interval of their client leaving, so room is usually back by then.
const STREAMS_RETRY_AFTER_SECONDS: &str = "10";

/// A register body that fails Eureka's checks is a 400 with Eureka's message, and so is one
/// over a limit on its contents; a full registry is a 403.
impl From<InvalidRegistration> for ApiError {
    fn from(invalid: InvalidRegistration) -> ApiError {
        match invalid {
            InvalidRegistration::RegistryFull { .. } => ApiError::RegistryFull(invalid.to_string()),
            _ => ApiError::BadRequest(invalid.to_string()),
        }
    }
}

impl From<BytesRejection> for ApiError {
    fn from(rejection: BytesRejection) -> ApiError {
        ApiError::BodyNotRead(rejection)
    }
}

/// The one-line reason of a rejected request, carried on the response for the log line the
/// observing layer writes (`http/observe.rs`).
#[derive(Clone, Debug)]
pub(crate) struct Rejection(pub(crate) String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            ApiError::NotFound => StatusCode::NOT_FOUND.into_response(),
            ApiError::NotServed(reason) => plain(StatusCode::NOT_FOUND, reason),
            ApiError::Forbidden => StatusCode::FORBIDDEN.into_response(),
            ApiError::RegionsStarting(reason) => plain(StatusCode::FORBIDDEN, reason),
            ApiError::Starting => {
                let mut response = plain(
                    StatusCode::FORBIDDEN,
                    "not serving reads yet: the start-up sync from the peers is running".to_owned(),
                );
                response
                    .headers_mut()
                    .insert(STARTING_HEADER, HeaderValue::from_static("true"));
                response
            }
            ApiError::Conflict(ours) => {
                let mut ours = *ours;
                *ours.status_mut() = StatusCode::CONFLICT;
                ours
            }
            ApiError::BadRequest(reason) => plain(StatusCode::BAD_REQUEST, reason),
            ApiError::TakeoverRefused(reason) => plain(StatusCode::CONFLICT, reason),
            ApiError::RegistryFull(reason) => plain(StatusCode::FORBIDDEN, reason),
            ApiError::Throttled(reason) => plain(StatusCode::SERVICE_UNAVAILABLE, reason),
            ApiError::NotAPeer(reason) => plain(StatusCode::FORBIDDEN, reason),
            ApiError::CrossSite(reason) => plain(StatusCode::FORBIDDEN, reason),
            ApiError::NotPermitted(reason) => plain(StatusCode::FORBIDDEN, reason),
            ApiError::UnsupportedMediaType(reason) => {
                plain(StatusCode::UNSUPPORTED_MEDIA_TYPE, reason)
            }
            ApiError::UnsupportedContentEncoding => {
                let mut response = StatusCode::UNSUPPORTED_MEDIA_TYPE.into_response();
                response
                    .headers_mut()
                    .insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
                response
            }
            ApiError::BodyNotRead(rejection) => rejection.into_response(),
            ApiError::RequestTimeout(reason) => {
                let mut response = plain(StatusCode::REQUEST_TIMEOUT, reason);
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
                response
            }
            ApiError::TooManyStreams(reason) => {
                let mut response = plain(StatusCode::TOO_MANY_REQUESTS, reason);
                let headers = response.headers_mut();
                headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
                headers.insert(
                    header::RETRY_AFTER,
                    HeaderValue::from_static(STREAMS_RETRY_AFTER_SECONDS),
                );
                response
            }
            ApiError::Unauthorized => {
                let mut response = plain(
                    StatusCode::UNAUTHORIZED,
                    "authentication required".to_owned(),
                );
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"heureka\""),
                );
                response
            }
        }
    }
}

fn plain(status: StatusCode, reason: String) -> Response {
    let rejection = Rejection(reason.clone());
    let mut response = (status, reason).into_response();
    response.extensions_mut().insert(rejection);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// Answers that say the request itself was wrong (bad body, too large, unknown encoding).
/// 401, 404 on a heartbeat and the like are logged where their meaning is known.
pub(crate) fn is_malformed(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::BAD_REQUEST
            | StatusCode::PAYLOAD_TOO_LARGE
            | StatusCode::UNSUPPORTED_MEDIA_TYPE
            | StatusCode::UNPROCESSABLE_ENTITY
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_content_encoding_is_415_naming_gzip_with_no_body() {
        let response = ApiError::UnsupportedContentEncoding.into_response();
        assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(response.headers()[header::ACCEPT_ENCODING], "gzip");
        assert!(response.headers().get(header::CONTENT_TYPE).is_none());
    }

    #[test]
    fn a_conflict_is_409_carrying_our_copy() {
        let ours = (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/xml")],
            "<instance/>",
        )
            .into_response();
        let response = ApiError::Conflict(Box::new(ours)).into_response();
        assert_eq!(response.status(), StatusCode::CONFLICT);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/xml");
    }

    #[test]
    fn a_full_registry_is_403_with_its_reason() {
        let error = ApiError::from(heureka_core::InvalidRegistration::RegistryFull { max: 3 });
        let response = error.into_response();
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
    }

    #[test]
    fn a_registration_over_a_content_limit_is_400() {
        let error = ApiError::from(heureka_core::InvalidRegistration::NameTooLong {
            field: "appName",
            length: 9,
            max: 8,
        });
        assert!(matches!(error, ApiError::BadRequest(reason) if reason.starts_with("appName")));
    }

    #[test]
    fn an_invalid_registration_is_400_with_eurekas_message() {
        let error = ApiError::from(heureka_core::InvalidRegistration::MissingHostname);
        assert!(matches!(error, ApiError::BadRequest(reason) if reason == "Missing hostname"));
    }
}
