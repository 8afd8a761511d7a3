//! Registry reads: full fetch, delta, one application, VIP selections.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use heureka_core::Applications;
use heureka_wire::Format;

use crate::cache::Document;
use crate::handlers::document;
use crate::http::error::ApiError;
use crate::http::negotiate;
use crate::state::SharedState;

/// `GET {base}/apps`: the whole registry. The `regions` parameter is accepted and, with no
/// remote regions configured, changes nothing (as in Eureka).
pub(crate) async fn all(State(state): State<SharedState>, headers: HeaderMap) -> Response {
    cached(&state, &headers, Document::AllApps)
}

/// `GET {base}/apps/delta`: what changed within the retention window.
pub(crate) async fn delta(
    State(state): State<SharedState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if state.settings.disable_delta {
        return Err(ApiError::Forbidden);
    }
    Ok(cached(&state, &headers, Document::Delta))
}

/// `GET {base}/apps/{app}`: one application, 404 when it has no instances.
pub(crate) async fn one(
    State(state): State<SharedState>,
    Path(app): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let format = negotiate::collection_format(&headers);
    let application = state
        .registry
        .lock()
        .application(&app)
        .ok_or(ApiError::NotFound)?;
    Ok(document(
        format,
        heureka_wire::encode_application(&application, format),
    ))
}

/// `GET {base}/vips/{vip}`: instances whose `vipAddress` lists `vip`; never 404.
pub(crate) async fn vip(
    State(state): State<SharedState>,
    Path(vip): Path<String>,
    headers: HeaderMap,
) -> Response {
    let selection = state.registry.lock().vip(&vip, false);
    encode_now(&selection, &headers)
}

/// `GET {base}/svips/{svip}`: the same for `secureVipAddress`.
pub(crate) async fn svip(
    State(state): State<SharedState>,
    Path(svip): Path<String>,
    headers: HeaderMap,
) -> Response {
    let selection = state.registry.lock().vip(&svip, true);
    encode_now(&selection, &headers)
}

fn encode_now(applications: &Applications, headers: &HeaderMap) -> Response {
    let format = negotiate::collection_format(headers);
    document(
        format,
        heureka_wire::encode_applications(applications, format),
    )
}

/// Serves a full or delta document from the cache, encoding it first if the registry moved on.
fn cached(state: &SharedState, headers: &HeaderMap, which: Document) -> Response {
    let format = negotiate::collection_format(headers);
    let version = state.registry.lock().version();
    let encoded = match state.cache.get(which, format, version) {
        Some(encoded) => encoded,
        None => {
            // Copy the document out under the lock, encode outside it.
            let (version, snapshot) = {
                let registry = state.registry.lock();
                let snapshot = match which {
                    Document::AllApps => registry.applications(),
                    Document::Delta => registry.delta(),
                };
                (registry.version(), snapshot)
            };
            let body = heureka_wire::encode_applications(&snapshot, format);
            state.cache.put(which, format, version, body)
        }
    };
    if negotiate::accepts_gzip(headers) {
        gzipped(format, encoded.gzipped())
    } else {
        document(format, encoded.body.clone())
    }
}

fn gzipped(format: Format, body: bytes::Bytes) -> Response {
    let mut response = document(format, body);
    response
        .headers_mut()
        .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    response.into_response()
}
