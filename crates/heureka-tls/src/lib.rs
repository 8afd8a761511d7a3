//! TLS material the way Spring Boot's keys describe it, and the rustls configurations built from it.
//!
//! The server serves HTTPS configured by `server.ssl.*` (or an SSL bundle); peers and clients
//! connect trusting what `eureka.client.tls.*` says. This crate loads the material (PEM files,
//! PKCS12 and JKS stores), checks what Java would refuse at start-up (wrong passwords, a missing
//! alias, an expired certificate, a key that is not the certificate's), and builds
//! [`rustls::ServerConfig`] and [`rustls::ClientConfig`] with the *ring* provider installed
//! explicitly, so no process-wide default provider is ever consulted.
//!
//! Every error is a [`TlsError`] naming the exact key the user wrote, so a start-up failure is
//! one line that points at the line of configuration to fix.
//!
//! Decisions worth knowing:
//! * JKS is read by this crate's own small reader (`jks.rs`), not the `jks` crate: see that
//!   module's documentation for why.
//! * Encrypted PEM private keys are supported when they are PKCS#8 (`BEGIN ENCRYPTED PRIVATE
//!   KEY`, PBES2), through the `pkcs8` crate already in the tree for PKCS12; legacy OpenSSL
//!   encryption (`Proc-Type: 4,ENCRYPTED`) is refused with advice to convert the key.
//! * With no trust configured, a client trusts the Mozilla roots of `webpki-roots`, the
//!   counterpart of the JDK's own `cacerts` (Java does not read the operating system's store
//!   either), which also works unchanged in a distroless image.
//! * A PKCS12 store has one password for the store and its keys (as Java's PKCS12 writes them),
//!   so a key password set for a PKCS12 store is not consulted.
//! * A store's declared type ([`KeyStoreSpec::kind`]) does not decide how it is read: its first
//!   bytes do, as Java 9+'s `keystore.type.compat` reads a "JKS" that is PKCS12 and the other
//!   way round. The caller refuses a type [`StoreKind::parse`] does not know.
//! * A store holding several keys and no `key-alias` is refused (naming the alias key and
//!   listing the aliases) where Java takes whichever its map yields first.
//! * `client-auth` `want` without trust is refused as `need` is: Java would verify client
//!   certificates against the public roots of its `cacerts`, never what a registry means.
//! * Client certificates are verified by rustls's WebPKI verifier alone, so a chain holding an
//!   X.509 v1 or v2 certificate (which Java accepts) is refused; `verifier.rs` only makes the
//!   refusal say so, for [`explain_refusal`] and the server's log.
//! * The keys named by errors: a store's and a PEM identity's as the spec's naming says
//!   ([`StoreNaming`], [`PemNaming`]); `server.ssl.enabled-protocols`, `server.ssl.ciphers` and
//!   `server.ssl.client-auth` for the server's options; `eureka.client.tls.trust-store` and
//!   `.key-store` for a client configuration rustls refuses; `identity` for
//!   [`Identity::certified_key`], which only fails for an identity `Identity::load` did not make.

mod cert;
mod client;
mod explain;
mod identity;
mod jks;
mod names;
mod pem;
mod server;
mod store;
mod trust;
mod verifier;

use std::fmt;

pub use rustls;
pub use rustls::pki_types::{CertificateDer, PrivateKeyDer};

pub use client::client_config;
pub use explain::{explain, explain_refusal};
pub use identity::{Identity, IdentitySource};
pub use names::certificate_names;
pub use pem::{PemIdentitySpec, PemNaming};
pub use server::{server_config, ClientAuth, ServerTlsSpec};
pub use store::{KeyStoreSpec, StoreKey, StoreKind, StoreNaming};
pub use trust::{load_trust, TrustSource};
pub use verifier::NotVersion3;

/// A TLS setting that cannot be used: the key the user wrote and why, shown on one line as
/// `"{key}: {reason}"`, e.g.
/// `server.ssl.key-store-password: wrong password for /path/ks.p12 (PKCS12)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsError {
    pub key: String,
    pub reason: String,
}

impl TlsError {
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> Self {
        TlsError {
            key: key.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One line whatever a library put in the reason: the binary prints it as its exit message.
        let reason = self.reason.replace(['\n', '\r'], " ");
        write!(f, "{}: {}", self.key, reason)
    }
}

impl std::error::Error for TlsError {}

/// The one crypto provider everything here uses, built explicitly rather than read from
/// rustls's process-wide default, so two crates in one binary cannot disagree about it.
fn provider() -> std::sync::Arc<rustls::crypto::CryptoProvider> {
    std::sync::Arc::new(rustls::crypto::ring::default_provider())
}

/// A file's bytes; a failure names `key`, the setting that points at the file.
fn read_file(path: &std::path::Path, key: impl FnOnce() -> String) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|error| {
        let reason = match error.kind() {
            std::io::ErrorKind::NotFound => format!("no such file: {}", path.display()),
            _ => format!("cannot read {}: {error}", path.display()),
        };
        TlsError::new(key(), reason)
    })
}
