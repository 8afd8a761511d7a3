//! Where a request comes from, in the two senses the server's rules use.
//!
//! * A browser page's origin (`Origin: scheme://host:port`), compared with the server's own
//!   and with `heureka.security.allowed-origins` to refuse cross-site writes
//!   (`http/cross_site.rs`, the rule [`foreign_write`]) and trust a page under any `Host`
//!   (`http/hosts.rs`): two spellings of one origin must compare equal, so both sides
//!   normalise with [`normalise_origin`].
//! * Eureka's origin of a write ([`Origin`]): a peer's replica, applied but never replicated
//!   again, or a client's write. A write is a peer's only when it carries
//!   `x-netflix-discovery-replication: true` ([`write_origin`]); the roles (a replica needs
//!   `peer`), the gate that takes replication only from peers and the audit trail (replicas
//!   are not audited again) all read it the same way.

use axum::http::HeaderName;
use heureka_core::Origin;

/// The header peers put on replicated writes; they are applied but never replicated again.
pub(crate) const REPLICATION_HEADER: HeaderName =
    HeaderName::from_static("x-netflix-discovery-replication");

/// The origin of a write whose [`REPLICATION_HEADER`] is `value`: Eureka treats a write as a
/// replica only when the header is exactly `true`.
#[inline]
pub(crate) fn write_origin(value: Option<&[u8]>) -> Origin {
    match value {
        Some(b"true") => Origin::Peer,
        _ => Origin::Client,
    }
}

/// Why a write is foreign, for its log line and its answer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Foreign {
    /// The `Origin` header as sent (lossily decoded), if any.
    pub(crate) origin: Option<String>,
    pub(crate) why: &'static str,
}

/// `Some` when a write must be refused as a browser's from another site's page
/// (`http/cross_site.rs`'s module docs): `origin` is its `Origin` header, `cross_site` whether
/// its `Sec-Fetch-Site` says `cross-site`, `host` its `Host`, and `allowed` the normalised
/// `heureka.security.allowed-origins`.
pub(crate) fn foreign_write(
    origin: Option<&[u8]>,
    cross_site: bool,
    host: Option<&str>,
    allowed: &[String],
) -> Option<Foreign> {
    // What every client and peer sends: neither header.
    if origin.is_none() && !cross_site {
        return None;
    }
    let origin_text = origin.map(|value| String::from_utf8_lossy(value).into_owned());
    let normalised = origin_text.as_deref().and_then(normalise_origin);
    if normalised
        .as_ref()
        .is_some_and(|origin| allowed.iter().any(|allowed| allowed == origin))
    {
        return None;
    }
    let refuse = |why| {
        Some(Foreign {
            origin: origin_text.clone(),
            why,
        })
    };
    if cross_site {
        return refuse("Sec-Fetch-Site is cross-site");
    }
    let origin = origin?;
    if origin == b"null" {
        return refuse("Origin is null");
    }
    let Some(normalised) = normalised else {
        return refuse("Origin is not an http(s) origin");
    };
    if is_own(&normalised, host) {
        None
    } else {
        refuse("Origin is not this server's")
    }
}

/// Whether a normalised origin names the host and port the request was sent to (its `Host`;
/// without a port there, the origin scheme's default port).
fn is_own(origin: &str, host: Option<&str>) -> bool {
    let Some(host) = host else {
        return false;
    };
    let Some((scheme, _)) = origin.split_once("://") else {
        return false;
    };
    normalise_origin(&format!("{scheme}://{host}")).is_some_and(|own| own == origin)
}

/// An origin as `scheme://host:port`: lower case, the scheme's default port written out, so
/// that two spellings of one origin compare equal. `None` for anything but an `http` or
/// `https` origin without path, query or credentials (a trailing `/` is allowed, as people
/// write it in configuration).
pub(crate) fn normalise_origin(text: &str) -> Option<String> {
    let url = url::Url::parse(text.trim()).ok()?;
    let plain = matches!(url.scheme(), "http" | "https")
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none()
        && url.username().is_empty()
        && url.password().is_none();
    if !plain {
        return None;
    }
    let host = url.host_str()?;
    let port = url.port_or_known_default()?;
    Some(format!("{}://{host}:{port}", url.scheme()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_normalise_to_scheme_host_and_port() {
        assert_eq!(
            normalise_origin("HTTPS://Ui.Example.com").as_deref(),
            Some("https://ui.example.com:443")
        );
        assert_eq!(
            normalise_origin("http://localhost:3000/").as_deref(),
            Some("http://localhost:3000")
        );
    }

    #[test]
    fn anything_but_a_plain_http_origin_is_no_origin() {
        for text in [
            "null",
            "*",
            "ui.example.com",
            "ftp://ui.example.com",
            "https://ui.example.com/app",
            "https://user@ui.example.com",
            "https://ui.example.com?x",
            "",
        ] {
            assert_eq!(normalise_origin(text), None, "{text}");
        }
    }

    #[test]
    fn only_a_replication_header_of_exactly_true_makes_a_peers_write() {
        assert_eq!(write_origin(Some(b"true")), Origin::Peer);
        for value in [None, Some(&b"TRUE"[..]), Some(b"false"), Some(b"")] {
            assert_eq!(write_origin(value), Origin::Client, "{value:?}");
        }
    }
}
