//! The headers every answer carries so that a browser neither sniffs it into something
//! executable, nor frames it, nor tells other sites where its user came from.
//!
//! An answer without a body (a heartbeat's 200, a register's 204) gets none: there is nothing to
//! sniff, frame or leave from, and an interleaved A/B of heartbeats measured the four inserts
//! on every answer at +14% server CPU per heartbeat (B/A 1.138 and 1.154, two runs of
//! `bench/results/ab/heureka-9bf8cb3-vs-heureka-xsite*`), 1.045 with them skipped there.
//! Every other answer costs four inserts of static values. An answer that sets its own
//! `Content-Security-Policy` keeps it: the dashboard's page allows its own script and
//! stylesheet (`PAGE_POLICY`); every other answer is a document or a plain-text reason, for
//! which a browser may run and load nothing.

use axum::http::{header, HeaderValue};
use axum::response::Response;

/// The dashboard page's policy: its own script, stylesheet and API calls (the event stream
/// included), nothing inline, never framed. `form-action 'none'`: its one form only filters.
pub(crate) const PAGE_POLICY: HeaderValue = HeaderValue::from_static(
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; \
     connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'",
);

/// The policy of every other answer.
const DOCUMENT_POLICY: HeaderValue =
    HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'");

/// Adds the headers to an answer (a `map_response` step, so it allocates nothing).
pub(crate) fn add(mut response: Response) -> Response {
    use axum::body::HttpBody;
    // An answer without a body (a heartbeat's, a cancel's) has nothing to sniff, frame or
    // refer from, and most answers are heartbeats: they are left as they were.
    if response.body().size_hint().exact() == Some(0) {
        return response;
    }
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers
        .entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(DOCUMENT_POLICY);
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::response::IntoResponse;

    #[test]
    fn every_answer_forbids_sniffing_framing_and_referrers() {
        let response = add("{}".into_response());
        let headers = response.headers();
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(headers[header::X_FRAME_OPTIONS], "DENY");
        assert_eq!(headers[header::REFERRER_POLICY], "no-referrer");
        assert_eq!(
            headers[header::CONTENT_SECURITY_POLICY],
            "default-src 'none'; frame-ancestors 'none'"
        );
    }

    #[test]
    fn an_answer_without_a_body_is_left_as_it_was() {
        let response = add(axum::http::StatusCode::NO_CONTENT.into_response());
        assert!(response.headers().is_empty());
    }

    #[test]
    fn an_answer_with_its_own_policy_keeps_it() {
        let mut page = "<html></html>".into_response();
        page.headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, PAGE_POLICY);
        let response = add(page);
        assert_eq!(
            response.headers()[header::CONTENT_SECURITY_POLICY],
            PAGE_POLICY
        );
    }
}
