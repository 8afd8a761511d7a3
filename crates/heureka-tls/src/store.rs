//! Key stores (PKCS12 and JKS) as Spring Boot names them: where the file is, its type (or a
//! sniff of its first bytes), its passwords and the alias of the key to use.

use std::path::PathBuf;

use p12_keystore::Pkcs12Archive;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::error::TlsError;
use crate::files::read_file;
use crate::jks;

/// The two store formats Java writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    Pkcs12,
    Jks,
}

impl StoreKind {
    /// Spring's `key-store-type` value, case-insensitively: `PKCS12` (or `P12`, `PFX`) and
    /// `JKS`. Any other type (`JCEKS`, `PKCS11`, `BKS`) is `None`.
    pub fn parse(value: &str) -> Option<StoreKind> {
        match value.trim().to_ascii_uppercase().as_str() {
            "PKCS12" | "P12" | "PFX" => Some(StoreKind::Pkcs12),
            "JKS" => Some(StoreKind::Jks),
            _ => None,
        }
    }

    /// What a file holds, from its first bytes: JKS begins with the magic number `FEEDFEED`,
    /// anything else is taken for PKCS12 (whose parser then says if it is not).
    pub fn sniff(bytes: &[u8]) -> StoreKind {
        if bytes.starts_with(&jks::MAGIC) {
            StoreKind::Jks
        } else {
            StoreKind::Pkcs12
        }
    }

    fn label(self) -> &'static str {
        match self {
            StoreKind::Pkcs12 => "PKCS12",
            StoreKind::Jks => "JKS",
        }
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
    /// `{prefix}-trust-store`, `-trust-store-password`, `-trust-store-type`: Eureka's
    /// `eureka.server.remote-region-trust-store`, whose companions are spelled with dashes.
    DashedTrustStore,
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

/// A key store or trust store as configured. Its `Debug` hides the passwords, since a spec
/// may well end up in a log line.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyStoreSpec {
    pub path: PathBuf,
    /// Checked to be a type Heureka reads, then only used in messages: the file's first bytes
    /// decide how it is read, as Java 9+'s `keystore.type.compat` lets a JKS-typed store be
    /// PKCS12 and the other way round.
    pub kind: Option<StoreKind>,
    /// `None`: a JKS store's integrity is not checked, as Java does without a password.
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
        let prefix = &self.key_prefix;
        match self.naming {
            StoreNaming::KeyStore | StoreNaming::TrustStore => {
                let store = match self.naming {
                    StoreNaming::KeyStore => "key-store",
                    _ => "trust-store",
                };
                match key {
                    StoreKey::Location => format!("{prefix}.{store}"),
                    StoreKey::Password => format!("{prefix}.{store}-password"),
                    StoreKey::Kind => format!("{prefix}.{store}-type"),
                    StoreKey::KeyAlias => format!("{prefix}.key-alias"),
                    StoreKey::KeyPassword => format!("{prefix}.key-password"),
                }
            }
            StoreNaming::DashedTrustStore => match key {
                StoreKey::Location => format!("{prefix}-trust-store"),
                StoreKey::Password => format!("{prefix}-trust-store-password"),
                StoreKey::Kind => format!("{prefix}-trust-store-type"),
                StoreKey::KeyAlias => format!("{prefix}-key-alias"),
                StoreKey::KeyPassword => format!("{prefix}-key-password"),
            },
            StoreNaming::Bundle => {
                // The bundle's own prefix: `spring.ssl.bundle.jks.web` of `….web.keystore`.
                let bundle = prefix
                    .rsplit_once('.')
                    .map_or(prefix.as_str(), |(up, _)| up);
                match key {
                    StoreKey::Location => format!("{prefix}.location"),
                    StoreKey::Password => format!("{prefix}.password"),
                    StoreKey::Kind => format!("{prefix}.type"),
                    StoreKey::KeyAlias => format!("{bundle}.key.alias"),
                    StoreKey::KeyPassword => format!("{bundle}.key.password"),
                }
            }
        }
    }

    fn error(&self, key: StoreKey, reason: impl Into<String>) -> TlsError {
        TlsError::new(self.key_name(key), reason)
    }
}

impl std::fmt::Debug for KeyStoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hidden = |password: &Option<String>| password.as_ref().map(|_| "[hidden]");
        f.debug_struct("KeyStoreSpec")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("password", &hidden(&self.password))
            .field("key_alias", &self.key_alias)
            .field("key_password", &hidden(&self.key_password))
            .field("key_prefix", &self.key_prefix)
            .field("naming", &self.naming)
            .finish()
    }
}

/// A key entry's private key: PKCS12 keys are decrypted with the store; JKS keys have their
/// own password, so they are decrypted only once the entry is chosen.
enum EntryKey {
    Plain(PrivateKeyDer<'static>),
    Jks(Vec<u8>),
}

struct KeyEntry {
    alias: String,
    /// As the store holds it; put in order (leaf first) by the identity.
    chain: Vec<CertificateDer<'static>>,
    key: EntryKey,
}

/// What a store holds that TLS uses.
struct Store {
    kind: StoreKind,
    keys: Vec<KeyEntry>,
    trusted: Vec<CertificateDer<'static>>,
}

impl KeyStoreSpec {
    fn open(&self) -> Result<Store, TlsError> {
        let bytes = read_file(&self.path, || self.key_name(StoreKey::Location))?;
        let kind = StoreKind::sniff(&bytes);
        match kind {
            StoreKind::Jks => self.open_jks(&bytes),
            StoreKind::Pkcs12 => self.open_pkcs12(&bytes),
        }
    }

    fn describe(&self, kind: StoreKind) -> String {
        format!("{} ({})", self.path.display(), kind.label())
    }

    fn open_jks(&self, bytes: &[u8]) -> Result<Store, TlsError> {
        let described = self.describe(StoreKind::Jks);
        let store = jks::read(bytes, self.password.as_deref()).map_err(|error| match error {
            jks::Error::WrongPassword => self.error(
                StoreKey::Password,
                format!("wrong password for {described}"),
            ),
            other => self.error(StoreKey::Location, format!("{described}: {other}")),
        })?;
        let mut keys = Vec::new();
        let mut trusted = Vec::new();
        for entry in store {
            match entry {
                jks::Entry::Key {
                    alias,
                    protected_key,
                    chain,
                } => keys.push(KeyEntry {
                    alias,
                    chain: chain.into_iter().map(CertificateDer::from).collect(),
                    key: EntryKey::Jks(protected_key),
                }),
                jks::Entry::Trusted { cert } => trusted.push(CertificateDer::from(cert)),
            }
        }
        Ok(Store {
            kind: StoreKind::Jks,
            keys,
            trusted,
        })
    }

    fn open_pkcs12(&self, bytes: &[u8]) -> Result<Store, TlsError> {
        let described = self.describe(StoreKind::Pkcs12);
        let password = self.password.as_deref().unwrap_or("");
        let archive = Pkcs12Archive::from_pkcs12(bytes, password).map_err(|error| match error {
            // A wrong password fails the MAC, or, in a store without one, the decryption.
            p12_keystore::error::Error::MacError(_) | p12_keystore::error::Error::UnpadError => {
                let reason = if self.password.is_none() {
                    format!("{described} needs a password")
                } else {
                    format!("wrong password for {described}")
                };
                self.error(StoreKey::Password, reason)
            }
            other => self.error(
                StoreKey::Location,
                format!("{described} is not a readable PKCS12 or JKS store ({other})"),
            ),
        })?;
        let der = |cert: &p12_keystore::Certificate| CertificateDer::from(cert.as_der().to_vec());
        // The chain's other certificates are the bags tied to no key and not marked trusted
        // (Java's trusted-certificate attribute); the identity orders them and drops strays.
        let others: Vec<CertificateDer<'static>> = archive
            .certs
            .iter()
            .filter(|bag| bag.local_key_id.is_none() && !bag.trusted)
            .map(|bag| der(&bag.cert))
            .collect();
        let mut keys = Vec::new();
        for key in &archive.keys {
            let leaf = archive.certs.iter().find(|bag| {
                bag.local_key_id.is_some()
                    && bag.local_key_id.as_deref() == key.local_key_id.as_ref().map(|id| &id.0[..])
            });
            let Some(leaf) = leaf else { continue };
            let alias = key
                .friendly_name
                .clone()
                .or_else(|| leaf.friendly_name.clone())
                .unwrap_or_default();
            let mut chain = vec![der(&leaf.cert)];
            chain.extend(others.iter().cloned());
            let pkcs8 = PrivatePkcs8KeyDer::from(key.key.as_der().to_vec());
            keys.push(KeyEntry {
                alias,
                chain,
                key: EntryKey::Plain(PrivateKeyDer::Pkcs8(pkcs8)),
            });
        }
        let mut trusted: Vec<CertificateDer<'static>> = archive
            .certs
            .iter()
            .filter(|bag| bag.trusted)
            .map(|bag| der(&bag.cert))
            .collect();
        if trusted.is_empty() && archive.keys.is_empty() {
            // A trust store written without Java's attribute (by openssl, say) marks nothing
            // trusted; every certificate in a store without keys is meant to be.
            trusted = archive.certs.iter().map(|bag| der(&bag.cert)).collect();
        }
        Ok(Store {
            kind: StoreKind::Pkcs12,
            keys,
            trusted,
        })
    }

    /// The key entry this spec names and its decrypted key, the chain as stored.
    pub(crate) fn load_key(
        &self,
    ) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), TlsError> {
        let store = self.open()?;
        let described = self.describe(store.kind);
        let aliases = || {
            let names: Vec<&str> = store.keys.iter().map(|key| key.alias.as_str()).collect();
            if names.is_empty() {
                "it holds no key entry".to_owned()
            } else {
                format!("its key aliases: {}", names.join(", "))
            }
        };
        let entry = match &self.key_alias {
            // Java's stores compare aliases case-insensitively (JKS lower-cases them).
            Some(alias) => store
                .keys
                .iter()
                .find(|key| key.alias.eq_ignore_ascii_case(alias))
                .ok_or_else(|| {
                    self.error(
                        StoreKey::KeyAlias,
                        format!("no key entry '{alias}' in {described}; {}", aliases()),
                    )
                })?,
            None => match &store.keys[..] {
                [only] => only,
                [] => {
                    return Err(self.error(
                        StoreKey::Location,
                        format!("{described} holds no private key entry"),
                    ))
                }
                // Java would take whichever its map yields first; naming one is safer.
                _ => {
                    return Err(self.error(
                        StoreKey::KeyAlias,
                        format!("{described} holds several keys, say which; {}", aliases()),
                    ))
                }
            },
        };
        let key = match &entry.key {
            EntryKey::Plain(key) => key.clone_key(),
            EntryKey::Jks(protected) => {
                let password = self.key_password.as_deref().or(self.password.as_deref());
                let Some(password) = password else {
                    return Err(self.error(
                        StoreKey::KeyPassword,
                        format!("the key '{}' in {described} needs a password", entry.alias),
                    ));
                };
                // Named the key password even when unset: the store's password was right (its
                // digest matched), so what is missing or wrong is the key's own.
                let pkcs8 = jks::unprotect_key(protected, password).map_err(|error| {
                    let reason = match error {
                        jks::Error::WrongPassword => {
                            format!("wrong key password for '{}' in {described}", entry.alias)
                        }
                        other => format!("the key '{}' in {described}: {other}", entry.alias),
                    };
                    self.error(StoreKey::KeyPassword, reason)
                })?;
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pkcs8))
            }
        };
        if entry.chain.is_empty() {
            return Err(self.error(
                StoreKey::KeyAlias,
                format!(
                    "the key '{}' in {described} has no certificate",
                    entry.alias
                ),
            ));
        }
        Ok((entry.chain.clone(), key))
    }

    /// Every trusted certificate of the store and the leaf of each key entry, as Java's trust
    /// manager takes them.
    pub(crate) fn load_certificates(&self) -> Result<Vec<CertificateDer<'static>>, TlsError> {
        let store = self.open()?;
        let mut certs = store.trusted;
        certs.extend(
            store
                .keys
                .iter()
                .filter_map(|key| key.chain.first().cloned()),
        );
        if certs.is_empty() {
            let described = self.describe(store.kind);
            return Err(self.error(
                StoreKey::Location,
                format!("{described} holds no certificate to trust"),
            ));
        }
        Ok(certs)
    }
}
