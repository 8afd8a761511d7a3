//! Merged properties to a validated [`ClientConfig`], by one walk over the key table in two
//! passes: the host lookup's own settings first, then every other key, each entry's binding
//! reading its key (placeholders resolved, or the entry's default) and writing it where it
//! goes. Rules over several keys run last (`rules.rs`).

use std::cell::OnceCell;

use heureka_config::table::Pass;
use heureka_config::{ConfigError, Properties};

use super::binding::Draft;
use super::keys::{self, table, CLIENT_HOSTNAME, CLIENT_IP_ADDRESS};
use super::pending::Pending;
use super::rules;
use crate::address::{HostInfo, InetSettings};
use crate::config::ClientConfig;

/// How the own address is found when it is not configured: [`crate::address::find_host_info`],
/// or a stand-in in tests.
pub(crate) type HostLookup<'a> = &'a dyn Fn(&InetSettings) -> HostInfo;

/// Merged properties to a validated [`ClientConfig`]. `host_lookup` is asked at most once,
/// and only when a host name or address is needed that no key gives.
pub(crate) fn bind(
    properties: &Properties,
    env: &dyn Fn(&str) -> Option<String>,
    host_lookup: HostLookup<'_>,
) -> Result<ClientConfig, ConfigError> {
    let plain_fallback = |key: &str| table().placeholder_default(key);
    let plain = table().binder(properties, env, &plain_fallback);
    let mut draft = Draft {
        config: unbound(),
        pending: Pending::default(),
    };
    table().walk(&plain, &mut draft, Pass::First)?;
    rules::check_inet(&draft.config.inet, &plain)?;

    // Spring Cloud's HostInfoEnvironmentPostProcessor provides these two from InetUtils;
    // instance ids and URLs are commonly built from them.
    let inet = draft.config.inet.clone();
    let host = OnceCell::new();
    let host_info = || host.get_or_init(|| host_lookup(&inet)).clone();
    let fallback = |key: &str| found(key, &host_info).or_else(|| plain_fallback(key));
    let binder = table().binder(properties, env, &fallback);
    table().walk(&binder, &mut draft, Pass::Bound)?;
    let Draft {
        mut config,
        pending,
    } = draft;
    pending.finish(&mut config, &binder, &host_info)?;
    Ok(config)
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

/// The configuration before binding: every field is overwritten by its key's binding or a
/// rule, except `quarantine`, which no Spring key sets (Java has no such setting), and which
/// stays at its default.
fn unbound() -> ClientConfig {
    ClientConfig::new(Vec::new(), "", "", "", "", 0)
}
