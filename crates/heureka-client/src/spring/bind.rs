//! Merged properties to a validated [`ClientConfig`], by one walk over the key table in two
//! passes: the host lookup's own settings first, then every other key, each entry's binding
//! reading its key (placeholders resolved, or the entry's default) and writing it where it
//! goes. Rules over several keys run last (`rules.rs`).

use std::cell::OnceCell;
use std::time::Duration;

use heureka_config::{Binder, ConfigError, Properties, Resolver};
use heureka_core::InstanceStatus;

use super::binding::{Bind, Draft};
use super::keys::{self, Binding, CLIENT_HOSTNAME, CLIENT_IP_ADDRESS, KEYS};
use super::rules::{self, Pending};
use super::HostLookup;
use crate::address::{HostInfo, InetSettings};
use crate::config::{ClientConfig, InstanceUrls};

/// Merged properties to a validated [`ClientConfig`]. `host_lookup` is asked at most once,
/// and only when a host name or address is needed that no key gives.
pub(crate) fn bind(
    properties: &Properties,
    env: &dyn Fn(&str) -> Option<String>,
    host_lookup: HostLookup<'_>,
) -> Result<ClientConfig, ConfigError> {
    let defaults = |key: &str| keys::default_of(key).to_owned();
    let plain_fallback =
        |key: &str| Some(keys::default_of(key).to_owned()).filter(|v| !v.is_empty());
    let plain = Binder::new(
        Resolver {
            properties,
            env,
            fallback: &plain_fallback,
        },
        &defaults,
    );
    let mut draft = Draft {
        config: unbound(),
        pending: Pending::default(),
    };
    walk(&plain, &mut draft, |binding| match binding {
        Binding::Address(binding) => Some(binding),
        _ => None,
    })?;
    rules::check_inet(&draft.config.inet, &plain)?;

    // Spring Cloud's HostInfoEnvironmentPostProcessor provides these two from InetUtils;
    // instance ids and URLs are commonly built from them.
    let inet = draft.config.inet.clone();
    let host = OnceCell::new();
    let host_info = || host.get_or_init(|| host_lookup(&inet)).clone();
    let fallback = |key: &str| found(key, &host_info).or_else(|| plain_fallback(key));
    let binder = Binder::new(
        Resolver {
            properties,
            env,
            fallback: &fallback,
        },
        &defaults,
    );
    walk(&binder, &mut draft, |binding| match binding {
        Binding::Bound(binding) => Some(binding),
        _ => None,
    })?;
    let Draft {
        mut config,
        pending,
    } = draft;
    pending.finish(&mut config, &binder, &host_info)?;
    Ok(config)
}

/// Binds, in table order, the entries whose binding `pass` picks.
fn walk(
    binder: &Binder<'_>,
    draft: &mut Draft,
    pass: impl Fn(Binding) -> Option<&'static dyn Bind>,
) -> Result<(), ConfigError> {
    for key in KEYS {
        if let Some(binding) = pass(key.binding) {
            binding.bind(key, binder, draft)?;
        }
    }
    Ok(())
}

/// The value of a `${spring.cloud.client.*}` placeholder no source sets: what the lookup found.
fn found(key: &str, host_info: &dyn Fn() -> HostInfo) -> Option<String> {
    let entry = keys::find(key)?;
    if entry.name == CLIENT_HOSTNAME.name {
        return Some(host_info().hostname);
    }
    if entry.name == CLIENT_IP_ADDRESS.name {
        return Some(host_info().ip_address);
    }
    None
}

/// The configuration before binding. Every field is overwritten by its key's binding or a
/// rule, except `quarantine`, which no Spring key sets (Java has no such setting).
fn unbound() -> ClientConfig {
    ClientConfig {
        service_url: Default::default(),
        region: String::new(),
        availability_zones: Default::default(),
        prefer_same_zone_eureka: false,
        register_with_eureka: false,
        fetch_registry: false,
        filter_only_up_instances: false,
        healthcheck_enabled: false,
        app_name: String::new(),
        instance_id: String::new(),
        host_name: String::new(),
        ip_addr: String::new(),
        prefer_ip_address: false,
        port: 0,
        port_enabled: false,
        secure_port: 0,
        secure_port_enabled: false,
        lease_renewal_interval: Duration::ZERO,
        lease_duration: Duration::ZERO,
        metadata: Default::default(),
        vip_address: String::new(),
        secure_vip_address: String::new(),
        urls: unbound_urls(),
        initial_status: InstanceStatus::Unknown,
        instance_enabled_onit: false,
        inet: unbound_inet(),
        registry_fetch_interval: Duration::ZERO,
        quarantine: Duration::from_secs(30),
        request_timeout: Duration::ZERO,
        instance_info_replication_interval: Duration::ZERO,
        initial_instance_info_replication_interval: Duration::ZERO,
        on_demand_update_status_change: false,
        heartbeat_executor_exponential_back_off_bound: 0,
        cache_refresh_executor_exponential_back_off_bound: 0,
        session_reconnect_interval: Duration::ZERO,
        connect_timeout: Duration::ZERO,
        tls: None,
    }
}

fn unbound_urls() -> InstanceUrls {
    InstanceUrls {
        home_page_path: String::new(),
        home_page: None,
        status_page_path: String::new(),
        status_page: None,
        health_check_path: String::new(),
        health_check: None,
        secure_health_check: None,
        management_port: None,
    }
}

fn unbound_inet() -> InetSettings {
    InetSettings {
        preferred_networks: Vec::new(),
        ignored_interfaces: Vec::new(),
        use_only_site_local_interfaces: false,
        default_hostname: String::new(),
        default_ip_address: String::new(),
        timeout: Duration::ZERO,
    }
}
