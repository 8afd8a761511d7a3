//! Writes a browser cannot be made to send: a request with a non-safe method (POST, PUT,
//! DELETE, PATCH) that a browser marks as coming from another site's page is refused with 403
//! before any handler runs, so the registry is left as it was. The same layer first refuses
//! any browser request, reads included, whose `Host` is not a name of this server (DNS
//! rebinding, `hosts.rs`): such a page's origin would match its `Host` and pass the check
//! below.
//!
//! A page on any site can make its visitor's browser send such a request to a registry it can
//! reach (a form, or a `fetch` whose method and headers need no CORS preflight), with the
//! visitor's stored Basic credentials. Browsers name the page's origin in `Origin` on every
//! non-safe request, and modern ones add `Sec-Fetch-Site`. A request counts as foreign when
//!
//! * its `Origin` is `null` (sandboxed frames, `file:` pages, some redirects), unreadable, or
//!   names a host and port other than the request's own `Host`; or
//! * its `Sec-Fetch-Site` is `cross-site`,
//!
//! unless its `Origin` is listed in `heureka.security.allowed-origins`. The scheme is not
//! compared: Heureka serves plain HTTP and is often reached through a TLS proxy that keeps the
//! `Host`, so the dashboard's own `https://` origin must pass; a page under the other scheme
//! on the same host and port is served by the same operator.
//!
//! Real clients and peers (Java, Spring, Python, JavaScript, Go, the Rust client) send neither
//! header, so they pass untouched. Heureka never grants CORS: it sends no
//! `Access-Control-Allow-*` header, so a preflighted cross-site request fails in the browser
//! before it is sent. This layer closes the requests that need no preflight; `negotiate.rs`
//! closes the body types a form can send.

use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method};
use parking_lot::Mutex;

use crate::http::error::ApiError;
use crate::http::gate::{Check, GateLayer};
use crate::http::hosts::foreign_host;
use crate::log_budget::LogBudget;
use crate::security::hosts::AllowedHosts;
use crate::security::origins::{foreign_write, Foreign};

/// The header a browser adds to say how the page's site relates to the target's.
const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");

/// Refusals of a foreign `Host` logged per minute at most: any page can make its visitors'
/// browsers send them, so they are floodable; the rest are counted into the next line.
const HOST_REFUSALS_LOGGED_PER_MINUTE: u32 = 10;

/// The layer: see the module docs.
pub(crate) type CrossSiteLayer = GateLayer<Rules>;

/// What the layer checks against.
pub(crate) struct Rules {
    /// The allowed origins, normalised (`security/origins.rs`).
    allowed: Vec<String>,
    /// The names a browser may reach this server under (`hosts.rs`).
    hosts: AllowedHosts,
    host_refusals: Mutex<LogBudget>,
}

impl CrossSiteLayer {
    pub(crate) fn new(allowed: &[String], hosts: AllowedHosts) -> CrossSiteLayer {
        GateLayer::of(Rules {
            allowed: allowed.to_vec(),
            hosts,
            host_refusals: Mutex::new(LogBudget::new(HOST_REFUSALS_LOGGED_PER_MINUTE)),
        })
    }
}

impl Check for Rules {
    fn check(&self, request: &mut Request) -> Result<(), ApiError> {
        if let Some(foreign) = foreign_host(request.headers(), &self.hosts, &self.allowed) {
            // The host is the client's text: logged quoted and escaped.
            if let Some(left_out) = self.host_refusals.lock().take(crate::clock::instant()) {
                tracing::info!(
                    method = %request.method(),
                    path = request.uri().path(),
                    host = ?foreign.host,
                    left_out,
                    "refused a browser request under a foreign Host, DNS rebinding (403)"
                );
            }
            let reason = format!(
                "DNS rebinding refused: a browser request under Host {:?}, which is not a name of \
                 this server; list it in heureka.security.allowed-hosts if it is",
                foreign.host
            );
            return Err(ApiError::CrossSite(reason));
        }
        let Some(foreign) = foreign(request.method(), request.headers(), &self.allowed) else {
            return Ok(());
        };
        // The one log line of the refusal (a 403 is not among the statuses the observing
        // layer logs). The origin is the client's text: logged quoted and escaped.
        tracing::info!(
            method = %request.method(),
            path = request.uri().path(),
            origin = ?foreign.origin.as_deref().unwrap_or(""),
            why = foreign.why,
            "refused cross-site write (403)"
        );
        let reason = format!(
            "cross-site write refused: {}; a browser page may write only from this server's own \
             origin or one listed in heureka.security.allowed-origins",
            foreign.why
        );
        Err(ApiError::CrossSite(reason))
    }
}

/// `Some` when the request must be refused: a write a browser marks as sent from another
/// site's page (`security/origins.rs`'s [`foreign_write`]; see the module docs for the rule).
pub(crate) fn foreign(method: &Method, headers: &HeaderMap, allowed: &[String]) -> Option<Foreign> {
    if is_safe(method) {
        return None;
    }
    let origin = headers.get(header::ORIGIN).map(HeaderValue::as_bytes);
    let cross_site = headers
        .get(&SEC_FETCH_SITE)
        .is_some_and(|value| value.as_bytes().eq_ignore_ascii_case(b"cross-site"));
    // What every client and peer sends: neither header, and no more look-ups.
    if origin.is_none() && !cross_site {
        return None;
    }
    let host = headers.get(header::HOST).and_then(host_text);
    foreign_write(origin, cross_site, host, allowed)
}

/// GET, HEAD, OPTIONS and TRACE change nothing here; every other method may.
fn is_safe(method: &Method) -> bool {
    matches!(
        *method,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE
    )
}

/// The `Host` a request was sent to, when it is a plain host and port.
fn host_text(value: &HeaderValue) -> Option<&str> {
    value
        .to_str()
        .ok()
        .filter(|host| !host.is_empty() && !host.contains(['/', '@', '?', '#']))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::origins::normalise_origin;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        headers
    }

    fn is_foreign(method: Method, pairs: &[(&'static str, &'static str)]) -> bool {
        foreign(&method, &headers(pairs), &[]).is_some()
    }

    #[test]
    fn a_write_without_origin_or_fetch_metadata_passes_as_clients_send_it() {
        for method in [Method::POST, Method::PUT, Method::DELETE, Method::PATCH] {
            assert!(!is_foreign(method, &[("host", "127.0.0.1:8761")]));
        }
    }

    #[test]
    fn a_write_from_another_origin_is_foreign() {
        for method in [Method::POST, Method::PUT, Method::DELETE, Method::PATCH] {
            assert!(is_foreign(
                method,
                &[
                    ("host", "127.0.0.1:8761"),
                    ("origin", "http://evil.example")
                ]
            ));
        }
    }

    #[test]
    fn a_read_from_another_origin_passes() {
        for method in [Method::GET, Method::HEAD, Method::OPTIONS] {
            assert!(!is_foreign(
                method,
                &[
                    ("host", "127.0.0.1:8761"),
                    ("origin", "http://evil.example")
                ]
            ));
        }
    }

    #[test]
    fn a_null_origin_is_foreign() {
        let refused = foreign(
            &Method::POST,
            &headers(&[("host", "127.0.0.1:8761"), ("origin", "null")]),
            &[],
        );
        assert_eq!(refused.unwrap().why, "Origin is null");
    }

    #[test]
    fn the_servers_own_origin_passes_under_either_scheme() {
        for (host, origin) in [
            ("127.0.0.1:8761", "http://127.0.0.1:8761"),
            ("LOCALHOST:8761", "http://localhost:8761"),
            ("eureka.example", "https://eureka.example"),
            ("eureka.example:443", "https://eureka.example"),
            ("eureka.example", "http://eureka.example:80"),
            ("[::1]:8761", "http://[::1]:8761"),
        ] {
            assert!(
                !is_foreign(Method::POST, &[("host", host), ("origin", origin)]),
                "{origin} against Host {host}"
            );
        }
    }

    #[test]
    fn the_same_host_on_another_port_is_foreign() {
        assert!(is_foreign(
            Method::DELETE,
            &[
                ("host", "127.0.0.1:8761"),
                ("origin", "http://127.0.0.1:8080")
            ]
        ));
        assert!(is_foreign(
            Method::DELETE,
            &[
                ("host", "eureka.example"),
                ("origin", "http://eureka.example:8080")
            ]
        ));
    }

    #[test]
    fn an_origin_without_a_host_to_compare_is_foreign() {
        assert!(is_foreign(
            Method::POST,
            &[("origin", "http://127.0.0.1:8761")]
        ));
    }

    #[test]
    fn sec_fetch_site_cross_site_is_foreign_even_without_origin() {
        assert!(is_foreign(
            Method::PUT,
            &[("host", "127.0.0.1:8761"), ("sec-fetch-site", "cross-site")]
        ));
        assert!(!is_foreign(
            Method::PUT,
            &[
                ("host", "127.0.0.1:8761"),
                ("sec-fetch-site", "same-origin")
            ]
        ));
    }

    #[test]
    fn an_allowed_origin_passes_in_any_spelling() {
        let allowed = vec![normalise_origin("https://UI.example.com/").unwrap()];
        for origin in ["https://ui.example.com", "https://ui.example.com:443"] {
            let request = headers(&[
                ("host", "127.0.0.1:8761"),
                ("origin", origin),
                ("sec-fetch-site", "cross-site"),
            ]);
            assert_eq!(foreign(&Method::POST, &request, &allowed), None, "{origin}");
        }
        let other = headers(&[
            ("host", "127.0.0.1:8761"),
            ("origin", "http://ui.example.com"),
        ]);
        assert!(foreign(&Method::POST, &other, &allowed).is_some());
    }
}
