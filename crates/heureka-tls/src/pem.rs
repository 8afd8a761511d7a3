//! PEM identities: a certificate chain file and a private key file, the key possibly encrypted.

use std::path::PathBuf;

/// How the keys of a PEM identity are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PemNaming {
    /// `{prefix}.certificate`, `.certificate-private-key`, `.key-password`: `server.ssl`.
    ServerSsl,
    /// `{prefix}.certificate`, `.private-key`, `.private-key-password`: prefix
    /// `spring.ssl.bundle.pem.web.keystore`.
    Bundle,
}

/// A certificate chain and its private key, as PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PemIdentitySpec {
    pub certificate: PathBuf,
    pub private_key: PathBuf,
    pub private_key_password: Option<String>,
    pub key_prefix: String,
    pub naming: PemNaming,
}

impl PemIdentitySpec {
    pub fn new(
        certificate: impl Into<PathBuf>,
        private_key: impl Into<PathBuf>,
        key_prefix: impl Into<String>,
        naming: PemNaming,
    ) -> Self {
        PemIdentitySpec {
            certificate: certificate.into(),
            private_key: private_key.into(),
            private_key_password: None,
            key_prefix: key_prefix.into(),
            naming,
        }
    }

    /// The key naming the certificate file.
    pub fn certificate_key(&self) -> String {
        unimplemented!()
    }

    /// The key naming the private key file.
    pub fn private_key_key(&self) -> String {
        unimplemented!()
    }

    /// The key naming the private key's password.
    pub fn private_key_password_key(&self) -> String {
        unimplemented!()
    }
}
