//! One line explaining a certificate failure buried in an error's source chain.
//!
//! HTTP clients wrap rustls's error two or three times (reqwest in hyper in `io::Error`), and
//! `io::Error::source` skips the error it wraps, so the chain is walked by hand.

use std::error::Error;

use rustls::{AlertDescription, CertificateError};

use crate::cert::utc;

/// The first TLS failure found in `error`'s source chain, explained in one line for an
/// operator; `None` when no TLS failure is in it. Worded for the side that connects: "the
/// server's certificate" is the one it was shown.
pub fn explain(error: &(dyn Error + 'static)) -> Option<String> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(tls) = error.downcast_ref::<rustls::Error>() {
            return Some(describe(tls));
        }
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            if let Some(inner) = io.get_ref() {
                if let Some(found) = explain(inner) {
                    return Some(found);
                }
            }
        }
        next = error.source();
    }
    None
}

fn describe(error: &rustls::Error) -> String {
    match error {
        rustls::Error::InvalidCertificate(error) => certificate(error),
        rustls::Error::AlertReceived(alert) => alert_received(*alert),
        rustls::Error::NoCertificatesPresented => {
            "the client presented no certificate and one is required".to_owned()
        }
        rustls::Error::PeerIncompatible(why) => format!(
            "the two sides share no TLS version or cipher suite ({why:?}); Heureka offers \
             TLSv1.2 and TLSv1.3 only"
        ),
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => {
            "the peer did not speak TLS (plain HTTP on an HTTPS port, or the other way round?)"
                .to_owned()
        }
        other => format!("the TLS handshake failed: {other}"),
    }
}

fn certificate(error: &CertificateError) -> String {
    match error {
        CertificateError::ExpiredContext { not_after, .. } => {
            format!(
                "the server's certificate expired on {}",
                utc(seconds(not_after))
            )
        }
        CertificateError::Expired => "the server's certificate has expired".to_owned(),
        CertificateError::NotValidYetContext { not_before, .. } => format!(
            "the server's certificate is not valid until {}",
            utc(seconds(not_before))
        ),
        CertificateError::NotValidYet => "the server's certificate is not valid yet".to_owned(),
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => format!(
            "the server's certificate is not valid for '{}' (it names {})",
            expected.to_str(),
            presented
                .iter()
                .map(|name| bare_name(name))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        CertificateError::NotValidForName => {
            "the server's certificate is not valid for the name connected to".to_owned()
        }
        CertificateError::UnknownIssuer => "the server's certificate was issued by an unknown \
             authority (not in the trust store)"
            .to_owned(),
        CertificateError::Revoked => "the server's certificate has been revoked".to_owned(),
        CertificateError::BadSignature => {
            "the server's certificate has a signature that does not verify".to_owned()
        }
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            "the server's certificate is not meant for this use (its extended key usage)".to_owned()
        }
        other => format!("the server's certificate was refused ({other})"),
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
    fn an_error_without_a_tls_cause_has_no_explanation() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(explain(&Wrapper(Box::new(refused))), None);
    }
}
