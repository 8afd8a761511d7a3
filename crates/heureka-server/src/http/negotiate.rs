//! Which format a response is written in, and which codec reads a request body.
//!
//! Eureka has two negotiation rules (spec §2.2). Its cached collection reads (`/apps`,
//! `/apps/delta`, `/apps/{app}`, `/vips`, `/svips`) answer JSON only when `Accept` contains the
//! substring `json`, so a missing `Accept` (Python's client) or `*/*` (curl) gets XML. Its
//! single-instance reads use JAX-RS negotiation, where XML is listed first and wins ties.

use axum::http::{header, HeaderMap};
use heureka_wire::Format;

use crate::http::error::ApiError;

/// The rule of Eureka's cached reads: JSON iff `Accept` mentions json.
pub(crate) fn collection_format(headers: &HeaderMap) -> Format {
    let accept = header_str(headers, header::ACCEPT);
    if accept.is_some_and(|accept| accept.to_ascii_lowercase().contains("json")) {
        Format::Json
    } else {
        Format::Xml
    }
}

/// JAX-RS negotiation between `application/xml` (preferred on ties) and `application/json`.
pub(crate) fn instance_format(headers: &HeaderMap) -> Format {
    let Some(accept) = header_str(headers, header::ACCEPT) else {
        return Format::Xml;
    };
    let (mut json_q, mut xml_q) = (0.0_f32, 0.0_f32);
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|param| param.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        match media.as_str() {
            "*/*" | "application/*" => {
                json_q = json_q.max(q);
                xml_q = xml_q.max(q);
            }
            "application/json" => json_q = json_q.max(q),
            "application/xml" | "text/xml" => xml_q = xml_q.max(q),
            other if other.ends_with("+json") || other.ends_with("/json") => json_q = json_q.max(q),
            _ => {}
        }
    }
    if json_q > xml_q {
        Format::Json
    } else {
        Format::Xml
    }
}

/// True when the client accepts a gzip-encoded response.
pub(crate) fn accepts_gzip(headers: &HeaderMap) -> bool {
    header_str(headers, header::ACCEPT_ENCODING).is_some_and(|value| value.contains("gzip"))
}

/// Picks the codec for a request body from `Content-Type` (spec §2.4).
///
/// Eureka answers 415 for anything but JSON, XML or `*/*`. A body without any `Content-Type`
/// is sniffed instead of refused, because being lenient there costs nothing.
pub(crate) fn body_format(headers: &HeaderMap, body: &[u8]) -> Result<Format, ApiError> {
    let Some(content_type) = header_str(headers, header::CONTENT_TYPE) else {
        return sniff(body);
    };
    let mut parts = content_type.split(';');
    let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts
        .filter_map(|param| {
            param
                .trim()
                .to_ascii_lowercase()
                .strip_prefix("charset=")
                .map(str::to_owned)
        })
        .next();
    if let Some(charset) = charset {
        let charset = charset.trim_matches('"');
        if !matches!(charset, "utf-8" | "utf8" | "iso-8859-1" | "us-ascii") {
            return Err(ApiError::UnsupportedMediaType(format!(
                "unsupported charset '{charset}'; bodies must be UTF-8"
            )));
        }
    }
    match media.as_str() {
        "application/json" => Ok(Format::Json),
        "application/xml" | "text/xml" | "*/*" => Ok(Format::Xml),
        other if other.ends_with("+json") => Ok(Format::Json),
        other if other.ends_with("+xml") => Ok(Format::Xml),
        other => Err(ApiError::UnsupportedMediaType(format!(
            "unsupported content type '{other}'; send application/json or application/xml"
        ))),
    }
}

fn sniff(body: &[u8]) -> Result<Format, ApiError> {
    match body.iter().find(|byte| !byte.is_ascii_whitespace()) {
        Some(b'{') => Ok(Format::Json),
        Some(b'<') => Ok(Format::Xml),
        _ => Err(ApiError::UnsupportedMediaType(
            "missing Content-Type; send application/json or application/xml".to_owned(),
        )),
    }
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(name: header::HeaderName, value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn collection_reads_default_to_xml_without_accept() {
        assert_eq!(collection_format(&HeaderMap::new()), Format::Xml);
        assert_eq!(collection_format(&with(header::ACCEPT, "*/*")), Format::Xml);
    }

    #[test]
    fn collection_reads_answer_json_when_accept_mentions_json() {
        assert_eq!(
            collection_format(&with(header::ACCEPT, "application/json, */*")),
            Format::Json
        );
    }

    #[test]
    fn instance_reads_prefer_xml_on_ties() {
        assert_eq!(instance_format(&with(header::ACCEPT, "*/*")), Format::Xml);
        assert_eq!(instance_format(&HeaderMap::new()), Format::Xml);
    }

    #[test]
    fn instance_reads_answer_json_when_preferred() {
        assert_eq!(
            instance_format(&with(header::ACCEPT, "application/json")),
            Format::Json
        );
        assert_eq!(
            instance_format(&with(
                header::ACCEPT,
                "application/xml;q=0.5, application/json"
            )),
            Format::Json
        );
    }

    #[test]
    fn body_without_content_type_is_sniffed() {
        assert_eq!(
            body_format(&HeaderMap::new(), b" {\"instance\":{}}").unwrap(),
            Format::Json
        );
        assert_eq!(
            body_format(&HeaderMap::new(), b"<instance/>").unwrap(),
            Format::Xml
        );
    }

    #[test]
    fn unsupported_content_type_is_refused() {
        let headers = with(header::CONTENT_TYPE, "text/plain");
        assert!(matches!(
            body_format(&headers, b"{}"),
            Err(ApiError::UnsupportedMediaType(_))
        ));
    }

    #[test]
    fn json_with_utf8_charset_is_json() {
        let headers = with(header::CONTENT_TYPE, "application/json; charset=UTF-8");
        assert_eq!(body_format(&headers, b"{}").unwrap(), Format::Json);
    }
}
