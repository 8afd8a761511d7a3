//! Property sources and their merge: the command line, environment variables and (in
//! `files.rs`) configuration files, overlaid lowest precedence first like Spring's
//! `MutablePropertySources`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;

use super::{keys, names, ConfigError};

/// Where a value came from; error messages name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    CommandLine,
    Env(String),
    File(PathBuf),
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::CommandLine => f.write_str("command line"),
            Origin::Env(name) => write!(f, "environment variable {name}"),
            Origin::File(path) => write!(f, "file {}", path.display()),
            Origin::Default => f.write_str("default"),
        }
    }
}

/// One `name = value` pair as a source wrote it.
#[derive(Debug, Clone)]
pub(crate) struct Property {
    pub(crate) name: String,
    pub(crate) value: String,
    pub(crate) origin: Origin,
}

/// The merged view of all sources, keyed by canonical name.
#[derive(Debug, Default)]
pub(crate) struct Properties {
    by_name: BTreeMap<String, Property>,
}

impl Properties {
    /// Puts one source on top of what is there. Indexed entries (`urls[0]`, `urls[1]`) are
    /// first joined into one comma-separated value, so that a higher source replaces a whole
    /// list, as Spring's binder does, and a list is accepted wherever a comma list is.
    pub(crate) fn overlay(&mut self, source: Vec<Property>) {
        let mut lists: BTreeMap<String, Vec<(u64, Property)>> = BTreeMap::new();
        for property in source {
            let canonical = names::canonical(&property.name);
            match split_trailing_index(&canonical) {
                Some((base, index)) => lists
                    .entry(base.to_owned())
                    .or_default()
                    .push((index, property)),
                None => {
                    self.by_name.insert(canonical, property);
                }
            }
        }
        for (base, mut items) in lists {
            items.sort_by_key(|(index, _)| *index);
            let Some((_, first)) = items.first() else {
                continue;
            };
            let name = match split_trailing_index(&first.name) {
                Some((written_base, _)) => written_base.to_owned(),
                None => first.name.clone(),
            };
            let origin = first.origin.clone();
            let values: Vec<&str> = items.iter().map(|(_, item)| item.value.as_str()).collect();
            let joined = values.join(",");
            self.by_name.insert(
                base,
                Property {
                    name,
                    value: joined,
                    origin,
                },
            );
        }
    }

    /// The property for `name`, in any relaxed spelling.
    pub(crate) fn get(&self, name: &str) -> Option<&Property> {
        self.by_name.get(keys::canonical_of(name).as_ref())
    }

    /// The entries of a map-valued key: `(map key, property)` for `prefix.<map key>`.
    pub(crate) fn map_entries<'a>(
        &'a self,
        prefix: &str,
    ) -> impl Iterator<Item = (&'a str, &'a Property)> + 'a {
        let start = format!("{}.", names::canonical(prefix));
        let skip = start.len();
        self.by_name
            .range(start.clone()..)
            .take_while(move |(name, _)| name.starts_with(&start))
            .map(move |(name, property)| (&name[skip..], property))
    }

    /// All entries, by canonical name.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Property)> {
        self.by_name
            .iter()
            .map(|(name, property)| (name.as_str(), property))
    }
}

/// What the command line asks for.
#[derive(Debug)]
pub(crate) enum CommandLine {
    Help,
    Version,
    Run(Vec<Property>),
}

/// Parses Spring Boot's command-line property syntax: `--key=value`, and `--key` for `true`
/// (`SimpleCommandLineArgsParser`). `args` excludes the program name.
pub(crate) fn parse_command_line(args: &[String]) -> Result<CommandLine, ConfigError> {
    if args.iter().any(|arg| arg == "--help" || arg == "-h") {
        return Ok(CommandLine::Help);
    }
    if args.iter().any(|arg| arg == "--version" || arg == "-V") {
        return Ok(CommandLine::Version);
    }
    let mut properties = Vec::new();
    for arg in args {
        let Some(setting) = arg.strip_prefix("--") else {
            return Err(ConfigError::new(format!(
                "unexpected argument '{arg}' (command line): settings are written --key=value; \
                 see --help"
            )));
        };
        let (name, value) = setting.split_once('=').unwrap_or((setting, "true"));
        if name.trim().is_empty() {
            return Err(ConfigError::new(format!(
                "unexpected argument '{arg}' (command line): missing key name in --key=value"
            )));
        }
        properties.push(Property {
            name: name.trim().to_owned(),
            value: value.to_owned(),
            origin: Origin::CommandLine,
        });
    }
    Ok(CommandLine::Run(properties))
}

/// Looks up the environment variables for every bound key and for `extra_names` (map entries
/// other sources mention, such as `eureka.client.service-url.defaultZone`). The environment
/// is queried by name, never enumerated, so map keys no other source mentions can only come
/// from the command line or a file, except the two everyone uses (`defaultZone`, `root`).
pub(crate) fn env_properties<'a>(
    env: &dyn Fn(&str) -> Option<String>,
    extra_names: impl Iterator<Item = &'a str>,
) -> Vec<Property> {
    let extra: Vec<(String, String, Vec<String>)> = extra_names
        .map(|name| {
            (
                names::canonical(name),
                name.to_owned(),
                names::env_names(name),
            )
        })
        .collect();
    let candidates =
        bound_key_env_names()
            .iter()
            .map(|(canonical, name, vars)| (canonical.as_str(), name.as_str(), vars.as_slice()))
            .chain(extra.iter().map(|(canonical, name, vars)| {
                (canonical.as_str(), name.as_str(), vars.as_slice())
            }));

    let mut seen = std::collections::BTreeSet::new();
    let mut properties = Vec::new();
    for (canonical, name, vars) in candidates {
        if !seen.insert(canonical) {
            continue;
        }
        let found = vars
            .iter()
            .find_map(|var| env(var).map(|value| (var.clone(), value)));
        if let Some((var, value)) = found {
            properties.push(Property {
                name: name.to_owned(),
                value,
                origin: Origin::Env(var),
            });
        }
    }
    properties
}

/// `(canonical name, name, environment variable names)` of every bound key, `defaultZone` and
/// `logging.level.root`, computed once: deriving them on each load was most of its cost.
fn bound_key_env_names() -> &'static [(String, String, Vec<String>)] {
    static NAMES: OnceLock<Vec<(String, String, Vec<String>)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let default_zone = format!("eureka.client.service-url.{}", keys::DEFAULT_ZONE.0);
        keys::KEYS
            .iter()
            .filter(|key| !key.name.contains('<'))
            .map(|key| key.name.to_owned())
            .chain([default_zone, "logging.level.root".to_owned()])
            .map(|name| {
                let vars = names::env_names(&name);
                (names::canonical(&name), name, vars)
            })
            .collect()
    })
}

/// Looks a key up on the command line, then in the environment; used for the keys that
/// decide which files to read and so cannot come from a file.
pub(crate) fn early_setting(
    command_line: &[Property],
    env: &dyn Fn(&str) -> Option<String>,
    name: &str,
) -> Option<Property> {
    let canonical = names::canonical(name);
    if let Some(property) = command_line
        .iter()
        .rev()
        .find(|property| names::canonical(&property.name) == canonical)
    {
        return Some(property.clone());
    }
    names::env_names(name).into_iter().find_map(|var| {
        env(&var).map(|value| Property {
            name: name.to_owned(),
            value,
            origin: Origin::Env(var),
        })
    })
}

/// `urls[3]` → `("urls", 3)`.
fn split_trailing_index(name: &str) -> Option<(&str, u64)> {
    let inner = name.strip_suffix(']')?;
    let open = inner.rfind('[')?;
    let index = inner[open + 1..].parse().ok()?;
    Some((&name[..open], index))
}
