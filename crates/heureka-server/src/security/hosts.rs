//! DNS rebinding: a browser request must name, in `Host`, a name this server answers to.
//!
//! A page at `http://attacker.example:8761` can make its name resolve to the registry's
//! address once loaded (DNS rebinding). The browser then treats the registry as that page's
//! own origin: the page reads the registry and passes the origin check of `http/cross_site.rs`
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
//! Which requests carry a browser's marks, and the refusal, are the HTTP side's
//! (`http/hosts.rs`); this module is which names are this server's.

use std::net::IpAddr;

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
    /// The names and patterns given (as [`normalise_pattern`] makes them; anything else is
    /// left out): this server's own names and its peers' (see the module docs), and
    /// `heureka.security.allowed-hosts`.
    pub(crate) fn new<'a>(patterns: impl IntoIterator<Item = &'a str>) -> AllowedHosts {
        let mut hosts = AllowedHosts::default();
        for pattern in patterns {
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

    /// Whether `*` was listed: any name passes, as in Eureka (which never looks at `Host`).
    pub(crate) fn allows_any(&self) -> bool {
        self.any
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

    fn allowed(patterns: &[&str]) -> AllowedHosts {
        AllowedHosts::new(patterns.iter().copied())
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
