//! Error status codes are built only in the error type: a handler returns an `ApiError` (or an
//! outcome that becomes one), and `http/error.rs` alone decides which 4xx or 5xx it answers.

use crate::workspace::{
    assert_no_sites, assert_still_pending, lines_matching, listed, rust_files, Site, Tests,
};

const SCOPE: &str = "crates/heureka-server/src";

/// Where an error becomes a status code.
const ERROR_TYPE: &[&str] = &[
    "crates/heureka-server/src/http/error.rs",
    // The replication client reads a peer's answer (a 503 is congestion); it builds none.
    "crates/heureka-server/src/replication/transport.rs",
    // Spring Boot's health endpoint answers with its status's own code (503 when DOWN) and the
    // health document: a report a probe reads, not a refusal of the request.
    "crates/heureka-server/src/handlers/actuator.rs",
];

/// Files that name an error status themselves today. Remove a file once it no longer does;
/// `pending_status_offenders_still_offend` insists.
const PENDING_STATUS_OFFENDERS: &[&str] = &[];

/// The `StatusCode` constants that are not errors (1xx, 2xx, 3xx); any other is a 4xx or 5xx.
const NOT_ERRORS: &[&str] = &[
    "CONTINUE",
    "SWITCHING_PROTOCOLS",
    "PROCESSING",
    "OK",
    "CREATED",
    "ACCEPTED",
    "NON_AUTHORITATIVE_INFORMATION",
    "NO_CONTENT",
    "RESET_CONTENT",
    "PARTIAL_CONTENT",
    "MULTI_STATUS",
    "ALREADY_REPORTED",
    "IM_USED",
    "MULTIPLE_CHOICES",
    "MOVED_PERMANENTLY",
    "FOUND",
    "SEE_OTHER",
    "NOT_MODIFIED",
    "USE_PROXY",
    "TEMPORARY_REDIRECT",
    "PERMANENT_REDIRECT",
];

/// Whether `line` names a 4xx/5xx `StatusCode` constant or makes a status from a number.
fn names_error_status(line: &str) -> bool {
    line.contains("StatusCode::from_u16(")
        || line.match_indices("StatusCode::").any(|(at, prefix)| {
            let rest = &line[at + prefix.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            !name.is_empty() && !NOT_ERRORS.contains(&name.as_str())
        })
}

/// Error statuses named outside the error type. Test code is exempt: tests assert the
/// statuses answered.
fn error_statuses() -> Vec<Site> {
    let files = rust_files(SCOPE);
    lines_matching(&files, Tests::Excluded, |file, line| {
        !listed(&file.path, ERROR_TYPE) && names_error_status(&line.text)
    })
}

#[test]
fn error_status_codes_are_built_only_in_the_error_type() {
    let outside: Vec<Site> = error_statuses()
        .into_iter()
        .filter(|site| !listed(&site.path, PENDING_STATUS_OFFENDERS))
        .collect();
    assert_no_sites(
        &outside,
        "error status codes are built only in the error type (a 4xx/5xx `StatusCode::` \
         constant or `StatusCode::from_u16(` appears in the server only in http/error.rs)",
        "one place maps every failure to its status, so a reader finds every answer a client \
         can get in one match, and a change to one (say Eureka's 404 on renew) is made once. \
         Return an `ApiError` variant instead.",
    );
}

#[test]
fn pending_status_offenders_still_offend() {
    assert_still_pending(
        PENDING_STATUS_OFFENDERS,
        &error_statuses(),
        "PENDING_STATUS_OFFENDERS",
    );
}
