//! Loading a [`Config`]: `--help` and `--version` first, then the sources merged, the refused
//! and unknown keys rejected, and the rest bound.

use std::path::Path;

use heureka_config::{ArgumentError, ConfigError, Properties};

use super::bind::bind;
use super::help::help_text;
use super::model::{Config, Loaded};
use super::names::{names, schema, table};
use super::unknown::reject_unknown_keys;

impl Default for Config {
    /// The configuration with no sources at all: every key at its default.
    fn default() -> Self {
        bind(&Properties::new(names().clone()), &|_| None).expect("the built-in defaults are valid")
    }
}

/// Loads the configuration from `args` (the command line without the program name), the
/// environment (`env` looks a variable up by name) and the config files around `cwd`.
pub fn load(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
    cwd: &Path,
) -> Result<Loaded, ConfigError> {
    if args.iter().any(|arg| arg == "--help" || arg == "-h") {
        return Ok(Loaded::Help(help_text()));
    }
    if args.iter().any(|arg| arg == "--version" || arg == "-V") {
        return Ok(Loaded::Version(format!(
            "heureka {}",
            env!("CARGO_PKG_VERSION")
        )));
    }
    let command_line = heureka_config::parse_args(args).map_err(|error| match error {
        ArgumentError::NotAnOption(_) => ConfigError::new(format!("{error}; see --help")),
        ArgumentError::MissingName(_) => ConfigError::new(error.to_string()),
    })?;
    let sources = heureka_config::load(schema(), command_line, env, cwd)?;
    table().reject_refused(&sources.properties)?;
    reject_unknown_keys(&sources.properties)?;
    let mut config = bind(&sources.properties, env)?;
    config.sources = sources.read;
    Ok(Loaded::Run(config))
}
