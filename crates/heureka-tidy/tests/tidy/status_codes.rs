//! Error status codes are built only in the error type: a handler returns an `ApiError` (or an
//! outcome that becomes one), and `http/error.rs` alone decides which 4xx or 5xx it answers.
//! Nor does a bare number stand for one: the codes of a peer batch's elements come from core's
//! mapping (`heureka_core::ElementOutcome`, `outcomes.rs`), at the end that answers and at the
//! end that reads the answer back.

use crate::workspace::{
    assert_no_sites, assert_rule, assert_still_pending, lines_matching, listed, rust_files, Line,
    Site, Source, Tests,
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
    assert_rule(
        error_statuses(),
        PENDING_STATUS_OFFENDERS,
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

/// Wire's readers and writers of the peer batches, whose answers carry a status per element.
const REPLICATION_WIRE: &[&str] = &[
    "crates/heureka-wire/src/replication.rs",
    "crates/heureka-wire/src/stamped.rs",
];

/// Whether a line's code (strings and comments blanked, [`code_of`]) makes a status from a
/// number or writes a 4xx/5xx status as a bare integer: compared with one, matched, passed or
/// returned. A duration or a constant of another type (`const BATCH: usize = 500`) is no status.
fn names_integer_status(code: &str) -> bool {
    if code.contains("StatusCode::from_u16(") {
        return true;
    }
    if code.contains("Duration::from_") || declares_non_status_constant(code) {
        return false;
    }
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .any(|token| {
            let digits = token.strip_suffix("u16").unwrap_or(token);
            digits.len() == 3
                && digits.starts_with(['4', '5'])
                && digits.chars().all(|c| c.is_ascii_digit())
        })
}

/// Whether the line declares a `const` or `static` whose type is not `u16`.
fn declares_non_status_constant(code: &str) -> bool {
    let words: Vec<&str> = code.split_whitespace().collect();
    let Some(at) = words.iter().position(|w| *w == "const" || *w == "static") else {
        return false;
    };
    let rest = words[at + 1..].join(" ");
    let Some((_, typed)) = rest.split_once(':') else {
        return false;
    };
    let ty = typed.split('=').next().unwrap_or("").trim();
    !ty.is_empty() && ty != "u16"
}

/// Each line's code with string and character literals blanked (strings, raw ones too, may run
/// over several lines) and `//` comments cut, so a log message saying "answered 400" is no
/// status code.
fn code_of(lines: &[Line]) -> Vec<String> {
    // Inside a string: how many `#` close it (`None` for an ordinary string, with escapes).
    let mut open: Option<Option<usize>> = None;
    let mut codes = Vec::with_capacity(lines.len());
    for line in lines {
        let chars: Vec<char> = line.text.chars().collect();
        let mut code = String::with_capacity(chars.len());
        let mut at = 0;
        while at < chars.len() {
            let c = chars[at];
            if let Some(hashes) = open {
                at += match (c, hashes) {
                    ('\\', None) => 2,
                    ('"', None) => {
                        open = None;
                        1
                    }
                    ('"', Some(n))
                        if chars[at + 1..].iter().take_while(|h| **h == '#').count() >= n =>
                    {
                        open = None;
                        1 + n
                    }
                    _ => 1,
                };
                continue;
            }
            let raw_hashes = (c == 'r' && !word_before(&chars, at))
                .then(|| chars[at + 1..].iter().take_while(|h| **h == '#').count())
                .filter(|n| chars.get(at + 1 + n) == Some(&'"'));
            if let Some(n) = raw_hashes {
                open = Some(Some(n));
                code.push_str("\"\"");
                at += n + 2;
                continue;
            }
            match c {
                '"' => {
                    open = Some(None);
                    code.push_str("\"\"");
                    at += 1;
                }
                '/' if chars.get(at + 1) == Some(&'/') => break,
                '\'' => {
                    at += char_literal_len(&chars[at..]).unwrap_or_else(|| {
                        code.push(c);
                        1
                    })
                }
                _ => {
                    code.push(c);
                    at += 1;
                }
            }
        }
        codes.push(code);
    }
    codes
}

/// Whether an identifier character stands just before `at` (so `r"` there is no raw string).
fn word_before(chars: &[char], at: usize) -> bool {
    at > 0 && (chars[at - 1].is_alphanumeric() || chars[at - 1] == '_')
}

/// The length of the character literal `rest` starts with (`'"'`, `'\\''`, `'\\n'`), or `None`
/// for a lifetime.
fn char_literal_len(rest: &[char]) -> Option<usize> {
    match rest.get(1..) {
        Some(['\\', _, tail @ ..]) => tail.iter().position(|c| *c == '\'').map(|end| end + 4),
        Some([_, '\'', ..]) => Some(3),
        _ => None,
    }
}

/// Integer status codes in the server and wire's batch files, outside the error type. Test
/// code is exempt: tests assert the codes answered.
fn integer_statuses() -> Vec<Site> {
    let wire = rust_files("crates/heureka-wire/src")
        .into_iter()
        .filter(|file| listed(&file.path, REPLICATION_WIRE));
    let files: Vec<Source> = rust_files(SCOPE).into_iter().chain(wire).collect();
    let mut sites = Vec::new();
    for file in files.iter().filter(|file| !listed(&file.path, ERROR_TYPE)) {
        for (line, code) in file.lines.iter().zip(code_of(&file.lines)) {
            if !line.in_test && names_integer_status(&code) {
                sites.push(Site {
                    path: file.path.clone(),
                    line: line.number,
                    text: line.text.clone(),
                });
            }
        }
    }
    sites
}

#[test]
fn integer_status_codes_come_only_from_the_error_type_and_cores_mapping() {
    assert_no_sites(
        &integer_statuses(),
        "no integer status codes outside the error type and core's mapping (a 4xx/5xx literal \
         compared with, matched, passed or returned as a status, or `StatusCode::from_u16(`, in \
         the server or wire's batch files)",
        "a bare 404 says nothing of what it means, and the end that answers a peer and the end \
         that reads the answer back must agree: name the outcome (`heureka_core::ElementOutcome`, \
         `RenewOutcome`, `instance_write_status_code`) or return an `ApiError` variant.",
    );
}

#[test]
fn the_integer_status_rule_sees_numbers_as_statuses_only_in_code() {
    let text = [
        "        (404, _) => {",
        "    return Err(400);",
        "        400u16",
        "            Some(_) if full => ReplicationResult::status(403),",
        "    if code == 503 {",
        "    let code = StatusCode::from_u16(status).unwrap();",
        "    tracing::warn!(%error, \"element cannot be read; answered 400\");",
        "    // a 404 asks the peer for its copy",
        "const COPIES_PER_REQUEST: usize = 500;",
        "const BACKOFF: Duration = Duration::from_millis(500);",
        "    let help = \"refused with 503 only when",
        "        rate-limiter-enabled 429\";",
        "    let quote = '\"'; let late = 1_500;",
    ];
    let lines: Vec<Line> = text
        .iter()
        .enumerate()
        .map(|(index, text)| Line {
            number: index + 1,
            text: (*text).to_owned(),
            in_test: false,
        })
        .collect();
    let seen: Vec<bool> = code_of(&lines)
        .iter()
        .map(|code| names_integer_status(code))
        .collect();
    let statuses = [true, true, true, true, true, true];
    let not_statuses = [false; 7];
    assert_eq!(
        seen,
        [statuses.as_slice(), not_statuses.as_slice()].concat()
    );
}
