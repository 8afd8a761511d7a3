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
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use heureka_config::{ConfigError, Setting};

use super::values::{parse_bool, parse_duration};

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

/// The raw values of the TLS keys, by the name they were written under: the table entries
/// with a [`super::binding::collect`] binding put them here.
pub(crate) type Collected = BTreeMap<String, Setting>;

/// `server.ssl.*`, with the bundle it names, as an [`SslConfig`]; `None` when HTTPS is off.
pub(crate) fn server_ssl(raw: &Collected) -> Result<Option<SslConfig>, ConfigError> {
    let raw = &bundle_keys_spelled_out(raw);
    let keys = Keys(raw);
    let any_set = raw.keys().any(|name| name.starts_with("server.ssl."));
    let enabled = match keys.get("server.ssl.enabled") {
        Some(setting) => parse_bool(&setting.value).ok_or_else(|| {
            ConfigError::new(format!(
                "server.ssl.enabled ({}): '{}' is not true or false",
                setting.origin, setting.value
            ))
        })?,
        None => any_set,
    };
    if !enabled {
        return Ok(None);
    }
    let quiet_period = match keys.get("spring.ssl.bundle.watch.file.quiet-period") {
        Some(setting) => parse_duration(&setting.value).ok_or_else(|| {
            ConfigError::new(format!(
                "spring.ssl.bundle.watch.file.quiet-period ({}): '{}' is not a positive \
                 duration such as 10s",
                setting.origin, setting.value
            ))
        })?,
        None => Duration::from_secs(10),
    };
    if let Some(setting) = keys.get("server.ssl.protocol") {
        let protocol = setting.value.trim();
        if !["TLS", "TLSv1.2", "TLSv1.3"].contains(&protocol) {
            return Err(ConfigError::new(format!(
                "server.ssl.protocol ({}): '{protocol}' is not offered; Heureka speaks TLS 1.2 \
                 and 1.3 only (TLS, TLSv1.2 or TLSv1.3; choose with \
                 server.ssl.enabled-protocols)",
                setting.origin
            )));
        }
    }
    let client_auth = client_auth(keys.get("server.ssl.client-auth"))?;
    let mut ssl = match keys.text("server.ssl.bundle") {
        Some(bundle) => bundle_ssl(&keys, &bundle, client_auth, quiet_period)?,
        None => direct_ssl(&keys, client_auth, quiet_period)?,
    };
    if ssl.protocols.is_empty() {
        ssl.protocols = keys.list("server.ssl.enabled-protocols");
    }
    if ssl.ciphers.is_empty() {
        ssl.ciphers = keys.list("server.ssl.ciphers");
    }
    if client_auth != ClientAuth::None && ssl.trust.is_none() {
        return Err(ConfigError::new(format!(
            "server.ssl.client-auth is {}: client certificates need a trust store to be \
             checked against; set server.ssl.trust-store or server.ssl.trust-certificate \
             (or the bundle's truststore)",
            keys.get("server.ssl.client-auth")
                .map_or("set", |s| s.value.as_str())
        )));
    }
    Ok(Some(ssl))
}

/// `server.ssl.*` without a bundle.
fn direct_ssl(
    keys: &Keys<'_>,
    client_auth: ClientAuth,
    quiet_period: Duration,
) -> Result<SslConfig, ConfigError> {
    let identity = match (
        keys.path("server.ssl.certificate")?,
        keys.path("server.ssl.key-store")?,
    ) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::new(
                "server.ssl.certificate and server.ssl.key-store are both set: give the \
                 certificate either as PEM files or in a key store, not both",
            ))
        }
        (Some(certificate), None) => KeySource::Pem {
            certificate,
            private_key: keys
                .path("server.ssl.certificate-private-key")?
                .ok_or_else(|| {
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
                kind: keys.named("server.ssl.key-store-type"),
                password: keys.secret("server.ssl.key-store-password"),
            },
            alias: keys.named("server.ssl.key-alias"),
            key_password: keys.secret("server.ssl.key-password"),
        },
        (None, None) => {
            return Err(ConfigError::new(
                "server.ssl is enabled but no certificate is given: set server.ssl.key-store \
                 (PKCS12 or JKS), server.ssl.certificate with server.ssl.certificate-private-key \
                 (PEM), or server.ssl.bundle; or set server.ssl.enabled=false to serve plain HTTP",
            ))
        }
    };
    let trust = match (
        keys.path("server.ssl.trust-certificate")?,
        keys.path("server.ssl.trust-store")?,
    ) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::new(
                "server.ssl.trust-certificate and server.ssl.trust-store are both set: give \
                 the trusted certificates one way",
            ))
        }
        (Some(pem), None) => Some(TrustSource::Pem(pem)),
        (None, Some(location)) => Some(TrustSource::Store(StoreConfig {
            location,
            kind: keys.named("server.ssl.trust-store-type"),
            password: keys.secret("server.ssl.trust-store-password"),
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
    keys: &Keys<'_>,
    bundle: &str,
    client_auth: ClientAuth,
    quiet_period: Duration,
) -> Result<SslConfig, ConfigError> {
    let direct = [
        "server.ssl.certificate",
        "server.ssl.key-store",
        "server.ssl.trust-store",
        "server.ssl.trust-certificate",
    ];
    if let Some(both) = direct.iter().find(|key| keys.get(key).is_some()) {
        return Err(ConfigError::new(format!(
            "server.ssl.bundle and {both} are both set: the bundle gives the certificates"
        )));
    }
    let jks = format!("spring.ssl.bundle.jks.{bundle}");
    let pem = format!("spring.ssl.bundle.pem.{bundle}");
    let (prefix, is_pem) = match (keys.has_prefix(&jks), keys.has_prefix(&pem)) {
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
    keys.reject_unknown_bundle_keys(&prefix, is_pem)?;
    let k = |property: &str| format!("{prefix}.{property}");
    let identity = if is_pem {
        KeySource::Pem {
            certificate: keys.required_path(&k("keystore.certificate"))?,
            private_key: keys.required_path(&k("keystore.private-key"))?,
            private_key_password: keys.secret(&k("keystore.private-key-password")),
        }
    } else {
        KeySource::Store {
            store: StoreConfig {
                location: keys.required_path(&k("keystore.location"))?,
                kind: keys.named(&k("keystore.type")),
                password: keys.secret(&k("keystore.password")),
            },
            alias: keys.named(&k("key.alias")),
            key_password: keys.secret(&k("key.password")),
        }
    };
    let trust = if is_pem {
        keys.path(&k("truststore.certificate"))?
            .map(TrustSource::Pem)
    } else {
        keys.path(&k("truststore.location"))?.map(|location| {
            TrustSource::Store(StoreConfig {
                location,
                kind: keys.named(&k("truststore.type")),
                password: keys.secret(&k("truststore.password")),
            })
        })
    };
    let reload_on_update = match keys.get(&k("reload-on-update")) {
        Some(setting) => parse_bool(&setting.value).ok_or_else(|| {
            ConfigError::new(format!(
                "{} ({}): '{}' is not true or false",
                k("reload-on-update"),
                setting.origin,
                setting.value
            ))
        })?,
        None => false,
    };
    Ok(SslConfig {
        identity,
        trust,
        client_auth,
        protocols: keys.list(&k("options.enabled-protocols")),
        ciphers: keys.list(&k("options.ciphers")),
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

/// The bundles' properties in the spelling of the lists above, whichever relaxed form
/// (`keyStore.location`, `key_store.location`) the file used; unknown ones are left as written
/// for the typo check. Bundle names are kept as written: they are map keys.
fn bundle_keys_spelled_out(raw: &Collected) -> Collected {
    raw.iter()
        .map(|(name, setting)| {
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
            (spelled.unwrap_or_else(|| name.clone()), setting.clone())
        })
        .collect()
}

/// Spring Cloud's `eureka.client.tls.*`; `None` unless `eureka.client.tls.enabled` is true
/// (Spring Cloud reads none of them otherwise).
pub(crate) fn client_tls(raw: &Collected) -> Result<Option<ClientTlsConfig>, ConfigError> {
    let keys = Keys(raw);
    let enabled = match keys.get("eureka.client.tls.enabled") {
        Some(setting) => parse_bool(&setting.value).ok_or_else(|| {
            ConfigError::new(format!(
                "eureka.client.tls.enabled ({}): '{}' is not true or false",
                setting.origin, setting.value
            ))
        })?,
        None => false,
    };
    if !enabled {
        if let Some(set) = raw
            .keys()
            .find(|name| name.starts_with("eureka.client.tls.") && !name.ends_with(".enabled"))
        {
            return Err(ConfigError::new(format!(
                "{set} is set but eureka.client.tls.enabled is not true: Spring Cloud would \
                 ignore it and so would the peers' connections; set eureka.client.tls.enabled=true"
            )));
        }
        return Ok(None);
    }
    let identity = keys
        .path("eureka.client.tls.key-store")?
        .map(|location| KeySource::Store {
            store: StoreConfig {
                location,
                kind: keys.named("eureka.client.tls.key-store-type"),
                password: keys.secret("eureka.client.tls.key-store-password"),
            },
            alias: keys.named("eureka.client.tls.key-alias"),
            key_password: keys.secret("eureka.client.tls.key-password"),
        });
    let trust = keys.path("eureka.client.tls.trust-store")?.map(|location| {
        TrustSource::Store(StoreConfig {
            location,
            kind: keys.named("eureka.client.tls.trust-store-type"),
            password: keys.secret("eureka.client.tls.trust-store-password"),
        })
    });
    Ok(Some(ClientTlsConfig { identity, trust }))
}

fn client_auth(setting: Option<&Setting>) -> Result<ClientAuth, ConfigError> {
    let Some(setting) = setting else {
        return Ok(ClientAuth::None);
    };
    match setting.value.trim().to_ascii_lowercase().as_str() {
        "" | "none" => Ok(ClientAuth::None),
        "want" => Ok(ClientAuth::Want),
        "need" => Ok(ClientAuth::Need),
        other => Err(ConfigError::new(format!(
            "server.ssl.client-auth ({}): '{other}' is not one of none, want, need",
            setting.origin
        ))),
    }
}

/// Lookups over the collected TLS keys: only keys that are set and not blank.
struct Keys<'a>(&'a Collected);

impl Keys<'_> {
    fn get(&self, key: &str) -> Option<&Setting> {
        self.0.get(key).filter(|s| !s.value.trim().is_empty())
    }

    fn has_prefix(&self, prefix: &str) -> bool {
        let start = format!("{prefix}.");
        self.0.keys().any(|name| name.starts_with(&start))
    }

    fn text(&self, key: &str) -> Option<String> {
        self.get(key).map(|s| s.value.trim().to_owned())
    }

    fn named(&self, key: &str) -> Option<Named<String>> {
        self.text(key).map(|value| Named {
            key: key.to_owned(),
            value,
        })
    }

    /// Passwords are taken as written: spaces may be part of one.
    fn secret(&self, key: &str) -> Option<Named<Secret>> {
        self.0
            .get(key)
            .filter(|s| !s.value.is_empty())
            .map(|s| Named {
                key: key.to_owned(),
                value: Secret(s.value.clone()),
            })
    }

    fn list(&self, key: &str) -> Vec<Named<String>> {
        self.text(key)
            .map(|text| {
                text.split(',')
                    .map(str::trim)
                    .filter(|item| !item.is_empty())
                    .map(|item| Named {
                        key: key.to_owned(),
                        value: item.to_owned(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A Spring resource location as a file path: `file:` is dropped; `classpath:` has no
    /// meaning outside a JVM, and inline PEM text is not a file.
    fn path(&self, key: &str) -> Result<Option<Named<PathBuf>>, ConfigError> {
        let Some(setting) = self.get(key) else {
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
            key: key.to_owned(),
            value: PathBuf::from(path),
        }))
    }

    fn required_path(&self, key: &str) -> Result<Named<PathBuf>, ConfigError> {
        self.path(key)?
            .ok_or_else(|| ConfigError::new(format!("{key} is required by its SSL bundle")))
    }

    fn reject_unknown_bundle_keys(&self, prefix: &str, is_pem: bool) -> Result<(), ConfigError> {
        let known = if is_pem {
            PEM_BUNDLE_KEYS
        } else {
            JKS_BUNDLE_KEYS
        };
        let start = format!("{prefix}.");
        for name in self.0.keys() {
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
}

/// Spring's relaxed comparison of a property path: case, `-` and `_` do not matter.
pub(crate) fn relaxed(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}
