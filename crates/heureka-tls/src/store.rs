//! Key stores (PKCS12 and JKS) as Spring Boot names them: where the file is, its type (or a
//! sniff of its first bytes), its passwords and the alias of the key to use.

use std::path::PathBuf;

/// The two store formats Java writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    Pkcs12,
    Jks,
}

impl StoreKind {
    /// Spring's `key-store-type` value, case-insensitively: `PKCS12` (or `P12`, `PFX`) and `JKS`.
    pub fn parse(value: &str) -> Option<StoreKind> {
        unimplemented!("{value}")
    }
}

/// How the keys of one store are spelled, because `server.ssl` and SSL bundles differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreNaming {
    /// `{prefix}.key-store`, `.key-store-password`, `.key-store-type`, `.key-alias`,
    /// `.key-password`: `server.ssl` and `eureka.client.tls`.
    KeyStore,
    /// `{prefix}.trust-store`, `.trust-store-password`, `.trust-store-type`.
    TrustStore,
    /// `{prefix}.location`, `.password`, `.type`, with the key's alias and password one level
    /// up: prefix `spring.ssl.bundle.jks.web.keystore` → `spring.ssl.bundle.jks.web.key.alias`.
    Bundle,
}

/// One setting of a store, for naming it in an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKey {
    Location,
    Password,
    Kind,
    KeyAlias,
    KeyPassword,
}

/// A key store or trust store as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyStoreSpec {
    pub path: PathBuf,
    /// `None`: sniff the file, as Java 9+'s `keystore.type.compat` does.
    pub kind: Option<StoreKind>,
    pub password: Option<String>,
    pub key_alias: Option<String>,
    /// `None`: the store's password, as Java falls back to it.
    pub key_password: Option<String>,
    /// `server.ssl`, `eureka.client.tls`, or `spring.ssl.bundle.jks.web.keystore`.
    pub key_prefix: String,
    pub naming: StoreNaming,
}

impl KeyStoreSpec {
    /// A store at `path` with nothing else set, its keys spelled after `key_prefix` and `naming`.
    pub fn new(
        path: impl Into<PathBuf>,
        key_prefix: impl Into<String>,
        naming: StoreNaming,
    ) -> Self {
        KeyStoreSpec {
            path: path.into(),
            kind: None,
            password: None,
            key_alias: None,
            key_password: None,
            key_prefix: key_prefix.into(),
            naming,
        }
    }

    /// The full name of one of this store's keys, as the user wrote it.
    pub fn key_name(&self, key: StoreKey) -> String {
        unimplemented!("{key:?}")
    }
}
