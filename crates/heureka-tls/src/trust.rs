//! Trust material: the certificates a side accepts its peer's chain from.

use std::path::PathBuf;

use rustls::pki_types::CertificateDer;

use crate::error::TlsError;
use crate::pem::read_certificates;
use crate::store::KeyStoreSpec;

/// The key `TrustSource::Pem` files are named by in errors.
const SERVER_TRUST_CERTIFICATE: &str = "server.ssl.trust-certificate";

/// Where trusted certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustSource {
    /// PEM files, named in errors as `server.ssl.trust-certificate`.
    Pem(Vec<PathBuf>),
    /// PEM files named in errors by `key`, e.g. `spring.ssl.bundle.pem.web.truststore.certificate`.
    NamedPem { key: String, paths: Vec<PathBuf> },
    /// All trusted-certificate entries of a store, and the certificates of its key entries.
    Store(KeyStoreSpec),
}

/// Loads every trusted certificate of `source`; none at all is an error, since trusting
/// nothing refuses every peer.
pub fn load_trust(source: &TrustSource) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let (key, paths) = match source {
        TrustSource::Store(store) => return store.load_certificates(),
        TrustSource::Pem(paths) => (SERVER_TRUST_CERTIFICATE, paths),
        TrustSource::NamedPem { key, paths } => (key.as_str(), paths),
    };
    if paths.is_empty() {
        return Err(TlsError::new(key, "no certificate file given"));
    }
    let mut certs = Vec::new();
    for path in paths {
        certs.extend(read_certificates(path, key)?);
    }
    Ok(certs)
}
