//! Spring Boot's way of reading configuration, for Rust programs that share a Spring
//! application's settings: `application.{properties,yml,yaml}` in `./`, `./config/` and
//! `./config/*/`, profile files and documents, `spring.config.location` and
//! `spring.config.additional-location`, environment variables in relaxed form, `--key=value`
//! arguments, `${placeholders}`, relaxed names, and value conversions (booleans, numbers,
//! durations, data sizes) as Spring reads them.
//!
//! Loading goes in two stages. [`load`] merges the sources into flat [`Properties`], highest
//! precedence last: files (`files.rs`, `formats.rs`), environment, command line
//! (`sources.rs`). A [`Binder`] then reads typed values from them, resolving placeholders
//! (`placeholders.rs`) and reporting a bad value with its key and source. What keys exist and
//! what their defaults are is the application's business: it passes a [`Schema`] naming the
//! keys to look up in the environment and the maps whose keys are kept as written. Its key
//! table can read each key through a value type of [`typed`] and check its own names with
//! [`names`].
//!
//! Nothing here knows Eureka or Heureka.

mod binder;
mod files;
mod formats;
pub mod names;
mod placeholders;
mod sources;
pub mod typed;
pub mod values;

#[cfg(test)]
mod tests;

use std::fmt;
use std::path::Path;

pub use binder::{Binder, Setting};
pub use names::Names;
pub use placeholders::{PlaceholderError, Resolver};
pub use sources::{parse_args, ArgumentError, Origin, Properties, Property};

/// Environment variable naming config files that replace the default locations.
pub const ENV_SPRING_CONFIG_LOCATION: &str = "SPRING_CONFIG_LOCATION";
/// Environment variable naming config files read on top of the default locations.
pub const ENV_SPRING_CONFIG_ADDITIONAL_LOCATION: &str = "SPRING_CONFIG_ADDITIONAL_LOCATION";
/// Environment variable listing the active profiles.
pub const ENV_SPRING_PROFILES_ACTIVE: &str = "SPRING_PROFILES_ACTIVE";

/// What an application tells the loader about its keys. Built once per application: the
/// environment variable names of every key are worked out here, not on every load.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    names: Names,
    env_keys: Vec<EnvKey>,
}

/// A key to look up in the environment, with its canonical form and the variable names that
/// map to it, most preferred first.
#[derive(Debug, Clone)]
pub(crate) struct EnvKey {
    pub(crate) name: String,
    pub(crate) canonical: String,
    pub(crate) vars: Vec<String>,
}

impl Schema {
    /// The relaxed-name rules `names` (with the application's map prefixes) and every key to
    /// look up in the environment, in Spring's kebab-case. Map entries that a file or the
    /// command line names are looked up too; `env_keys` are the others.
    pub fn new(names: Names, env_keys: impl IntoIterator<Item = String>) -> Schema {
        let mut schema = Schema {
            names,
            env_keys: Vec::new(),
        };
        schema.add_env_keys(env_keys);
        schema
    }

    /// The relaxed-name rules.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// Looks `keys` up in the environment too.
    pub fn add_env_keys(&mut self, keys: impl IntoIterator<Item = String>) {
        for name in keys {
            let canonical = self.names.canonical(&name);
            let vars = self.names.env_names(&name);
            self.env_keys.push(EnvKey {
                name,
                canonical,
                vars,
            });
        }
    }

    /// Whether `key` (in any relaxed spelling) is looked up in the environment.
    pub fn has_env_key(&self, key: &str) -> bool {
        let canonical = self.names.canonical(key);
        self.env_keys
            .iter()
            .any(|known| known.canonical == canonical)
    }
}

/// The merged sources and a description of each one read, for a start-up log.
#[derive(Debug, Default)]
pub struct Sources {
    /// Every property, the highest-precedence source's value for each.
    pub properties: Properties,
    /// `file <path>` for each file read, then `environment (N variables)` and
    /// `command line (N arguments)` when they contributed.
    pub read: Vec<String>,
}

/// A configuration problem, displayed as one line naming the key and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    message: String,
}

impl ConfigError {
    /// An error with this one-line message.
    pub fn new(message: impl Into<String>) -> Self {
        ConfigError {
            message: message.into(),
        }
    }

    /// `invalid value '<value>' for <key> (<origin>): expected <expected>`.
    pub fn invalid(key: &str, value: &str, origin: &Origin, expected: &str) -> Self {
        ConfigError::new(format!(
            "invalid value '{value}' for {key} ({origin}): expected {expected}"
        ))
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Merges the configuration files around `cwd`, the environment (`env` looks a variable up by
/// name) and `command_line` (from [`parse_args`]), lowest precedence first, as Spring Boot's
/// `ConfigDataEnvironment` does.
pub fn load(
    schema: &Schema,
    command_line: Vec<Property>,
    env: &dyn Fn(&str) -> Option<String>,
    cwd: &Path,
) -> Result<Sources, ConfigError> {
    let names = schema.names();
    let early = |name: &str| sources::early_setting(names, &command_line, env, name);
    let file_settings = files::FileSettings {
        location: early("spring.config.location"),
        additional_location: early("spring.config.additional-location"),
        name: early("spring.config.name"),
        profiles: early("spring.profiles.active"),
    };
    let loaded_files = files::load(&file_settings, cwd)?;

    let map_names = loaded_files
        .sources
        .iter()
        .flatten()
        .chain(&command_line)
        .filter(|property| names.is_map_entry(&property.name))
        .map(|property| property.name.clone());
    let env_properties = sources::env_properties(schema, env, map_names);

    let mut read: Vec<String> = loaded_files
        .read
        .iter()
        .map(|path| format!("file {}", path.display()))
        .collect();
    if !env_properties.is_empty() {
        read.push(format!(
            "environment ({})",
            plural(env_properties.len(), "variable")
        ));
    }
    if !command_line.is_empty() {
        read.push(format!(
            "command line ({})",
            plural(command_line.len(), "argument")
        ));
    }

    let mut properties = Properties::new(names.clone());
    for source in loaded_files.sources {
        properties.overlay(source);
    }
    properties.overlay(env_properties);
    properties.overlay(command_line);
    Ok(Sources { properties, read })
}

/// The properties of one `.properties`, `.yml` or `.yaml` file, compared by `names`' rules:
/// its documents that name no profile, later ones on top of earlier ones.
pub fn load_file(path: &Path, names: &Names) -> Result<Properties, ConfigError> {
    let mut properties = Properties::new(names.clone());
    properties.overlay(files::read_plain(path)?);
    Ok(properties)
}

fn plural(count: usize, noun: &str) -> String {
    match count {
        1 => format!("1 {noun}"),
        _ => format!("{count} {noun}s"),
    }
}
