//! The names a certificate gives its holder, for mapping a client certificate to a user.

use rustls::pki_types::CertificateDer;

/// The subject's common names, then the DNS names, emails and URIs of its subject alternative
/// names, in the certificate's order; empty when the certificate does not parse.
pub fn certificate_names(cert: &CertificateDer<'_>) -> Vec<String> {
    crate::cert::names(cert)
}
