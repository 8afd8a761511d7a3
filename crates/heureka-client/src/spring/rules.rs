//! Rules over several keys, applied once every key of the table is read: Spring Cloud's
//! defaults that come from other keys (the non-secure port from `server.port`, the VIP
//! addresses from `spring.application.name`, the default instance id, `management.port`),
//! the own address found only when no key gives it, the inet patterns checked together, and
//! `eureka.client.tls.*` counted only when `eureka.client.tls.enabled`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use heureka_config::bindings::Entries;
use heureka_config::typed::Value;
use heureka_config::{Binder, ConfigError};

use super::binding::Key;
use super::keys::{
    APPLICATION_INSTANCE_ID, CLIENT_HOSTNAME, IGNORED_INTERFACES, PREFERRED_NETWORKS, SERVER_PORT,
    VCAP_INSTANCE_ID,
};
use super::pending::{Pending, TlsKeys};
use super::values::OPTIONAL_TEXT;
use crate::address::{HostInfo, InetSettings};
use crate::config::ClientConfig;
use crate::tls::{self, ClientTls, KeyStoreSpec, StoreKey, StoreKind, StoreNaming, TrustSource};

/// The port Spring Boot serves on when `server.port` is unset.
const DEFAULT_SERVER_PORT: u16 = 8080;

impl TlsKeys {
    /// The client's TLS settings: none unless `enabled`, as Spring Cloud reads none of the
    /// keys otherwise. A store type Heureka cannot read is refused here, naming its key; the
    /// stores themselves are read when the client starts.
    fn finish(self) -> Result<Option<ClientTls>, ConfigError> {
        if !self.enabled {
            if self.key_store.is_some() || self.trust_store.is_some() {
                tracing::warn!(
                    "eureka.client.tls.key-store or trust-store is set but \
                     eureka.client.tls.enabled is not true: ignored, as Spring Cloud does"
                );
            }
            return Ok(None);
        }
        let store = |path: PathBuf, naming, kind: Option<String>, password| {
            let mut spec = KeyStoreSpec::new(path, tls::PREFIX, naming);
            spec.password = password;
            spec.kind = kind.map(|kind| store_kind(&spec, &kind)).transpose()?;
            Ok::<_, ConfigError>(spec)
        };
        let identity = self
            .key_store
            .map(|path| {
                let mut spec = store(
                    path,
                    StoreNaming::KeyStore,
                    self.key_store_type,
                    self.key_store_password,
                )?;
                spec.key_alias = self.key_alias;
                spec.key_password = self.key_password;
                Ok::<_, ConfigError>(spec)
            })
            .transpose()?;
        let trust = self
            .trust_store
            .map(|path| {
                store(
                    path,
                    StoreNaming::TrustStore,
                    self.trust_store_type,
                    self.trust_store_password,
                )
            })
            .transpose()?
            .map(TrustSource::Store);
        Ok(Some(ClientTls { trust, identity }))
    }
}

/// A store type Heureka reads (PKCS12 or JKS), else an error naming the store's type key.
fn store_kind(spec: &KeyStoreSpec, kind: &str) -> Result<StoreKind, ConfigError> {
    StoreKind::parse(kind).ok_or_else(|| {
        ConfigError::new(format!(
            "{}: '{kind}' is not a store type Heureka reads: PKCS12 or JKS",
            spec.key_name(StoreKey::Kind)
        ))
    })
}

impl Pending {
    /// Applies the rules to `config`. `host_info` is the own address found by the lookup,
    /// asked only when a key that would give it is unset.
    pub(crate) fn finish(
        self,
        config: &mut ClientConfig,
        binder: &Binder<'_>,
        host_info: &dyn Fn() -> HostInfo,
    ) -> Result<(), ConfigError> {
        let server_port = self.server_port.unwrap_or(DEFAULT_SERVER_PORT);
        config.ip_addr = self.ip_address.unwrap_or_else(|| host_info().ip_address);
        let hostname = self.hostname.unwrap_or_else(|| host_info().hostname);
        config.instance_id = match self.instance_id {
            Some(id) => id,
            None => default_instance_id(binder, self.application_name.as_deref(), host_info)?,
        };
        config.host_name = if config.prefer_ip_address {
            config.ip_addr.clone()
        } else {
            hostname
        };
        let unknown = || {
            self.application_name
                .clone()
                .unwrap_or_else(|| "unknown".to_owned())
        };
        config.app_name = self.appname.unwrap_or_else(unknown);
        config.vip_address = self.virtual_host_name.unwrap_or_else(unknown);
        config.secure_vip_address = self.secure_virtual_host_name.unwrap_or_else(unknown);
        config.port = self.non_secure_port.unwrap_or(server_port);
        // Spring's auto-configuration moves the server port to the secure port when the secure
        // port is enabled.
        config.secure_port = self.secure_port.unwrap_or(if config.secure_port_enabled {
            server_port
        } else {
            443
        });
        config.metadata = metadata(self.metadata, self.management_port.unwrap_or(server_port));
        config.urls.management_port = self.management_port;
        config.tls = self.tls.finish()?;
        Ok(())
    }
}

/// The metadata map, with the `management.port` Spring always adds unless it is given.
fn metadata(entries: Entries<String>, management_port: u16) -> BTreeMap<String, String> {
    let mut metadata: BTreeMap<String, String> = entries.into_iter().collect();
    metadata
        .entry("management.port".to_owned())
        .or_insert_with(|| management_port.to_string());
    metadata
}

/// Spring Cloud Commons' `IdUtils.getDefaultInstanceId`: `vcap.application.instance_id` if
/// set, else `host:app:index` with the index `spring.application.instance_id`, else
/// `server.port` as written; an unset part is left out with its separator.
fn default_instance_id(
    binder: &Binder<'_>,
    application_name: Option<&str>,
    host_info: &dyn Fn() -> HostInfo,
) -> Result<String, ConfigError> {
    if let Some(vcap) = text(binder, &VCAP_INSTANCE_ID)? {
        return Ok(vcap);
    }
    let hostname = text(binder, &CLIENT_HOSTNAME)?.unwrap_or_else(|| host_info().hostname);
    let index = match text(binder, &APPLICATION_INSTANCE_ID)? {
        Some(index) => Some(index),
        None => text(binder, &SERVER_PORT)?,
    };
    let parts: Vec<String> = [Some(hostname), application_name.map(str::to_owned), index]
        .into_iter()
        .flatten()
        .collect();
    Ok(parts.join(":"))
}

/// A key a rule reads itself, through its table entry: trimmed, `None` when blank.
fn text(binder: &Binder<'_>, key: &Key) -> Result<Option<String>, ConfigError> {
    OPTIONAL_TEXT.read(key.name, binder.setting(key.name)?)
}

/// The inet patterns are regular expressions; the first bad one is reported with its key.
pub(crate) fn check_inet(settings: &InetSettings, binder: &Binder<'_>) -> Result<(), ConfigError> {
    let Some((pattern, why)) = settings.invalid_pattern() else {
        return Ok(());
    };
    let key = if settings.preferred_networks.contains(&pattern) {
        PREFERRED_NETWORKS.name
    } else {
        IGNORED_INTERFACES.name
    };
    let setting = binder.setting(key)?;
    Err(ConfigError::invalid(
        key,
        &pattern,
        &setting.origin,
        &format!("a regular expression ({})", last_line(&why)),
    ))
}

/// The last non-blank line of a regex error, which says what is wrong.
fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or(text)
        .trim()
}
