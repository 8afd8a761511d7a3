//! Stage two of loading: merged properties to the typed, validated [`Config`], by one walk
//! over the key table. Each entry's binding reads its key (placeholders resolved, or the
//! entry's default) and writes it where it goes; a bad value is reported with its key and
//! source. Rules over several keys run last (`rules.rs`).

use std::net::{IpAddr, Ipv4Addr};

use heureka_config::table::Pass;
use heureka_config::{ConfigError, Properties};

use super::binding::Draft;
use super::model::{Config, ServerConfig};
use super::names::{self, table};
use super::rules::Pending;

/// Stage two: typed, validated values, in key-table order.
pub(crate) fn bind(
    properties: &Properties,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let fallback = |key: &str| names::placeholder_fallback(key, env);
    // Bindings ask only for table entries' names, so every lookup finds its entry.
    let binder = table().binder(properties, env, &fallback);
    let mut draft = Draft {
        config: unbound(),
        pending: Pending::new(),
    };
    table().walk(&binder, &mut draft, Pass::Bound)?;
    let Draft {
        mut config,
        pending,
    } = draft;
    pending.finish(&mut config)?;
    Ok(config)
}

/// The configuration before binding. Every field is overwritten by its key's binding (or a
/// rule), except the two that bindings combine into: `access_log` starts off because either
/// of its keys turns it on, and `sources` is filled in by `load`.
fn unbound() -> Config {
    Config {
        server: ServerConfig {
            ssl: None,
            port: 0,
            address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        },
        connections: Default::default(),
        application_name: String::new(),
        security: None,
        eureka_server: Default::default(),
        registry: Default::default(),
        client: Default::default(),
        instance: Default::default(),
        heureka: Default::default(),
        dashboard: Default::default(),
        management: Default::default(),
        logging_levels: Vec::new(),
        sources: Vec::new(),
    }
}
