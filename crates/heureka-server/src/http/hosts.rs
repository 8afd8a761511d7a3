//! The HTTP side of the DNS-rebinding rule (`security/hosts.rs`): a request carrying a
//! browser's marks must name, in `Host`, a name this server answers to, unless its `Origin` is
//! listed in `heureka.security.allowed-origins`. Requests without the marks pass whatever
//! their `Host`: Eureka clients and peers reach a registry under any DNS name.
//!
//! The marks are what a page cannot take off its own requests. `Origin` and `Sec-Fetch-*`
//! alone are not enough: a browser sends `Sec-Fetch-*` only to `https://` and loopback
//! origins, and `Origin` not on a same-origin GET, so a rebinding page's reads over plain HTTP
//! carry neither (measured with Chromium). Every browser sends `Accept-Language` on every
//! request, which a page may set to any value but not remove, and a `User-Agent` starting
//! `Mozilla/`, which Chromium does not let a page change; navigations add
//! `Upgrade-Insecure-Requests`. No Eureka client or peer sends these; Node's built-in `fetch`
//! does (`Accept-Language: *`, `Sec-Fetch-Mode: cors`), so a script using it under a name
//! outside the set must have the name listed.

use axum::http::{header, HeaderMap, HeaderName, HeaderValue};

use crate::security::hosts::AllowedHosts;
use crate::security::origins::normalise_origin;

/// Whether a request carries a browser's marks. One pass over the request's few headers,
/// rather than a hashed look-up for each mark (eight look-ups were a twentieth of a heartbeat).
pub(crate) fn from_a_browser(headers: &HeaderMap) -> bool {
    headers
        .iter()
        .any(|(name, value)| is_a_browser_mark(name, value))
}

/// Whether one header is a browser's mark (see the module docs): `Origin`,
/// `Accept-Language`, `Upgrade-Insecure-Requests`, a `Sec-Fetch-*` or a `User-Agent` starting
/// `Mozilla/`. Its name's text sorted by length first, so a header that is no mark costs a
/// comparison or two. (A list of names compared one by one cost five times as much whenever
/// the compiler did not fold the list into the code.)
pub(crate) fn is_a_browser_mark(name: &HeaderName, value: &HeaderValue) -> bool {
    // Lower case: `HeaderName` holds names that way.
    let name = name.as_str();
    match name.len() {
        6 => name == "origin",
        10 => name == "user-agent" && value.as_bytes().starts_with(b"Mozilla/"),
        14 => matches!(
            name,
            "sec-fetch-site" | "sec-fetch-mode" | "sec-fetch-dest" | "sec-fetch-user"
        ),
        15 => name == "accept-language",
        25 => name == "upgrade-insecure-requests",
        _ => false,
    }
}

/// Why a request is refused: the `Host` it named, for the log line and the answer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ForeignHost {
    /// The `Host` header as sent (lossily decoded), empty when there was none.
    pub(crate) host: String,
}

/// `Some` when a browser's request names a `Host` this server does not answer to (see the
/// module docs). `allowed_origins` are normalised as `security/origins.rs` does.
pub(crate) fn foreign_host(
    headers: &HeaderMap,
    hosts: &AllowedHosts,
    allowed_origins: &[String],
) -> Option<ForeignHost> {
    if hosts.allows_any() || !from_a_browser(headers) {
        return None;
    }
    let host = headers
        .get(header::HOST)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .unwrap_or_default();
    if hosts.allows(&host) {
        return None;
    }
    let trusted_origin = headers
        .get(header::ORIGIN)
        .and_then(|origin| origin.to_str().ok())
        .and_then(normalise_origin)
        .is_some_and(|origin| allowed_origins.contains(&origin));
    (!trusted_origin).then_some(ForeignHost { host })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn allowed(patterns: &[&str]) -> AllowedHosts {
        AllowedHosts::new(patterns.iter().copied())
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn each_mark_is_told_from_the_headers_clients_send() {
        let mark = |name: &str, value: &str| {
            is_a_browser_mark(
                &HeaderName::from_bytes(name.as_bytes()).unwrap(),
                &HeaderValue::from_str(value).unwrap(),
            )
        };
        for name in [
            "Origin",
            "Accept-Language",
            "Upgrade-Insecure-Requests",
            "Sec-Fetch-Site",
            "sec-fetch-mode",
            "Sec-Fetch-Dest",
            "Sec-Fetch-User",
        ] {
            assert!(mark(name, "x"), "{name}");
        }
        assert!(mark("User-Agent", "Mozilla/5.0 (X11; Linux x86_64)"));
        for (name, value) in [
            ("User-Agent", "Java-EurekaClient/v1.10.17"),
            ("Accept-Encoding", "gzip"),
            ("Content-Length", "0"),
            ("Sec-Fetch-Else", "x"),
            ("Host", "localhost"),
            ("DiscoveryIdentity-Name", "DefaultClient"),
            ("Originator", "x"),
        ] {
            assert!(!mark(name, value), "{name}");
        }
    }

    #[test]
    fn a_request_without_a_browsers_marks_passes_under_any_name() {
        for agent in [
            "Java-EurekaClient/v1.10.18",
            "python-requests/2.31.0",
            "curl/7.88.1",
        ] {
            let request = headers(&[
                ("host", "eureka-peer.internal:8761"),
                ("user-agent", agent),
                ("accept-encoding", "gzip"),
            ]);
            assert_eq!(foreign_host(&request, &allowed(&[]), &[]), None, "{agent}");
        }
    }

    #[test]
    fn a_browsers_read_under_a_foreign_name_is_refused() {
        for mark in [
            ("sec-fetch-site", "same-origin"),
            ("sec-fetch-mode", "cors"),
            ("origin", "http://attacker.example:8761"),
            // What a read over plain HTTP carries: no fetch metadata there.
            ("accept-language", ""),
            (
                "user-agent",
                "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0.0.0",
            ),
            ("upgrade-insecure-requests", "1"),
        ] {
            let request = headers(&[("host", "attacker.example:8761"), mark]);
            assert_eq!(
                foreign_host(&request, &allowed(&[]), &[]),
                Some(ForeignHost {
                    host: "attacker.example:8761".to_owned()
                }),
                "{mark:?}"
            );
        }
    }

    #[test]
    fn an_allowed_origin_passes_under_any_name() {
        let request = headers(&[
            ("host", "eureka.internal:8761"),
            ("origin", "https://ops.example.com"),
        ]);
        let origins = vec![normalise_origin("https://ops.example.com").unwrap()];
        assert_eq!(foreign_host(&request, &allowed(&[]), &origins), None);
    }
}
