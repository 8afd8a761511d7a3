//! The client-certificate verifier: rustls's WebPKI verifier, unchanged in what it accepts, with
//! a refusal that says why where rustls's only says "other error".
//!
//! WebPKI accepts only X.509 v3 certificates below the trust anchors, by design: a v1 or v2
//! certificate carries no extensions, so nothing says whether it is a CA or an end entity, what
//! its key may be used for, or which names it may issue for. Tomcat (through the JDK) accepts a
//! v1 client certificate, which is what `openssl x509 -req` makes without `-extfile`; rustls
//! refuses it as `UnsupportedCertVersion`, which reaches the client as a bare
//! `certificate_unknown` alert and the server's log as nothing it could act on. Accepting v1
//! would need a chain verifier of our own beside WebPKI's, the one piece of TLS least worth
//! writing twice, so the certificate is refused, and the refusal names the version
//! ([`NotVersion3`]), which `explain_refusal` words for the operator.

use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    CertificateError, DigitallySignedStruct, DistinguishedName, OtherError, SignatureScheme,
};
use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer;

/// A certificate in a client's chain whose X.509 version is not 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotVersion3 {
    /// 1 or 2, as people name versions (the field holds one less).
    pub version: u32,
    /// Whether it is the client's own certificate rather than one of its intermediates.
    pub end_entity: bool,
}

impl std::fmt::Display for NotVersion3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let which = match self.end_entity {
            true => "client certificate",
            false => "an intermediate certificate of the client's chain",
        };
        write!(
            f,
            "{which} is X.509 v{}; only v3 certificates are accepted",
            self.version
        )
    }
}

impl std::error::Error for NotVersion3 {}

/// WebPKI's verifier; on a refusal, a chain holding a v1 or v2 certificate is said to be the
/// cause. What is accepted is exactly what WebPKI accepts.
#[derive(Debug)]
pub(crate) struct ExplainingVerifier(pub(crate) Arc<dyn ClientCertVerifier>);

impl ClientCertVerifier for ExplainingVerifier {
    fn offer_client_auth(&self) -> bool {
        self.0.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.0.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.0.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        self.0
            .verify_client_cert(end_entity, intermediates, now)
            .map_err(|refused| {
                // WebPKI's own word for a version it does not support is vague (an encoding
                // or "other" error); a named reason (unknown issuer, expired…) is kept, so a
                // v1 certificate elsewhere in the chain never hides it.
                let vague = matches!(
                    refused,
                    rustls::Error::InvalidCertificate(
                        CertificateError::BadEncoding | CertificateError::Other(_)
                    )
                );
                // Only read once WebPKI has refused: an accepted handshake parses nothing more.
                match not_version_3(end_entity, intermediates).filter(|_| vague) {
                    Some(found) => rustls::Error::InvalidCertificate(CertificateError::Other(
                        OtherError(Arc::new(found)),
                    )),
                    None => refused,
                }
            })
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The first certificate of the chain, leaf first, that is not X.509 v3.
fn not_version_3(
    end_entity: &CertificateDer<'_>,
    intermediates: &[CertificateDer<'_>],
) -> Option<NotVersion3> {
    std::iter::once(end_entity)
        .chain(intermediates)
        .enumerate()
        .find_map(|(index, cert)| {
            let (_, x509) = X509Certificate::from_der(cert.as_ref()).ok()?;
            let version = x509.version().0;
            (version < 2).then_some(NotVersion3 {
                version: version + 1,
                end_entity: index == 0,
            })
        })
}
