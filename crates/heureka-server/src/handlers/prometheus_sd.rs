//! `GET {base}/prometheus/sd`: Prometheus HTTP service discovery (`prometheus_sd/`,
//! `docs/prometheus-sd.md`), the `read` role like every registry read.
//!
//! A conditional request whose `If-None-Match` names the current answer's ETag is answered
//! 304 after one look at the registry version, without building or copying a body. A client
//! that accepts gzip gets the gzip body, with its own ETag (Prometheus does not ask for it).

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::apps::{off_the_worker, ready};
use super::request::{Headers, QueryParams};
use crate::handlers::request::Ns;
use crate::http::error::ApiError;
use crate::http::negotiate;
use crate::prometheus_sd::SdQuery;

/// `GET {base}/prometheus/sd[?app=…][&metadata.<key>=<value>][&scrape=true]`.
pub(crate) async fn targets(
    Ns(state): Ns,
    query: QueryParams,
    Headers(headers): Headers,
) -> Result<Response, ApiError> {
    let sd = &state.caches.prometheus_sd;
    if !sd.enabled() {
        return Err(ApiError::NotFound);
    }
    ready(&state)?;
    let query = SdQuery::parse(query.pairs()).map_err(ApiError::BadRequest)?;
    let gzip = negotiate::accepts_gzip(&headers);
    let etag = sd.etag(state.store.read().version(), &query, gzip);
    if already_held(&headers, &etag) {
        sd.answered_not_modified();
        state
            .observe
            .metrics
            .prometheus_sd_answer("not_modified", None);
        return Ok(with_etag(StatusCode::NOT_MODIFIED.into_response(), &etag));
    }
    let (answer, gzip_body) = {
        let state = state.clone();
        off_the_worker(move || {
            let answer = state.caches.prometheus_sd.answer(&state.store, &query);
            let gzip_body = gzip.then(|| answer.gzip_body());
            (answer, gzip_body)
        })
        .await
    };
    let (kind, targets) = if answer.built {
        ("built", Some(answer.targets))
    } else {
        ("reused", None)
    };
    state.observe.metrics.prometheus_sd_answer(kind, targets);
    let (mut response, etag) = match gzip_body {
        Some(body) => (Response::new(Body::from(body)), answer.gzip_etag),
        None => (Response::new(answer.body.into_http_body()), answer.etag),
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    // The plain and gzip bodies are two representations, with two ETags.
    headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    if gzip {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    Ok(with_etag(response, &etag))
}

/// Whether `If-None-Match` lists `etag` (or is `*`): the client holds the answer already.
/// The comparison is the weak one RFC 9110 asks of `If-None-Match`.
fn already_held(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|tag| tag.trim())
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

fn with_etag(mut response: Response, etag: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(etag) {
        response.headers_mut().insert(header::ETAG, value);
    }
    response
}
