//! HTTPS: the TLS settings of the configuration (`config/ssl.rs`) loaded with `heureka-tls`
//! into rustls configurations, for the listener (`ServerTls`) and for the calls this server
//! makes to its peers and webhooks (`client_config`).
//!
//! The server's configuration is loaded once before the port is bound, so a wrong password,
//! a missing alias or an expired certificate stops the start with one line naming the key.
//! With a bundle's `reload-on-update`, `watch` re-reads the files when they change (once they
//! have been quiet for the bundle's quiet period, so a half-written file is never loaded) and
//! new connections get the new configuration; open ones keep theirs. A reload that fails keeps
//! the configuration being served and says why in a WARN.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use heureka_tls::rustls;
use heureka_tls::{
    IdentitySource, KeyStoreSpec, PemIdentitySpec, PemNaming, ServerTlsSpec, StoreKind,
    StoreNaming, TlsError,
};
use parking_lot::RwLock;

use crate::clock;
use crate::config::{self, ClientTlsConfig, KeySource, SslConfig, StoreConfig, TrustSource};

/// The calendar date of a day count, as certificates' validity is shown; the binary's log
/// clock dates its lines with it (the binary reaches `heureka-tls` through this crate only).
pub use heureka_tls::civil_from_days;

/// How often a reloading server looks at its files' modification times.
const WATCH_PERIOD: Duration = Duration::from_secs(1);

/// The TLS configuration the listener hands each new connection.
pub struct ServerTls {
    spec: ServerTlsSpec,
    current: RwLock<Arc<rustls::ServerConfig>>,
    /// The bundle's files and quiet period when `reload-on-update` is on.
    reload: Option<(Vec<PathBuf>, Duration)>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls")
            .field("client_auth", &self.spec.client_auth)
            .field("reload", &self.reload)
            .finish_non_exhaustive()
    }
}

impl ServerTls {
    /// Loads and checks everything `ssl` names, as of `now`.
    pub fn load(ssl: &SslConfig, now: SystemTime) -> Result<ServerTls, TlsError> {
        let spec = server_spec(ssl)?;
        let config = heureka_tls::server_config(&spec, now)?;
        let reload = ssl
            .reload_on_update
            .then(|| (files_of(ssl), ssl.quiet_period));
        Ok(ServerTls {
            spec,
            current: RwLock::new(config),
            reload,
        })
    }

    /// The configuration a connection accepted now is served with.
    pub(crate) fn current(&self) -> Arc<rustls::ServerConfig> {
        Arc::clone(&self.current.read())
    }

    /// Re-reads the files; on success new connections get them.
    fn reload(&self, now: SystemTime) -> Result<(), TlsError> {
        let config = heureka_tls::server_config(&self.spec, now)?;
        *self.current.write() = config;
        Ok(())
    }
}

/// Each watched file's modification time and length, `None` while it is missing.
type FilesState = Vec<Option<(SystemTime, u64)>>;

/// Watches the files of a `reload-on-update` bundle until the server stops (the caller aborts
/// the task); nothing to do otherwise.
pub(crate) async fn watch(tls: Arc<ServerTls>) {
    let Some((files, quiet_period)) = tls.reload.clone() else {
        return;
    };
    let stamp = || -> FilesState {
        files
            .iter()
            .map(|file| {
                let meta = std::fs::metadata(file).ok()?;
                Some((meta.modified().ok()?, meta.len()))
            })
            .collect()
    };
    let mut served = stamp();
    // The files' state when a change was first seen, and when they were last seen changing.
    let mut changing: Option<(FilesState, clock::Instant)> = None;
    let mut ticks = clock::every(WATCH_PERIOD);
    loop {
        ticks.tick().await;
        let now_stamp = stamp();
        if now_stamp == served {
            changing = None;
            continue;
        }
        let now = clock::instant();
        match &changing {
            Some((seen, since)) if *seen == now_stamp => {
                if now.duration_since(*since) < quiet_period {
                    continue;
                }
            }
            _ => {
                changing = Some((now_stamp, now));
                continue;
            }
        }
        changing = None;
        served = now_stamp;
        match tls.reload(clock::wall_time()) {
            Ok(()) => tracing::info!(
                files = ?files,
                "certificate files changed: new connections get the new certificate"
            ),
            Err(error) => tracing::warn!(
                %error,
                "certificate files changed but cannot be used: still serving the previous \
                 certificate"
            ),
        }
    }
}

/// The rustls client configuration for this server's calls to `https://` peers: the trust
/// and certificate `eureka.client.tls.*` gives, or the public roots when it is off.
pub(crate) fn client_config(
    tls: Option<&ClientTlsConfig>,
) -> Result<rustls::ClientConfig, TlsError> {
    let Some(tls) = tls else {
        return heureka_tls::client_config(None, None);
    };
    let trust = match &tls.trust {
        Some(trust) => Some(heureka_tls::load_trust(&trust_source(trust)?)?),
        None => None,
    };
    let identity = match &tls.identity {
        Some(identity) => Some(heureka_tls::Identity::load(
            &identity_source(identity)?,
            clock::wall_time(),
        )?),
        None => None,
    };
    heureka_tls::client_config(trust, identity)
}

/// The rustls client configuration for fetching `https://` remote regions: the certificate
/// `eureka.client.tls.*` gives, and `eureka.server.remote-region-trust-store`'s trust when it
/// is set, else `eureka.client.tls.*`'s (or the public roots).
pub(crate) fn region_client_config(
    client: Option<&ClientTlsConfig>,
    region_trust: Option<&TrustSource>,
) -> Result<rustls::ClientConfig, TlsError> {
    let Some(region_trust) = region_trust else {
        return client_config(client);
    };
    let trust = heureka_tls::load_trust(&trust_source(region_trust)?)?;
    let identity = match client.and_then(|tls| tls.identity.as_ref()) {
        Some(identity) => Some(heureka_tls::Identity::load(
            &identity_source(identity)?,
            clock::wall_time(),
        )?),
        None => None,
    };
    heureka_tls::client_config(Some(trust), identity)
}

/// Checks `eureka.client.tls.*` and `eureka.server.remote-region-trust-store` at start-up, so
/// a wrong password is an error then rather than every peer or region call failing later.
pub fn check_client(config: &config::Config) -> Result<(), TlsError> {
    client_config(config.client.tls.as_ref())?;
    let regions = &config.eureka_server.regions;
    region_client_config(config.client.tls.as_ref(), regions.trust_store.as_ref()).map(drop)
}

fn server_spec(ssl: &SslConfig) -> Result<ServerTlsSpec, TlsError> {
    Ok(ServerTlsSpec {
        identity: identity_source(&ssl.identity)?,
        client_auth: match ssl.client_auth {
            config::ClientAuth::None => heureka_tls::ClientAuth::None,
            config::ClientAuth::Want => heureka_tls::ClientAuth::Want,
            config::ClientAuth::Need => heureka_tls::ClientAuth::Need,
        },
        trust: ssl.trust.as_ref().map(trust_source).transpose()?,
        protocols: ssl.protocols.iter().map(|p| p.value.clone()).collect(),
        ciphers: ssl.ciphers.iter().map(|c| c.value.clone()).collect(),
    })
}

fn identity_source(source: &KeySource) -> Result<IdentitySource, TlsError> {
    Ok(match source {
        KeySource::Pem {
            certificate,
            private_key,
            private_key_password,
        } => {
            let (prefix, naming) = match certificate.key.strip_suffix(".keystore.certificate") {
                Some(bundle) => (format!("{bundle}.keystore"), PemNaming::Bundle),
                None => ("server.ssl".to_owned(), PemNaming::ServerSsl),
            };
            let mut spec = PemIdentitySpec::new(
                certificate.value.clone(),
                private_key.value.clone(),
                prefix,
                naming,
            );
            spec.private_key_password = private_key_password.as_ref().map(|p| p.value.0.clone());
            IdentitySource::Pem(spec)
        }
        KeySource::Store {
            store,
            alias,
            key_password,
        } => {
            let mut spec = store_spec(store, StoreNaming::KeyStore)?;
            spec.key_alias = alias.as_ref().map(|a| a.value.clone());
            spec.key_password = key_password.as_ref().map(|p| p.value.0.clone());
            IdentitySource::Store(spec)
        }
    })
}

fn trust_source(source: &TrustSource) -> Result<heureka_tls::TrustSource, TlsError> {
    Ok(match source {
        TrustSource::Pem(file) => heureka_tls::TrustSource::NamedPem {
            key: file.key.clone(),
            paths: vec![file.value.clone()],
        },
        TrustSource::Store(store) => {
            heureka_tls::TrustSource::Store(store_spec(store, StoreNaming::TrustStore)?)
        }
    })
}

/// A store's spec, its keys spelled as the user wrote them: `{prefix}.key-store…` for
/// `server.ssl` and `eureka.client.tls`, `{bundle}.keystore.location…` for a bundle.
fn store_spec(store: &StoreConfig, flat: StoreNaming) -> Result<KeyStoreSpec, TlsError> {
    let key = &store.location.key;
    let (prefix, naming) = match key.strip_suffix(".location") {
        Some(bundle_store) => (bundle_store.to_owned(), StoreNaming::Bundle),
        None if key.ends_with("-trust-store") => (
            key.trim_end_matches("-trust-store").to_owned(),
            StoreNaming::DashedTrustStore,
        ),
        None => {
            let suffix = match flat {
                StoreNaming::TrustStore => ".trust-store",
                _ => ".key-store",
            };
            (key.strip_suffix(suffix).unwrap_or(key).to_owned(), flat)
        }
    };
    let mut spec = KeyStoreSpec::new(store.location.value.clone(), prefix, naming);
    spec.password = store.password.as_ref().map(|p| p.value.0.clone());
    spec.kind = match &store.kind {
        None => None,
        Some(kind) => Some(StoreKind::parse(&kind.value).ok_or_else(|| {
            TlsError::new(
                kind.key.clone(),
                format!(
                    "'{}' is not a store type Heureka reads: PKCS12 or JKS",
                    kind.value
                ),
            )
        })?),
    };
    Ok(spec)
}

/// The files a reloading server watches: the certificate and key, and the trust.
fn files_of(ssl: &SslConfig) -> Vec<PathBuf> {
    let mut files = match &ssl.identity {
        KeySource::Pem {
            certificate,
            private_key,
            ..
        } => vec![certificate.value.clone(), private_key.value.clone()],
        KeySource::Store { store, .. } => vec![store.location.value.clone()],
    };
    match &ssl.trust {
        Some(TrustSource::Pem(file)) => files.push(file.value.clone()),
        Some(TrustSource::Store(store)) => files.push(store.location.value.clone()),
        None => {}
    }
    files
}
