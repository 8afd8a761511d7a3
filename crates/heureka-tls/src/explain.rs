//! One line explaining a certificate failure buried in an error's source chain.
//!
//! HTTP clients wrap rustls's error two or three times (reqwest in hyper in `io::Error`), and
//! `io::Error::source` skips the error it wraps, so the chain is walked by hand.

use std::error::Error;

use rustls::{AlertDescription, CertificateError};

use crate::cert::utc;
use crate::verifier::NotVersion3;

/// Which end of the handshake is explaining: the one that connected (and was shown the
/// server's certificate) or the server that accepted (and was shown the client's).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Connecting,
    Accepting,
}

/// The first TLS failure found in `error`'s source chain, explained in one line for an
/// operator; `None` when no TLS failure is in it. Worded for the side that connects: "the
/// server's certificate" is the one it was shown.
pub fn explain(error: &(dyn Error + 'static)) -> Option<String> {
    find(error, Side::Connecting)
}

/// The same for a server that refused a handshake (tokio-rustls's accept error): "the client
/// certificate" is the one it was shown. `None` when no TLS failure is in the chain (the
/// client closed or reset the connection, a port probe): nothing was refused.
pub fn explain_refusal(error: &(dyn Error + 'static)) -> Option<String> {
    find(error, Side::Accepting)
}

fn find(error: &(dyn Error + 'static), side: Side) -> Option<String> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(tls) = error.downcast_ref::<rustls::Error>() {
            return Some(describe(tls, side));
        }
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            if let Some(inner) = io.get_ref() {
                if let Some(found) = find(inner, side) {
                    return Some(found);
                }
            }
        }
        next = error.source();
    }
    None
}

fn describe(error: &rustls::Error, side: Side) -> String {
    match error {
        rustls::Error::InvalidCertificate(error) => certificate(error, side),
        rustls::Error::AlertReceived(alert) => match side {
            Side::Connecting => alert_received(*alert),
            Side::Accepting => alert_from_client(*alert),
        },
        rustls::Error::NoCertificatesPresented => {
            "the client presented no certificate and one is required".to_owned()
        }
        rustls::Error::PeerIncompatible(why) => format!(
            "the two sides share no TLS version or cipher suite ({why:?}); Heureka offers \
             TLSv1.2 and TLSv1.3 only"
        ),
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => match side
        {
            Side::Connecting => "the peer did not speak TLS (plain HTTP on an HTTPS port, or \
                                     the other way round?)"
                .to_owned(),
            Side::Accepting => {
                "the client did not speak TLS (plain HTTP on an HTTPS port?)".to_owned()
            }
        },
        other => format!("the TLS handshake failed: {other}"),
    }
}

fn certificate(error: &CertificateError, side: Side) -> String {
    let whose = match side {
        Side::Connecting => "the server's certificate",
        Side::Accepting => "the client certificate",
    };
    match error {
        CertificateError::ExpiredContext { not_after, .. } => {
            format!("{whose} expired on {}", utc(seconds(not_after)))
        }
        CertificateError::Expired => format!("{whose} has expired"),
        CertificateError::NotValidYetContext { not_before, .. } => {
            format!("{whose} is not valid until {}", utc(seconds(not_before)))
        }
        CertificateError::NotValidYet => format!("{whose} is not valid yet"),
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => format!(
            "{whose} is not valid for '{}' (it names {})",
            expected.to_str(),
            presented
                .iter()
                .map(|name| bare_name(name))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        CertificateError::NotValidForName => {
            format!("{whose} is not valid for the name connected to")
        }
        CertificateError::UnknownIssuer => {
            format!("{whose} was issued by an unknown authority (not in the trust store)")
        }
        CertificateError::Revoked => format!("{whose} has been revoked"),
        CertificateError::BadSignature => {
            format!("{whose} has a signature that does not verify")
        }
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            format!("{whose} is not meant for this use (its extended key usage)")
        }
        CertificateError::Other(other) => match other.0.downcast_ref::<NotVersion3>() {
            // The verifier's own refusal (`verifier.rs`), with what to do about it.
            Some(found) => format!(
                "{found}: re-issue it with extensions (openssl x509 -req -extfile holding \
                 basicConstraints=CA:FALSE and keyUsage=digitalSignature,keyEncipherment)"
            ),
            None => format!("{whose} was refused ({error})"),
        },
        other => format!("{whose} was refused ({other})"),
    }
}

/// An alert a client sent the server: it refused what the server showed it.
fn alert_from_client(alert: AlertDescription) -> String {
    match alert {
        AlertDescription::UnknownCA => "the client does not trust the authority that issued the \
             server's certificate (is it in the client's trust store?)"
            .to_owned(),
        AlertDescription::CertificateExpired => {
            "the client refused the server's certificate as expired".to_owned()
        }
        AlertDescription::BadCertificate
        | AlertDescription::CertificateUnknown
        | AlertDescription::UnsupportedCertificate
        | AlertDescription::AccessDenied => {
            format!("the client refused the server's certificate ({alert:?})")
        }
        other => format!("the client ended the handshake with the alert {other:?}"),
    }
}

fn alert_received(alert: AlertDescription) -> String {
    match alert {
        AlertDescription::CertificateRequired => {
            "the server asked for a client certificate and none is configured".to_owned()
        }
        AlertDescription::UnknownCA => "the server does not trust the authority that issued \
             the client certificate"
            .to_owned(),
        AlertDescription::CertificateExpired => {
            "the server refused the client certificate as expired".to_owned()
        }
        AlertDescription::BadCertificate
        | AlertDescription::CertificateUnknown
        | AlertDescription::UnsupportedCertificate
        | AlertDescription::AccessDenied => {
            format!("the server refused the client certificate ({alert:?})")
        }
        AlertDescription::ProtocolVersion | AlertDescription::HandshakeFailure => format!(
            "the server refused the handshake ({alert:?}): no TLS version or cipher suite in \
             common, or it wanted a client certificate"
        ),
        other => format!("the peer ended the handshake with the alert {other:?}"),
    }
}

/// `wrong.example` of rustls's `DnsName("wrong.example")`, `127.0.0.1` of `IpAddress(127.0.0.1)`:
/// rustls lists presented names in their Debug form.
fn bare_name(presented: &str) -> &str {
    presented
        .split_once('(')
        .and_then(|(_, inner)| inner.strip_suffix(')'))
        .map_or(presented, |inner| inner.trim_matches('"'))
}

fn seconds(time: &rustls::pki_types::UnixTime) -> i64 {
    i64::try_from(time.as_secs()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::*;

    /// An error that only wraps another, as reqwest's and hyper's do.
    #[derive(Debug)]
    struct Wrapper(Box<dyn Error + Send + Sync>);

    impl fmt::Display for Wrapper {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("error sending request")
        }
    }

    impl Error for Wrapper {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&*self.0)
        }
    }

    #[test]
    fn a_tls_failure_inside_an_io_error_inside_a_client_error_is_found() {
        let tls = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, tls);
        let wrapped = Wrapper(Box::new(io));
        assert_eq!(
            explain(&wrapped).as_deref(),
            Some("the server's certificate was issued by an unknown authority (not in the trust store)")
        );
    }

    #[test]
    fn a_refused_v1_client_certificate_is_explained_to_the_server_with_what_to_do() {
        let v1 = NotVersion3 {
            version: 1,
            end_entity: true,
        };
        let tls = rustls::Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(
            std::sync::Arc::new(v1),
        )));
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, tls);
        let reason = explain_refusal(&io).unwrap();
        assert!(
            reason.starts_with(
                "client certificate is X.509 v1; only v3 certificates are accepted: re-issue it"
            ),
            "{reason}"
        );
        assert!(reason.contains("basicConstraints"), "{reason}");
    }

    #[test]
    fn the_server_words_a_refusal_for_the_client_certificate() {
        let unknown = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
        assert_eq!(
            explain_refusal(&std::io::Error::new(std::io::ErrorKind::InvalidData, unknown))
                .as_deref(),
            Some("the client certificate was issued by an unknown authority (not in the trust store)")
        );
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert_eq!(explain_refusal(&reset), None, "nothing was refused");
    }

    #[test]
    fn an_error_without_a_tls_cause_has_no_explanation() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(explain(&Wrapper(Box::new(refused))), None);
    }
}
