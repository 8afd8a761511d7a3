//! PEM identities: a certificate chain file and a private key file, the key possibly encrypted.

use std::path::PathBuf;

use pkcs8::EncryptedPrivateKeyInfoRef;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::error::TlsError;
use crate::files::read_file;

/// How the keys of a PEM identity are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PemNaming {
    /// `{prefix}.certificate`, `.certificate-private-key`, `.key-password`: `server.ssl`.
    ServerSsl,
    /// `{prefix}.certificate`, `.private-key`, `.private-key-password`: prefix
    /// `spring.ssl.bundle.pem.web.keystore`.
    Bundle,
}

/// A certificate chain and its private key, as PEM files. Its `Debug` hides the password.
#[derive(Clone, PartialEq, Eq)]
pub struct PemIdentitySpec {
    pub certificate: PathBuf,
    pub private_key: PathBuf,
    /// For a key in `BEGIN ENCRYPTED PRIVATE KEY` (PKCS#8, PBES2); ignored for a plain key.
    pub private_key_password: Option<String>,
    pub key_prefix: String,
    pub naming: PemNaming,
}

impl std::fmt::Debug for PemIdentitySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let password = self.private_key_password.as_ref().map(|_| "[hidden]");
        f.debug_struct("PemIdentitySpec")
            .field("certificate", &self.certificate)
            .field("private_key", &self.private_key)
            .field("private_key_password", &password)
            .field("key_prefix", &self.key_prefix)
            .field("naming", &self.naming)
            .finish()
    }
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
        format!("{}.certificate", self.key_prefix)
    }

    /// The key naming the private key file.
    pub fn private_key_key(&self) -> String {
        match self.naming {
            PemNaming::ServerSsl => format!("{}.certificate-private-key", self.key_prefix),
            PemNaming::Bundle => format!("{}.private-key", self.key_prefix),
        }
    }

    /// The key naming the private key's password.
    pub fn private_key_password_key(&self) -> String {
        match self.naming {
            PemNaming::ServerSsl => format!("{}.key-password", self.key_prefix),
            PemNaming::Bundle => format!("{}.private-key-password", self.key_prefix),
        }
    }

    /// The certificates of the certificate file, in file order, and the private key.
    pub(crate) fn load(
        &self,
    ) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), TlsError> {
        let chain = read_certificates(&self.certificate, &self.certificate_key())?;
        let key = self.load_key()?;
        Ok((chain, key))
    }

    fn load_key(&self) -> Result<PrivateKeyDer<'static>, TlsError> {
        let path = &self.private_key;
        let bytes = read_file(path, || self.private_key_key())?;
        let text = String::from_utf8_lossy(&bytes);
        if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
            return self.decrypt(&text);
        }
        if text.contains("Proc-Type: 4,ENCRYPTED") {
            return Err(TlsError::new(
                self.private_key_key(),
                format!(
                    "{} is encrypted the legacy OpenSSL way, which is not supported; convert \
                     it to PKCS#8 (openssl pkcs8 -topk8 -v2 aes-256-cbc) or decrypt it \
                     (openssl pkey)",
                    path.display()
                ),
            ));
        }
        PrivateKeyDer::from_pem_slice(&bytes).map_err(|error| {
            TlsError::new(
                self.private_key_key(),
                format!("no private key in {} ({error})", path.display()),
            )
        })
    }

    /// Decrypts a PKCS#8 `ENCRYPTED PRIVATE KEY` with the configured password.
    fn decrypt(&self, text: &str) -> Result<PrivateKeyDer<'static>, TlsError> {
        let path = self.private_key.display();
        let Some(password) = &self.private_key_password else {
            return Err(TlsError::new(
                self.private_key_password_key(),
                format!("the private key in {path} is encrypted and no password is set"),
            ));
        };
        // The file may hold other sections; only the encrypted key's is decoded.
        let start = text.find("-----BEGIN ENCRYPTED PRIVATE KEY-----");
        let end_marker = "-----END ENCRYPTED PRIVATE KEY-----";
        let section = start.and_then(|start| {
            let end = text[start..].find(end_marker)? + start + end_marker.len();
            Some(&text[start..end])
        });
        let malformed = |what: String| {
            TlsError::new(
                self.private_key_key(),
                format!("{path}: a malformed encrypted key ({what})"),
            )
        };
        let section = section.ok_or_else(|| malformed("no END line".to_owned()))?;
        let (_, der) = pkcs8::der::pem::decode_vec(section.as_bytes())
            .map_err(|error| malformed(error.to_string()))?;
        let info = EncryptedPrivateKeyInfoRef::try_from(&der[..])
            .map_err(|error| malformed(error.to_string()))?;
        let plain = info.decrypt(password.as_bytes()).map_err(|error| {
            TlsError::new(
                self.private_key_password_key(),
                format!("cannot decrypt the private key in {path}: wrong password? ({error})"),
            )
        })?;
        Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            plain.as_bytes().to_vec(),
        )))
    }
}

/// Every certificate in a PEM file; none is an error naming `key`.
pub(crate) fn read_certificates(
    path: &std::path::Path,
    key: &str,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bytes = read_file(path, || key.to_owned())?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| TlsError::new(key, format!("{}: {error}", path.display())))?;
    if certs.is_empty() {
        return Err(TlsError::new(
            key,
            format!("no certificate (BEGIN CERTIFICATE) in {}", path.display()),
        ));
    }
    Ok(certs)
}
