//! Stage one of loading: the files, the environment and the command line merged into flat
//! properties by Spring Boot's precedence.

use std::path::Path;

use crate::error::ConfigError;
use crate::files;
use crate::names::Names;
use crate::schema::Schema;
use crate::sources::{self, Properties, Property};

/// The merged sources and a description of each one read, for a start-up log.
#[derive(Debug, Default)]
pub struct Sources {
    /// Every property, the highest-precedence source's value for each.
    pub properties: Properties,
    /// `file <path>` for each file read, then `environment (N variables)` and
    /// `command line (N arguments)` when they contributed.
    pub read: Vec<String>,
}

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
