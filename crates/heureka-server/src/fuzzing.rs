//! Entry points for the fuzz targets in `fuzz/`: the server's own request-handling steps,
//! without sockets, so libFuzzer can drive them millions of times a minute. Not an API: hidden
//! from the docs and used by nothing else.

use axum::http::{header, HeaderMap, HeaderValue};
use heureka_core::{Origin, Registry, RegistryPolicy};
use heureka_wire::Format;

use crate::http::negotiate;

/// What a register request would leave behind: `Err` with the status it would be refused
/// with, or every document a reader could then fetch, in both formats.
pub fn register_then_read(
    content_type: Option<&[u8]>,
    path_app: &str,
    body: &[u8],
) -> Result<Vec<(Format, Vec<u8>)>, u16> {
    let mut headers = HeaderMap::new();
    if let Some(value) = content_type.and_then(|value| HeaderValue::from_bytes(value).ok()) {
        headers.insert(header::CONTENT_TYPE, value);
    }
    use axum::response::IntoResponse;
    let status = |error: crate::http::error::ApiError| error.into_response().status().as_u16();
    let format = negotiate::body_format(&headers, body).map_err(status)?;
    let now = 1_800_000_000_000;
    let mut instance = heureka_wire::decode_instance(body, format, now).map_err(|_| 400_u16)?;
    crate::registration::validate(&mut instance, path_app).map_err(status)?;
    let (app, id) = (instance.app.clone(), instance.id().to_owned());
    let mut registry = Registry::new(RegistryPolicy::default(), now);
    registry.register(instance, Origin::Client, now);
    let mut documents = Vec::new();
    for format in [Format::Json, Format::Xml] {
        documents.push((
            format,
            heureka_wire::encode_applications(&registry.applications(), format),
        ));
        documents.push((
            format,
            heureka_wire::encode_applications(&registry.delta(), format),
        ));
        if let Some(application) = registry.application(&app) {
            documents.push((
                format,
                heureka_wire::encode_application(&application, format),
            ));
        }
        if let Some(stored) = registry.instance(&app, &id, now) {
            documents.push((format, heureka_wire::encode_instance(&stored, format)));
        }
    }
    Ok(documents)
}

/// The two response-format rules for an `Accept` header: (collection reads, instance reads).
pub fn negotiate(accept: &[u8]) -> (Format, Format) {
    let mut headers = HeaderMap::new();
    if let Ok(value) = HeaderValue::from_bytes(accept) {
        headers.insert(header::ACCEPT, value);
    }
    (
        negotiate::collection_format(&headers),
        negotiate::instance_format(&headers),
    )
}
