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
mod error;
mod explain;
mod files;
mod identity;
mod jks;
mod names;
mod pem;
mod provider;
mod server;
mod store;
mod trust;
mod verifier;

pub use rustls;
pub use rustls::pki_types::{CertificateDer, PrivateKeyDer};

pub use cert::civil_from_days;
pub use client::client_config;
pub use error::TlsError;
pub use explain::{explain, explain_refusal};
pub use identity::{Identity, IdentitySource};
pub use names::certificate_names;
pub use pem::{PemIdentitySpec, PemNaming};
pub use server::{server_config, ClientAuth, ServerTlsSpec};
pub use store::{KeyStoreSpec, StoreKey, StoreKind, StoreNaming};
pub use trust::{load_trust, TrustSource};
pub use verifier::NotVersion3;
