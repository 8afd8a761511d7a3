//! Registry reads: full fetch, delta, one application, VIP selections.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::Response;
use heureka_core::Applications;

use crate::cache::Encoding;
use crate::handlers::{document, Headers};
use crate::http::error::ApiError;
use crate::http::negotiate;
use crate::state::SharedState;

/// `GET {base}/apps`: the whole registry. The `regions` parameter is accepted and, with no
/// remote regions configured, changes nothing (as in Eureka).
pub(crate) async fn all(
    State(state): State<SharedState>,
    Headers(headers): Headers,
) -> Result<Response, ApiError> {
    ready(&state)?;
    Ok(cached(&state, &headers, Document::AllApps))
}

/// Registry reads answer 403 until the start-up sync is done, as Eureka's do while
/// `shouldAllowAccess` is false: a client then asks another server (§6.10). Writes and
/// single-instance reads are always served.
fn ready(state: &SharedState) -> Result<(), ApiError> {
    if state.is_ready() {
        Ok(())
    } else {
        Err(ApiError::Forbidden)
    }
}

/// `GET {base}/apps/delta`: what changed within the retention window.
pub(crate) async fn delta(
    State(state): State<SharedState>,
    Headers(headers): Headers,
) -> Result<Response, ApiError> {
    ready(&state)?;
    if state.settings.disable_delta {
        return Err(ApiError::Forbidden);
    }
    Ok(cached(&state, &headers, Document::Delta))
}

/// `GET {base}/apps/{app}`: one application, 404 when it has no instances.
pub(crate) async fn one(
    State(state): State<SharedState>,
    Path(app): Path<String>,
    Headers(headers): Headers,
) -> Result<Response, ApiError> {
    ready(&state)?;
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
    Headers(headers): Headers,
) -> Result<Response, ApiError> {
    ready(&state)?;
    let selection = state.registry.lock().vip(&vip, false);
    Ok(encode_now(&selection, &headers))
}

/// `GET {base}/svips/{svip}`: the same for `secureVipAddress`.
pub(crate) async fn svip(
    State(state): State<SharedState>,
    Path(svip): Path<String>,
    Headers(headers): Headers,
) -> Result<Response, ApiError> {
    ready(&state)?;
    let selection = state.registry.lock().vip(&svip, true);
    Ok(encode_now(&selection, &headers))
}

fn encode_now(applications: &Applications, headers: &HeaderMap) -> Response {
    let format = negotiate::collection_format(headers);
    document(
        format,
        heureka_wire::encode_applications(applications, format),
    )
}

/// Serves a full or delta document from its cache, gzipped when the client accepts it.
fn cached(state: &SharedState, headers: &HeaderMap, which: Document) -> Response {
    let format = negotiate::collection_format(headers);
    let encoding = if negotiate::accepts_gzip(headers) {
        Encoding::Gzip
    } else {
        Encoding::Plain
    };
    let body = match which {
        Document::AllApps => state.full_fetch.get(&state.registry, format, encoding),
        Document::Delta => state.delta.get(&state.registry, format, encoding),
    };
    let mut response = Response::new(body.into_http_body());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    if encoding == Encoding::Gzip {
        response
            .headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

/// Which cached document.
#[derive(Clone, Copy, Debug)]
enum Document {
    /// `GET /apps`.
    AllApps,
    /// `GET /apps/delta`.
    Delta,
}
