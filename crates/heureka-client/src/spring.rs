//! Binding a [`ClientConfig`] from Spring's keys, with Spring Cloud Netflix's defaults
//! (`EurekaClientConfigBean`, `EurekaInstanceConfigBean` and what
//! `EurekaClientAutoConfiguration` sets on it) and Spring Cloud Commons' for
//! `spring.cloud.inetutils.*`. The sources are read by `heureka-config`, as the server's are,
//! and bound by its table binder, as the server's are.
//!
//! `keys.rs` is the one table of keys (name, default, binding); `bind.rs` walks it, through
//! the bindings of `binding.rs` and the value types of `values.rs`; `rules.rs` holds the
//! defaults that depend on other keys, reading what the bindings left in `pending.rs`. This
//! file holds the `ClientConfig` constructors that read Spring's keys and loads the sources
//! the table asks for.

use std::path::Path;

use heureka_config::values::parse_list;
use heureka_config::{ConfigError, Names, Origin, Properties, Property, Schema};

use self::bind::bind;
use self::keys::{table, REGION, REMOTE_REGIONS};
use crate::address;
use crate::config::{ClientConfig, DEFAULT_ZONE};

mod bind;
mod binding;
mod keys;
mod pending;
mod rules;
mod values;

/// The client's relaxed-name rules: the key table's maps keep their keys as written.
fn names() -> Names {
    keys::names().clone()
}

impl ClientConfig {
    /// From Spring-style properties written in code, e.g.
    /// `[("spring.application.name", "orders"), ("eureka.client.service-url.defaultZone",
    /// "http://eureka:8761/eureka/")]`. Names are relaxed as in Spring; `${placeholders}`
    /// resolve among the pairs. No file and no environment variable is read; the own address
    /// is found on the network interfaces unless configured.
    pub fn from_properties<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<ClientConfig, ConfigError> {
        from_pairs(pairs)
    }

    /// From one `.properties`, `.yml` or `.yaml` file (its documents that name no profile).
    pub fn from_file(path: &Path) -> Result<ClientConfig, ConfigError> {
        from_file(path)
    }

    /// As a Spring Boot application reads its configuration: `application.{properties,yml,yaml}`
    /// in `cwd`, `cwd/config/` and their profile variants, `spring.config.location`, the
    /// environment (`env` looks a variable up by name) in relaxed form, and `--key=value`
    /// arguments (`args` without the program name; other arguments are ignored, as Spring
    /// does), highest precedence last.
    pub fn from_spring(
        args: &[String],
        env: &dyn Fn(&str) -> Option<String>,
        cwd: &Path,
    ) -> Result<ClientConfig, ConfigError> {
        from_spring(args, env, cwd)
    }

    /// [`ClientConfig::from_spring`] with this process's arguments, environment and working
    /// directory.
    pub fn from_process() -> Result<ClientConfig, ConfigError> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let cwd = std::env::current_dir().map_err(|error| {
            ConfigError::new(format!("cannot read the working directory: {error}"))
        })?;
        from_spring(&args, &|name| std::env::var(name).ok(), &cwd)
    }
}

/// `ClientConfig::from_properties`.
pub(crate) fn from_pairs<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<ClientConfig, ConfigError> {
    let mut properties = Properties::new(names());
    properties.overlay(
        pairs
            .into_iter()
            .map(|(name, value)| Property {
                name: name.to_owned(),
                value: value.to_owned(),
                origin: Origin::Code,
            })
            .collect(),
    );
    bind(&properties, &|_| None, &address::find_host_info)
}

/// `ClientConfig::from_file`.
pub(crate) fn from_file(path: &Path) -> Result<ClientConfig, ConfigError> {
    let properties = heureka_config::load_file(path, &names())?;
    bind(&properties, &|_| None, &address::find_host_info)
}

/// `ClientConfig::from_spring`.
pub(crate) fn from_spring(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
    cwd: &Path,
) -> Result<ClientConfig, ConfigError> {
    let properties = load_spring(args, env, cwd)?;
    bind(&properties, env, &address::find_host_info)
}

/// The merged sources of a Spring Boot application. The environment is asked by name, so the
/// zone keys of the configured region are asked for in a second pass, once the region and
/// its zones are known.
pub(crate) fn load_spring(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
    cwd: &Path,
) -> Result<Properties, ConfigError> {
    let options: Vec<String> = args
        .iter()
        .filter(|arg| arg.starts_with("--"))
        .cloned()
        .collect();
    let command_line = heureka_config::parse_args(&options)
        .map_err(|error| ConfigError::new(error.to_string()))?;
    let mut schema = Schema::new(
        names(),
        table().env_keys().chain([
            format!("eureka.client.service-url.{DEFAULT_ZONE}"),
            "eureka.instance.metadata-map.zone".to_owned(),
        ]),
    );
    let first = heureka_config::load(&schema, command_line.clone(), env, cwd)?.properties;
    let zone_keys = zone_keys(&first, env)?;
    if zone_keys.iter().all(|key| schema.has_env_key(key)) {
        return Ok(first);
    }
    schema.add_env_keys(zone_keys);
    Ok(heureka_config::load(&schema, command_line, env, cwd)?.properties)
}

/// `eureka.client.availability-zones.<region>` and `eureka.client.service-url.<zone>` for the
/// configured region and each of its zones, and the zones of each remote region fetched (which
/// say what region an instance is in).
fn zone_keys(
    properties: &Properties,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<String>, ConfigError> {
    let fallback = |key: &str| table().placeholder_default(key);
    let binder = table().binder(properties, env, &fallback);
    let region = binder.setting(REGION.name)?.value;
    let zones_key = format!("eureka.client.availability-zones.{region}");
    let mut asked = vec![zones_key.clone()];
    let zones = match properties.get(&zones_key) {
        Some(property) => parse_list(
            &binder
                .resolve(&zones_key, &property.value, &property.origin)?
                .value,
        ),
        None => keys::names()
            .env_names(&zones_key)
            .iter()
            .find_map(|var| env(var))
            .map(|value| parse_list(&value))
            .unwrap_or_default(),
    };
    asked.extend(
        zones
            .into_iter()
            .map(|zone| format!("eureka.client.service-url.{zone}")),
    );
    let remote = parse_list(&binder.setting(REMOTE_REGIONS.name)?.value);
    asked.extend(
        remote
            .into_iter()
            .map(|region| format!("eureka.client.availability-zones.{region}")),
    );
    Ok(asked)
}

#[cfg(test)]
mod tests;
