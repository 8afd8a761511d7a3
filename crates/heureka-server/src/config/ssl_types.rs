//! The TLS settings as the rest of the server sees them: how this server serves HTTPS and how
//! it reaches its peers over HTTPS. Every value keeps the name of the key it came from, so the
//! errors found when the files are read at start-up (`crate::tls`) name the key the user wrote.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// How this server serves HTTPS: `server.ssl.*`, or the bundle `server.ssl.bundle` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SslConfig {
    /// The server's certificate chain and private key.
    pub identity: KeySource,
    /// Whom client certificates must be issued by: `server.ssl.trust-store` or
    /// `trust-certificate`, or the bundle's trust store. Needed for `client-auth` want/need.
    pub trust: Option<TrustSource>,
    /// `server.ssl.client-auth`, default `none`.
    pub client_auth: ClientAuth,
    /// `server.ssl.enabled-protocols` (or the bundle's `options.enabled-protocols`), as
    /// written; empty offers TLS 1.2 and 1.3. Nothing older is ever offered.
    pub protocols: Vec<Named<String>>,
    /// `server.ssl.ciphers` (or the bundle's `options.ciphers`), IANA names; empty means
    /// rustls's defaults, which are all safe.
    pub ciphers: Vec<Named<String>>,
    /// The bundle's `reload-on-update`: the files are watched and new connections get the
    /// new certificate. Always `false` without a bundle, as in Spring Boot.
    pub reload_on_update: bool,
    /// `spring.ssl.bundle.watch.file.quiet-period`, default `10s`: a changed file is re-read
    /// once it has stayed unchanged this long, so a half-written file is never loaded.
    pub quiet_period: Duration,
}

/// A value with the key it was read from, for errors found when its file is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named<T> {
    pub key: String,
    pub value: T,
}

/// A password: its `Debug` shows no characters, so logging a configuration leaks nothing.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Where a certificate chain and its private key are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// PEM files: `server.ssl.certificate` and `certificate-private-key`, or a PEM bundle's
    /// `keystore.certificate` and `keystore.private-key`.
    Pem {
        certificate: Named<PathBuf>,
        private_key: Named<PathBuf>,
        private_key_password: Option<Named<Secret>>,
    },
    /// A PKCS12 or JKS key store: `server.ssl.key-store` and its companions, or a JKS
    /// bundle's `keystore.*` and `key.*`.
    Store {
        store: StoreConfig,
        /// `key-alias`: the entry to serve; unset takes the store's only key entry.
        alias: Option<Named<String>>,
        /// `key-password`: the entry's own password; unset means the store's.
        key_password: Option<Named<Secret>>,
    },
}

/// Where trusted certificates are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustSource {
    /// A PEM file of one or more certificates.
    Pem(Named<PathBuf>),
    /// A PKCS12 or JKS trust store.
    Store(StoreConfig),
}

/// A PKCS12 or JKS file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    pub location: Named<PathBuf>,
    /// `PKCS12` or `JKS` as written; unset lets the file say which, as Java 9's keytool does.
    pub kind: Option<Named<String>>,
    pub password: Option<Named<Secret>>,
}

/// `server.ssl.client-auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// No client certificate is asked for.
    None,
    /// Asked for; a client without one is served, one with an untrusted one refused.
    Want,
    /// Required: a client without a trusted certificate cannot connect.
    Need,
}

/// Spring Cloud's `eureka.client.tls.*`, when `enabled`: what this server trusts when it
/// calls `https://` peers, and the certificate it presents when a peer asks for one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientTlsConfig {
    /// `eureka.client.tls.key-store` and companions, default none.
    pub identity: Option<KeySource>,
    /// `eureka.client.tls.trust-store` and companions; none means the system's roots.
    pub trust: Option<TrustSource>,
}
