//! The client's rustls configuration: whom it trusts and what it presents when asked.

use rustls::pki_types::CertificateDer;
use rustls::RootCertStore;

use crate::error::TlsError;
use crate::identity::Identity;
use crate::provider::provider;

/// The keys errors name: what a client is configured by.
const TRUST_KEY: &str = "eureka.client.tls.trust-store";
const IDENTITY_KEY: &str = "eureka.client.tls.key-store";

/// A client configuration trusting `trust`, or when `None` the Mozilla roots of
/// `webpki-roots` (Java's counterpart is its bundled `cacerts`, not the operating system's
/// store), and presenting `identity` to a server that asks for a certificate.
pub fn client_config(
    trust: Option<Vec<CertificateDer<'static>>>,
    identity: Option<Identity>,
) -> Result<rustls::ClientConfig, TlsError> {
    let mut roots = RootCertStore::empty();
    match trust {
        Some(certs) => {
            for cert in certs {
                roots.add(cert).map_err(|error| {
                    TlsError::new(
                        TRUST_KEY,
                        format!("a certificate rustls cannot trust ({error})"),
                    )
                })?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|error| TlsError::new(TRUST_KEY, error.to_string()))?
        .with_root_certificates(roots);
    match identity {
        None => Ok(builder.with_no_client_auth()),
        Some(identity) => builder
            .with_client_auth_cert(identity.chain, identity.key)
            .map_err(|error| {
                TlsError::new(
                    IDENTITY_KEY,
                    format!("an unusable client identity ({error})"),
                )
            }),
    }
}
