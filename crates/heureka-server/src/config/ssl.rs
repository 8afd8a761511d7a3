//! TLS settings, read with Spring Boot's names so a Spring `application.yml` carries over:
//! `server.ssl.*` (how this server serves HTTPS), the SSL bundles it may name
//! (`spring.ssl.bundle.jks.<bundle>.*`, `spring.ssl.bundle.pem.<bundle>.*`), and Spring Cloud's
//! `eureka.client.tls.*` (how this server reaches its peers over HTTPS).
//!
//! As in Spring Boot, setting any `server.ssl.*` key turns HTTPS on unless `server.ssl.enabled`
//! is `false`; HTTPS on with no certificate to serve is an error, never plain HTTP. Every value
//! keeps the name of the key it came from, so the errors found when the files are read at
//! start-up (`crate::tls`) name the key the user wrote.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use heureka_config::bindings::Written;
use heureka_config::ConfigError;

use super::ssl_types::{
    ClientAuth, ClientTlsConfig, KeySource, Named, Secret, SslConfig, StoreConfig, TrustSource,
};
use super::values::{parse_bool, parse_duration};

/// `server.ssl.*` and the SSL bundles as the key table read them: each key that a source sets
/// (even blank), with the name it was read under; unset keys are `None`.
#[derive(Default)]
pub(crate) struct SslKeys {
    pub(crate) enabled: Option<Written>,
    pub(crate) bundle: Option<Written>,
    pub(crate) key_store: Option<Written>,
    pub(crate) key_store_type: Option<Written>,
    pub(crate) key_store_password: Option<Written>,
    pub(crate) key_alias: Option<Written>,
    pub(crate) key_password: Option<Written>,
    pub(crate) certificate: Option<Written>,
    pub(crate) certificate_private_key: Option<Written>,
    pub(crate) trust_store: Option<Written>,
    pub(crate) trust_store_type: Option<Written>,
    pub(crate) trust_store_password: Option<Written>,
    pub(crate) trust_certificate: Option<Written>,
    pub(crate) client_auth: Option<Written>,
    pub(crate) enabled_protocols: Option<Written>,
    pub(crate) ciphers: Option<Written>,
    pub(crate) protocol: Option<Written>,
    /// `spring.ssl.bundle.jks.<bundle>.*` and `spring.ssl.bundle.pem.<bundle>.*`, each entry.
    pub(crate) bundles: Vec<Written>,
    /// `spring.ssl.bundle.watch.file.quiet-period`.
    pub(crate) quiet_period: Option<Written>,
}

impl SslKeys {
    /// Every `server.ssl.*` key, to tell whether any is set.
    fn server_ssl(&self) -> [&Option<Written>; 17] {
        [
            &self.enabled,
            &self.bundle,
            &self.key_store,
            &self.key_store_type,
            &self.key_store_password,
            &self.key_alias,
            &self.key_password,
            &self.certificate,
            &self.certificate_private_key,
            &self.trust_store,
            &self.trust_store_type,
            &self.trust_store_password,
            &self.trust_certificate,
            &self.client_auth,
            &self.enabled_protocols,
            &self.ciphers,
            &self.protocol,
        ]
    }
}

/// Spring Cloud's `eureka.client.tls.*` as the key table read them.
#[derive(Default)]
pub(crate) struct ClientTlsKeys {
    pub(crate) enabled: Option<Written>,
    pub(crate) key_store: Option<Written>,
    pub(crate) key_store_type: Option<Written>,
    pub(crate) key_store_password: Option<Written>,
    pub(crate) key_alias: Option<Written>,
    pub(crate) key_password: Option<Written>,
    pub(crate) trust_store: Option<Written>,
    pub(crate) trust_store_type: Option<Written>,
    pub(crate) trust_store_password: Option<Written>,
}

impl ClientTlsKeys {
    /// The keys `enabled` decides on, in the order of their names, so that the error names
    /// the first in that order.
    fn governed(&self) -> [&Option<Written>; 8] {
        [
            &self.key_alias,
            &self.key_password,
            &self.key_store,
            &self.key_store_password,
            &self.key_store_type,
            &self.trust_store,
            &self.trust_store_password,
            &self.trust_store_type,
        ]
    }
}

/// `server.ssl.*`, with the bundle it names, as an [`SslConfig`]; `None` when HTTPS is off.
pub(crate) fn server_ssl(raw: &SslKeys) -> Result<Option<SslConfig>, ConfigError> {
    let bundles = bundle_keys_spelled_out(&raw.bundles);
    let any_set = raw.server_ssl().iter().any(|key| key.is_some());
    let enabled = match get(&raw.enabled) {
        Some(written) => flag(written)?,
        None => any_set,
    };
    if !enabled {
        return Ok(None);
    }
    let quiet_period = match get(&raw.quiet_period) {
        Some(Written { key, setting }) => parse_duration(&setting.value).ok_or_else(|| {
            ConfigError::new(format!(
                "{key} ({}): '{}' is not a positive duration such as 10s",
                setting.origin, setting.value
            ))
        })?,
        None => Duration::from_secs(10),
    };
    if let Some(Written { key, setting }) = get(&raw.protocol) {
        let protocol = setting.value.trim();
        if !["TLS", "TLSv1.2", "TLSv1.3"].contains(&protocol) {
            return Err(ConfigError::new(format!(
                "{key} ({}): '{protocol}' is not offered; Heureka speaks TLS 1.2 \
                 and 1.3 only (TLS, TLSv1.2 or TLSv1.3; choose with \
                 server.ssl.enabled-protocols)",
                setting.origin
            )));
        }
    }
    let client_auth = client_auth(get(&raw.client_auth))?;
    let mut ssl = match text(&raw.bundle) {
        Some(bundle) => bundle_ssl(raw, &bundles, &bundle, client_auth, quiet_period)?,
        None => direct_ssl(raw, client_auth, quiet_period)?,
    };
    if ssl.protocols.is_empty() {
        ssl.protocols = list(&raw.enabled_protocols);
    }
    if ssl.ciphers.is_empty() {
        ssl.ciphers = list(&raw.ciphers);
    }
    if client_auth != ClientAuth::None && ssl.trust.is_none() {
        return Err(ConfigError::new(format!(
            "server.ssl.client-auth is {}: client certificates need a trust store to be \
             checked against; set server.ssl.trust-store or server.ssl.trust-certificate \
             (or the bundle's truststore)",
            get(&raw.client_auth).map_or("set", |w| w.setting.value.as_str())
        )));
    }
    Ok(Some(ssl))
}

/// `server.ssl.*` without a bundle.
fn direct_ssl(
    raw: &SslKeys,
    client_auth: ClientAuth,
    quiet_period: Duration,
) -> Result<SslConfig, ConfigError> {
    let identity = match (path(&raw.certificate)?, path(&raw.key_store)?) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::new(
                "server.ssl.certificate and server.ssl.key-store are both set: give the \
                 certificate either as PEM files or in a key store, not both",
            ))
        }
        (Some(certificate), None) => KeySource::Pem {
            certificate,
            private_key: path(&raw.certificate_private_key)?.ok_or_else(|| {
                ConfigError::new(
                    "server.ssl.certificate is set but server.ssl.certificate-private-key is \
                     not: a PEM certificate needs its private key",
                )
            })?,
            private_key_password: None,
        },
        (None, Some(location)) => KeySource::Store {
            store: StoreConfig {
                location,
                kind: named(&raw.key_store_type),
                password: secret(&raw.key_store_password),
            },
            alias: named(&raw.key_alias),
            key_password: secret(&raw.key_password),
        },
        (None, None) => {
            return Err(ConfigError::new(
                "server.ssl is enabled but no certificate is given: set server.ssl.key-store \
                 (PKCS12 or JKS), server.ssl.certificate with server.ssl.certificate-private-key \
                 (PEM), or server.ssl.bundle; or set server.ssl.enabled=false to serve plain HTTP",
            ))
        }
    };
    let trust = match (path(&raw.trust_certificate)?, path(&raw.trust_store)?) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::new(
                "server.ssl.trust-certificate and server.ssl.trust-store are both set: give \
                 the trusted certificates one way",
            ))
        }
        (Some(pem), None) => Some(TrustSource::Pem(pem)),
        (None, Some(location)) => Some(TrustSource::Store(StoreConfig {
            location,
            kind: named(&raw.trust_store_type),
            password: secret(&raw.trust_store_password),
        })),
        (None, None) => None,
    };
    Ok(SslConfig {
        identity,
        trust,
        client_auth,
        protocols: Vec::new(),
        ciphers: Vec::new(),
        reload_on_update: false,
        quiet_period,
    })
}

/// The SSL bundle `server.ssl.bundle` names: `spring.ssl.bundle.jks.<bundle>.*` or
/// `spring.ssl.bundle.pem.<bundle>.*`. Setting the certificate through `server.ssl.*` too is
/// an error, as it is in Spring Boot.
fn bundle_ssl(
    raw: &SslKeys,
    bundles: &Bundles,
    bundle: &str,
    client_auth: ClientAuth,
    quiet_period: Duration,
) -> Result<SslConfig, ConfigError> {
    let direct = [
        &raw.certificate,
        &raw.key_store,
        &raw.trust_store,
        &raw.trust_certificate,
    ];
    if let Some(both) = direct.into_iter().find_map(get) {
        return Err(ConfigError::new(format!(
            "server.ssl.bundle and {} are both set: the bundle gives the certificates",
            both.key
        )));
    }
    let jks = format!("spring.ssl.bundle.jks.{bundle}");
    let pem = format!("spring.ssl.bundle.pem.{bundle}");
    let (prefix, is_pem) = match (has_prefix(bundles, &jks), has_prefix(bundles, &pem)) {
        (true, false) => (jks, false),
        (false, true) => (pem, true),
        (true, true) => {
            return Err(ConfigError::new(format!(
                "SSL bundle '{bundle}' is defined twice, as {jks}.* and {pem}.*"
            )))
        }
        (false, false) => {
            return Err(ConfigError::new(format!(
                "server.ssl.bundle names '{bundle}', but no {jks}.* or {pem}.* keys define it"
            )))
        }
    };
    reject_unknown_bundle_keys(bundles, &prefix, is_pem)?;
    let at = |property: &str| bundles.get(&format!("{prefix}.{property}")).cloned();
    let required_path = |property: &str| {
        path(&at(property))?.ok_or_else(|| {
            ConfigError::new(format!("{prefix}.{property} is required by its SSL bundle"))
        })
    };
    let identity = if is_pem {
        KeySource::Pem {
            certificate: required_path("keystore.certificate")?,
            private_key: required_path("keystore.private-key")?,
            private_key_password: secret(&at("keystore.private-key-password")),
        }
    } else {
        KeySource::Store {
            store: StoreConfig {
                location: required_path("keystore.location")?,
                kind: named(&at("keystore.type")),
                password: secret(&at("keystore.password")),
            },
            alias: named(&at("key.alias")),
            key_password: secret(&at("key.password")),
        }
    };
    let trust = if is_pem {
        path(&at("truststore.certificate"))?.map(TrustSource::Pem)
    } else {
        path(&at("truststore.location"))?.map(|location| {
            TrustSource::Store(StoreConfig {
                location,
                kind: named(&at("truststore.type")),
                password: secret(&at("truststore.password")),
            })
        })
    };
    let reload_on_update = match get(&at("reload-on-update")) {
        Some(written) => flag(written)?,
        None => false,
    };
    Ok(SslConfig {
        identity,
        trust,
        client_auth,
        protocols: list(&at("options.enabled-protocols")),
        ciphers: list(&at("options.ciphers")),
        reload_on_update,
        quiet_period,
    })
}

/// The properties a bundle may have; the others are typos, refused as they would be in Spring
/// Boot (which fails to bind them).
const JKS_BUNDLE_KEYS: &[&str] = &[
    "key.alias",
    "key.password",
    "keystore.location",
    "keystore.password",
    "keystore.type",
    "truststore.location",
    "truststore.password",
    "truststore.type",
    "reload-on-update",
    "protocol",
    "options.ciphers",
    "options.enabled-protocols",
];
const PEM_BUNDLE_KEYS: &[&str] = &[
    "key.alias",
    "key.password",
    "keystore.certificate",
    "keystore.private-key",
    "keystore.private-key-password",
    "truststore.certificate",
    "reload-on-update",
    "protocol",
    "options.ciphers",
    "options.enabled-protocols",
];

/// The bundles' entries by the name of the lists above.
type Bundles = BTreeMap<String, Written>;

/// The bundles' properties in the spelling of the lists above, whichever relaxed form
/// (`keyStore.location`, `key_store.location`) the file used; unknown ones are left as written
/// for the typo check. Bundle names are kept as written: they are map keys.
fn bundle_keys_spelled_out(raw: &[Written]) -> Bundles {
    raw.iter()
        .map(|written| {
            let name = &written.key;
            let spelled = ["spring.ssl.bundle.jks.", "spring.ssl.bundle.pem."]
                .iter()
                .find_map(|kind| {
                    let (bundle, property) = name.strip_prefix(kind)?.split_once('.')?;
                    let known = if kind.contains("pem") {
                        PEM_BUNDLE_KEYS
                    } else {
                        JKS_BUNDLE_KEYS
                    };
                    let property = known.iter().find(|k| relaxed(k) == relaxed(property))?;
                    Some(format!("{kind}{bundle}.{property}"))
                });
            let key = spelled.unwrap_or_else(|| name.clone());
            let setting = written.setting.clone();
            (key.clone(), Written { key, setting })
        })
        .collect()
}

fn has_prefix(bundles: &Bundles, prefix: &str) -> bool {
    let start = format!("{prefix}.");
    bundles.keys().any(|name| name.starts_with(&start))
}

fn reject_unknown_bundle_keys(
    bundles: &Bundles,
    prefix: &str,
    is_pem: bool,
) -> Result<(), ConfigError> {
    let known = if is_pem {
        PEM_BUNDLE_KEYS
    } else {
        JKS_BUNDLE_KEYS
    };
    let start = format!("{prefix}.");
    for name in bundles.keys() {
        let Some(property) = name.strip_prefix(&start) else {
            continue;
        };
        if !known.iter().any(|k| relaxed(k) == relaxed(property)) {
            return Err(ConfigError::new(format!(
                "unknown key {name}: an SSL bundle has {}",
                known.join(", ")
            )));
        }
    }
    Ok(())
}

/// Spring Cloud's `eureka.client.tls.*`; `None` unless `eureka.client.tls.enabled` is true
/// (Spring Cloud reads none of them otherwise).
pub(crate) fn client_tls(raw: &ClientTlsKeys) -> Result<Option<ClientTlsConfig>, ConfigError> {
    let enabled = match get(&raw.enabled) {
        Some(written) => flag(written)?,
        None => false,
    };
    if !enabled {
        if let Some(set) = raw.governed().into_iter().flatten().next() {
            return Err(ConfigError::new(format!(
                "{} is set but eureka.client.tls.enabled is not true: Spring Cloud would \
                 ignore it and so would the peers' connections; set eureka.client.tls.enabled=true",
                set.key
            )));
        }
        return Ok(None);
    }
    let identity = path(&raw.key_store)?.map(|location| KeySource::Store {
        store: StoreConfig {
            location,
            kind: named(&raw.key_store_type),
            password: secret(&raw.key_store_password),
        },
        alias: named(&raw.key_alias),
        key_password: secret(&raw.key_password),
    });
    let trust = path(&raw.trust_store)?.map(|location| {
        TrustSource::Store(StoreConfig {
            location,
            kind: named(&raw.trust_store_type),
            password: secret(&raw.trust_store_password),
        })
    });
    Ok(Some(ClientTlsConfig { identity, trust }))
}

/// `eureka.server.remote-region-trust-store` and `-password`, as set.
#[derive(Default)]
pub(crate) struct RegionTrustKeys {
    pub(crate) store: Option<Written>,
    pub(crate) password: Option<Written>,
}

/// The trust store remote regions' `https://` servers are checked against, when set; its
/// type is read from the file. Loaded at start-up (`tls::check_client`).
pub(crate) fn region_trust(raw: &RegionTrustKeys) -> Result<Option<TrustSource>, ConfigError> {
    if let (None, Some(password)) = (get(&raw.store), get(&raw.password)) {
        return Err(ConfigError::new(format!(
            "{} is set but eureka.server.remote-region-trust-store is not",
            password.key
        )));
    }
    Ok(path(&raw.store)?.map(|location| {
        TrustSource::Store(StoreConfig {
            location,
            kind: None,
            password: secret(&raw.password),
        })
    }))
}

fn client_auth(written: Option<&Written>) -> Result<ClientAuth, ConfigError> {
    let Some(Written { key, setting }) = written else {
        return Ok(ClientAuth::None);
    };
    match setting.value.trim().to_ascii_lowercase().as_str() {
        "" | "none" => Ok(ClientAuth::None),
        "want" => Ok(ClientAuth::Want),
        "need" => Ok(ClientAuth::Need),
        other => Err(ConfigError::new(format!(
            "{key} ({}): '{other}' is not one of none, want, need",
            setting.origin
        ))),
    }
}

/// A key that is set and not blank.
fn get(written: &Option<Written>) -> Option<&Written> {
    written
        .as_ref()
        .filter(|w| !w.setting.value.trim().is_empty())
}

/// `true` or `false`, in the words of the TLS keys' errors.
fn flag(Written { key, setting }: &Written) -> Result<bool, ConfigError> {
    parse_bool(&setting.value).ok_or_else(|| {
        ConfigError::new(format!(
            "{key} ({}): '{}' is not true or false",
            setting.origin, setting.value
        ))
    })
}

fn text(written: &Option<Written>) -> Option<String> {
    get(written).map(|w| w.setting.value.trim().to_owned())
}

fn named(written: &Option<Written>) -> Option<Named<String>> {
    let key = &written.as_ref()?.key;
    text(written).map(|value| Named {
        key: key.clone(),
        value,
    })
}

/// Passwords are taken as written: spaces may be part of one.
fn secret(written: &Option<Written>) -> Option<Named<Secret>> {
    written
        .as_ref()
        .filter(|w| !w.setting.value.is_empty())
        .map(|w| Named {
            key: w.key.clone(),
            value: Secret(w.setting.value.clone()),
        })
}

fn list(written: &Option<Written>) -> Vec<Named<String>> {
    let Some(text) = text(written) else {
        return Vec::new();
    };
    let key = written.as_ref().map(|w| w.key.clone()).unwrap_or_default();
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| Named {
            key: key.clone(),
            value: item.to_owned(),
        })
        .collect()
}

/// A Spring resource location as a file path: `file:` is dropped; `classpath:` has no
/// meaning outside a JVM, and inline PEM text is not a file.
fn path(written: &Option<Written>) -> Result<Option<Named<PathBuf>>, ConfigError> {
    let Some(Written { key, setting }) = get(written) else {
        return Ok(None);
    };
    let text = setting.value.trim();
    if text.starts_with("classpath:") {
        return Err(ConfigError::new(format!(
            "{key} ({}): '{text}' is on a Java classpath, which Heureka does not have; \
             give the file's path (or file:/path)",
            setting.origin
        )));
    }
    if text.starts_with("-----BEGIN") {
        return Err(ConfigError::new(format!(
            "{key} ({}): PEM text given inline; write it to a file and give its path",
            setting.origin
        )));
    }
    let path = text.strip_prefix("file:").unwrap_or(text);
    Ok(Some(Named {
        key: key.clone(),
        value: PathBuf::from(path),
    }))
}

/// Spring's relaxed comparison of a property path: case, `-` and `_` do not matter.
fn relaxed(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}
