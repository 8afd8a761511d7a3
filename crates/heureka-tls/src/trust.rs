//! Trust material: the certificates a side accepts its peer's chain from.

use std::path::PathBuf;

use rustls::pki_types::CertificateDer;

use crate::{KeyStoreSpec, TlsError};

/// Where trusted certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustSource {
    /// PEM files (`server.ssl.trust-certificate`), named in errors as that key.
    Pem(Vec<PathBuf>),
    /// PEM files named in errors by `key`, e.g. `spring.ssl.bundle.pem.web.truststore.certificate`.
    NamedPem { key: String, paths: Vec<PathBuf> },
    /// All trusted-certificate entries of a store, and the certificates of its key entries.
    Store(KeyStoreSpec),
}

/// Loads every trusted certificate of `source`; none at all is an error.
pub fn load_trust(source: &TrustSource) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    unimplemented!("{source:?}")
}
