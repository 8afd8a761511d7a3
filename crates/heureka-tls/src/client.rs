//! The client's rustls configuration: whom it trusts and what it presents when asked.

use rustls::pki_types::CertificateDer;

use crate::{Identity, TlsError};

/// A client configuration trusting `trust` (or, when `None`, the `webpki-roots` Mozilla roots)
/// and presenting `identity` to a server that asks for a certificate.
pub fn client_config(
    trust: Option<Vec<CertificateDer<'static>>>,
    identity: Option<Identity>,
) -> Result<rustls::ClientConfig, TlsError> {
    unimplemented!("{trust:?} {identity:?}")
}
