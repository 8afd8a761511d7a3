//! DNS rebinding: a browser request must name, in `Host`, a name this server answers to.
//!
//! A page at `http://attacker.example:8761` can make its name resolve to the registry's
//! address once loaded (DNS rebinding). The browser then treats the registry as that page's
//! own origin: the page reads the registry and passes the origin check of `cross_site.rs`
//! (its `Origin` matches the `Host` it was served under). What gives it away is that `Host`
//! names the attacker's domain. So a request carrying a browser's marks is refused with 403
//! unless its `Host` is
//!
//! * an IP literal or `localhost` (no DNS answer is involved, so nothing to rebind; a page
//!   served under such a name is the registry's own dashboard);
//! * one of this server's own names, as it recognises itself among its peers (the
//!   configured `eureka.instance.hostname` and `ip-address`, `server.address`, the machine's
//!   host name) or the host of a configured service URL or `eureka.server.my-url`;
//! * listed in `heureka.security.allowed-hosts` (`*` any, `*.example.com` any name under it);
//!
//! or its `Origin` is listed in `heureka.security.allowed-origins` (a page the operator
//! trusts, whatever name it reaches the registry under).
//!
//! Reads are refused too, not only writes: a rebinding page reads the registry (addresses,
//! metadata) as its own. Requests without a browser's marks pass whatever their `Host`:
//! Eureka clients and peers reach a registry under any DNS name (a Kubernetes service, a
//! load balancer).
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

use std::net::IpAddr;

use axum::http::{header, HeaderMap};

use crate::config::Config;
use crate::http::cross_site::normalise_origin;
use crate::replication::OwnAddress;

/// Headers a browser sends and clients do not (see the module docs).
const BROWSER_MARKS: [&str; 7] = [
    "origin",
    "accept-language",
    "upgrade-insecure-requests",
    "sec-fetch-site",
    "sec-fetch-mode",
    "sec-fetch-dest",
    "sec-fetch-user",
];

/// Whether a request carries a browser's marks.
fn from_a_browser(headers: &HeaderMap) -> bool {
    BROWSER_MARKS.iter().any(|mark| headers.contains_key(*mark))
        || headers
            .get(header::USER_AGENT)
            .is_some_and(|agent| agent.as_bytes().starts_with(b"Mozilla/"))
}

/// The host names a browser may reach this server under (besides IP literals and
/// `localhost`, always allowed).
#[derive(Clone, Debug, Default)]
pub(crate) struct AllowedHosts {
    /// `*` was listed: any name, as Eureka (which never looks at `Host`).
    any: bool,
    /// Exact names, lower case, without a trailing dot.
    names: Vec<String>,
    /// `*.example.com` as `.example.com`.
    suffixes: Vec<String>,
}

impl AllowedHosts {
    /// This server's own names and its peers' (see the module docs), and
    /// `heureka.security.allowed-hosts`.
    pub(crate) fn from_config(config: &Config, port: u16) -> AllowedHosts {
        let mut hosts = AllowedHosts::default();
        for name in OwnAddress::from_config(config, port).hosts {
            hosts.add(&name);
        }
        let urls = config
            .client
            .service_url
            .values()
            .flatten()
            .chain(&config.eureka_server.my_url);
        for url in urls {
            if let Some(host) = url::Url::parse(url).ok().and_then(|url| {
                url.host_str().map(|host| {
                    host.trim_start_matches('[')
                        .trim_end_matches(']')
                        .to_owned()
                })
            }) {
                hosts.add(&host);
            }
        }
        for pattern in &config.heureka.allowed_hosts {
            hosts.add(pattern);
        }
        hosts
    }

    /// Adds a name or pattern (as [`normalise_pattern`] makes them).
    fn add(&mut self, pattern: &str) {
        let Some(pattern) = normalise_pattern(pattern) else {
            return;
        };
        if pattern == "*" {
            self.any = true;
        } else if let Some(suffix) = pattern.strip_prefix('*') {
            self.suffixes.push(suffix.to_owned());
        } else if !self.names.contains(&pattern) {
            self.names.push(pattern);
        }
    }

    /// Whether a `Host` header value names a host a browser may reach this server under.
    pub(crate) fn allows(&self, host: &str) -> bool {
        if self.any {
            return true;
        }
        let Some(name) = name_of(host) else {
            return false;
        };
        if name.parse::<IpAddr>().is_ok() || name == "localhost" || name.ends_with(".localhost") {
            // `.localhost` names are loopback by RFC 6761, and browsers resolve them so
            // without asking DNS.
            return true;
        }
        self.names.contains(&name) || self.suffixes.iter().any(|suffix| name.ends_with(suffix))
    }
}

/// Why a request is refused: the `Host` it named, for the log line and the answer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ForeignHost {
    /// The `Host` header as sent (lossily decoded), empty when there was none.
    pub(crate) host: String,
}

/// `Some` when a browser's request names a `Host` this server does not answer to (see the
/// module docs). `allowed_origins` are normalised as `cross_site.rs` does.
pub(crate) fn foreign_host(
    headers: &HeaderMap,
    hosts: &AllowedHosts,
    allowed_origins: &[String],
) -> Option<ForeignHost> {
    if hosts.any || !from_a_browser(headers) {
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

/// The name in a `Host` value (`name`, `name:port`, `[v6]:port`), lower case, without a
/// trailing dot; `None` when there is none.
fn name_of(host: &str) -> Option<String> {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split_once(']')?.0
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            Some(_) => return None,
            None => host,
        }
    };
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    (!name.is_empty()).then_some(name)
}

/// A host name or pattern as `heureka.security.allowed-hosts` takes it: a name or IP
/// address, `*`, or `*.` and a name; lower case, without a trailing dot. `None` for anything
/// else (a URL, a port, a path): the entry names hosts only, since the port a browser
/// reaches the server on is no evidence of rebinding.
pub(crate) fn normalise_pattern(text: &str) -> Option<String> {
    let text = text.trim().to_ascii_lowercase();
    if text == "*" {
        return Some(text);
    }
    let unbracketed = text.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = unbracketed.parse::<IpAddr>() {
        return Some(ip.to_string());
    }
    let (wildcard, name) = match text.strip_prefix("*.") {
        Some(name) => ("*.", name),
        None => ("", text.as_str()),
    };
    let name = name.strip_suffix('.').unwrap_or(name);
    let valid = !name.is_empty()
        && name.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    valid.then(|| format!("{wildcard}{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn allowed(patterns: &[&str]) -> AllowedHosts {
        let mut hosts = AllowedHosts::default();
        for pattern in patterns {
            hosts.add(pattern);
        }
        hosts
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn ip_literals_and_localhost_are_always_allowed() {
        let hosts = allowed(&[]);
        for host in [
            "127.0.0.1:8761",
            "10.0.0.7",
            "[::1]:8761",
            "localhost:8761",
            "LOCALHOST.",
            "app.localhost:3000",
        ] {
            assert!(hosts.allows(host), "{host}");
        }
    }

    #[test]
    fn other_names_only_when_listed() {
        let hosts = allowed(&["eureka.example.com", "*.svc.cluster.local"]);
        for host in [
            "eureka.example.com:8761",
            "Eureka.Example.com.",
            "eureka.default.svc.cluster.local:8761",
        ] {
            assert!(hosts.allows(host), "{host}");
        }
        for host in [
            "attacker.example:8761",
            "svc.cluster.local",
            "eureka.example.com.attacker.example",
            "",
            "eureka.example.com:x",
        ] {
            assert!(!hosts.allows(host), "{host}");
        }
        assert!(allowed(&["*"]).allows("attacker.example"));
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

    #[test]
    fn patterns_are_names_wildcards_or_ips() {
        assert_eq!(
            normalise_pattern(" Eureka.Example.com. ").unwrap(),
            "eureka.example.com"
        );
        assert_eq!(
            normalise_pattern("*.Svc.cluster.local").unwrap(),
            "*.svc.cluster.local"
        );
        assert_eq!(normalise_pattern("[::1]").unwrap(), "::1");
        assert_eq!(normalise_pattern("*").unwrap(), "*");
        for bad in [
            "http://eureka.example.com",
            "eureka.example.com:8761",
            "eureka.example.com/",
            "*eureka.example.com",
            "",
            "a..b",
        ] {
            assert_eq!(normalise_pattern(bad), None, "{bad}");
        }
    }
}
