//! Binding a [`ClientConfig`] from Spring's keys, with Spring Cloud Netflix's defaults
//! (`EurekaClientConfigBean`, `EurekaInstanceConfigBean` and what
//! `EurekaClientAutoConfiguration` sets on it) and Spring Cloud Commons' for
//! `spring.cloud.inetutils.*`. The sources are read by `heureka-config`, as the server's are.
//!
//! `keys.rs` is the one table of keys (name, default, binding); `bind.rs` walks it, through
//! the bindings and value types of `binding.rs` and `values.rs`; `rules.rs` holds the defaults
//! that depend on other keys. This file loads the sources the table asks for.

use std::path::Path;

use heureka_config::values::parse_list;
use heureka_config::{Binder, ConfigError, Names, Origin, Properties, Property, Resolver, Schema};

use self::bind::bind;
use self::keys::{default_of, KEYS, REGION};
use crate::address::{self, HostInfo, InetSettings};
use crate::config::{ClientConfig, DEFAULT_ZONE};

mod bind;
mod binding;
mod keys;
mod rules;
mod values;

/// The default service URL map: Spring Cloud's `EurekaClientConfigBean`.
const DEFAULT_SERVICE_URL: &str = "http://localhost:8761/eureka/";

/// How the own address is found when it is not configured: [`address::find_host_info`], or
/// a stand-in in tests.
pub(crate) type HostLookup<'a> = &'a dyn Fn(&InetSettings) -> HostInfo;

/// The client's relaxed-name rules: the key table's maps keep their keys as written.
fn names() -> Names {
    keys::names().clone()
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
        KEYS.iter()
            .filter(|key| !key.name.contains('<'))
            .map(|key| key.name.to_owned())
            .chain([
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
/// configured region and each of its zones.
fn zone_keys(
    properties: &Properties,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<String>, ConfigError> {
    let fallback = |key: &str| Some(default_of(key).to_owned()).filter(|value| !value.is_empty());
    let defaults = |key: &str| default_of(key).to_owned();
    let binder = Binder::new(
        Resolver {
            properties,
            env,
            fallback: &fallback,
        },
        &defaults,
    );
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
    Ok(asked)
}

#[cfg(test)]
mod tests;
