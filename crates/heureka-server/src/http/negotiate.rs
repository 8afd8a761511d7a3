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
    if accept.is_some_and(|accept| mentions_ignoring_case(accept.as_bytes(), b"json")) {
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
    header_str(headers, header::ACCEPT_ENCODING)
        .is_some_and(|value| mentions(value.as_bytes(), b"gzip"))
}

/// Whether `needle` occurs in `haystack`. A header's value is a few dozen bytes: comparing at
/// each offset costs a fetch less than setting up `str::contains`' searcher (or lower-casing
/// a copy first).
pub(crate) fn mentions(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// [`mentions`], ASCII letters matching in either case.
pub(crate) fn mentions_ignoring_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window.eq_ignore_ascii_case(needle))
}

/// Picks the codec for a request body from `Content-Type` (spec §2.4), for every endpoint
/// that reads one.
///
/// Eureka answers 415 for anything but JSON, XML or `*/*`, and so do we, a missing
/// `Content-Type` included. Refusing it is what keeps writes out of a browser's reach: a page
/// may send `text/plain`, `application/x-www-form-urlencoded`, `multipart/form-data` or no
/// type at all to another site without a CORS preflight, and none of these is accepted here
/// (`docs/compat.md`). Every real client and peer names its type.
pub(crate) fn body_format(headers: &HeaderMap) -> Result<Format, ApiError> {
    let Some(content_type) = headers.get(header::CONTENT_TYPE) else {
        return Err(ApiError::UnsupportedMediaType(
            "missing Content-Type; send application/json or application/xml".to_owned(),
        ));
    };
    // What nearly every client sends, told at once: the general reading below lower-cases a
    // copy of every part, about 600 instructions of every registration.
    if content_type.as_bytes() == b"application/json" {
        return Ok(Format::Json);
    }
    let Ok(content_type) = content_type.to_str() else {
        return Err(ApiError::UnsupportedMediaType(
            "unreadable Content-Type; send application/json or application/xml".to_owned(),
        ));
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
        // `*/*` is what Eureka's JAX-RS resources also take, and no browser sends it without
        // a preflight (it is not one of the three types a form can send).
        "application/xml" | "text/xml" | "*/*" => Ok(Format::Xml),
        other if other.ends_with("+json") => Ok(Format::Json),
        other if other.ends_with("+xml") => Ok(Format::Xml),
        other => Err(ApiError::UnsupportedMediaType(format!(
            "unsupported content type '{}'; send application/json or application/xml",
            other.escape_debug()
        ))),
    }
}

/// The body type of peer replication (`peerreplication/batch`, `stamped`, `copies`): JSON, as
/// every Eureka and Heureka peer sends it. XML is a type Eureka's resources name but no peer
/// sends, and these decoders do not read it, so it is refused with the same 415.
pub(crate) fn json_body(headers: &HeaderMap) -> Result<(), ApiError> {
    match body_format(headers)? {
        Format::Json => Ok(()),
        Format::Xml => Err(ApiError::UnsupportedMediaType(
            "peer replication bodies are read as JSON only; send application/json".to_owned(),
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

    fn refused(headers: &HeaderMap) -> bool {
        matches!(body_format(headers), Err(ApiError::UnsupportedMediaType(_)))
    }

    #[test]
    fn a_body_without_content_type_is_refused_not_sniffed() {
        assert!(refused(&HeaderMap::new()));
    }

    #[test]
    fn the_three_types_a_form_can_send_are_refused() {
        for form_type in [
            "text/plain",
            "text/plain;charset=UTF-8",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(form_type));
            assert!(refused(&headers), "{form_type} was accepted");
        }
    }

    #[test]
    fn xml_types_are_xml() {
        for xml in [
            "application/xml",
            "text/xml; charset=utf-8",
            "application/atom+xml",
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(xml));
            assert_eq!(body_format(&headers).unwrap(), Format::Xml, "{xml}");
        }
    }

    #[test]
    fn unsupported_content_type_is_refused() {
        let headers = with(header::CONTENT_TYPE, "text/plain");
        assert!(refused(&headers));
    }

    #[test]
    fn json_is_json_however_it_is_spelled() {
        for json in [
            "application/json",
            "Application/JSON",
            " application/json ",
            "application/vnd.spring-boot.actuator.v3+json",
        ] {
            let headers = with(header::CONTENT_TYPE, json);
            assert_eq!(body_format(&headers).unwrap(), Format::Json, "{json}");
        }
        let headers = with(header::CONTENT_TYPE, "application/json; charset=UTF-16");
        assert!(refused(&headers));
    }

    #[test]
    fn json_with_utf8_charset_is_json() {
        let headers = with(header::CONTENT_TYPE, "application/json; charset=UTF-8");
        assert_eq!(body_format(&headers).unwrap(), Format::Json);
    }
}
