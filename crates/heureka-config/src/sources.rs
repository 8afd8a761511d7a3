//! Property sources and their merge: the command line, environment variables and (in
//! `files.rs`) configuration files, overlaid lowest precedence first like Spring's
//! `MutablePropertySources`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use crate::names::Names;
use crate::schema::Schema;

/// Where a value came from; error messages name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A `--key=value` argument.
    CommandLine,
    /// The environment variable of that name.
    Env(String),
    /// A configuration file.
    File(PathBuf),
    /// The application's own default.
    Default,
    /// Set by the program itself, not read from outside.
    Code,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::CommandLine => f.write_str("command line"),
            Origin::Env(name) => write!(f, "environment variable {name}"),
            Origin::File(path) => write!(f, "file {}", path.display()),
            Origin::Default => f.write_str("default"),
            Origin::Code => f.write_str("set in code"),
        }
    }
}

/// One `name = value` pair as a source wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    /// The name as written (relaxed forms are compared through [`Names::canonical`]).
    pub name: String,
    /// The raw value, placeholders unresolved.
    pub value: String,
    /// Where it was written.
    pub origin: Origin,
}

/// The merged view of all sources, keyed by canonical name.
#[derive(Debug, Default)]
pub struct Properties {
    names: Names,
    by_name: BTreeMap<String, Property>,
}

impl Properties {
    /// No properties yet, compared by `names`' rules.
    pub fn new(names: Names) -> Properties {
        Properties {
            names,
            by_name: BTreeMap::new(),
        }
    }

    /// The relaxed-name rules these properties are compared by.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// Puts one source on top of what is there. Indexed entries (`urls[0]`, `urls[1]`) are
    /// first joined into one comma-separated value, so that a higher source replaces a whole
    /// list, as Spring's binder does, and a list is accepted wherever a comma list is.
    pub fn overlay(&mut self, source: Vec<Property>) {
        let mut lists: BTreeMap<String, Vec<(u64, Property)>> = BTreeMap::new();
        for property in source {
            let canonical = self.names.canonical(&property.name);
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
    pub fn get(&self, name: &str) -> Option<&Property> {
        self.by_name.get(&self.names.canonical(name))
    }

    /// The entries of a map-valued key: `(map key, property)` for `prefix.<map key>`.
    pub fn map_entries<'a>(
        &'a self,
        prefix: &str,
    ) -> impl Iterator<Item = (&'a str, &'a Property)> + 'a {
        let start = format!("{}.", self.names.canonical(prefix));
        let skip = start.len();
        self.by_name
            .range(start.clone()..)
            .take_while(move |(name, _)| name.starts_with(&start))
            .map(move |(name, property)| (&name[skip..], property))
    }

    /// All entries, by canonical name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Property)> {
        self.by_name
            .iter()
            .map(|(name, property)| (name.as_str(), property))
    }
}

/// Why a command-line argument is not a setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgumentError {
    /// The argument does not start with `--`.
    NotAnOption(String),
    /// `--=value`: no key name.
    MissingName(String),
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgumentError::NotAnOption(arg) => write!(
                f,
                "unexpected argument '{arg}' (command line): settings are written --key=value"
            ),
            ArgumentError::MissingName(arg) => write!(
                f,
                "unexpected argument '{arg}' (command line): missing key name in --key=value"
            ),
        }
    }
}

impl std::error::Error for ArgumentError {}

/// Parses Spring Boot's command-line property syntax: `--key=value`, and `--key` for `true`
/// (`SimpleCommandLineArgsParser`). `args` excludes the program name. Spring ignores other
/// arguments; callers that do the same filter them out first.
pub fn parse_args(args: &[String]) -> Result<Vec<Property>, ArgumentError> {
    let mut properties = Vec::new();
    for arg in args {
        let Some(setting) = arg.strip_prefix("--") else {
            return Err(ArgumentError::NotAnOption(arg.clone()));
        };
        let (name, value) = setting.split_once('=').unwrap_or((setting, "true"));
        if name.trim().is_empty() {
            return Err(ArgumentError::MissingName(arg.clone()));
        }
        properties.push(Property {
            name: name.trim().to_owned(),
            value: value.to_owned(),
            origin: Origin::CommandLine,
        });
    }
    Ok(properties)
}

/// Looks up the environment variables for the schema's keys and then for `map_names`. The
/// environment is queried by name, never enumerated, so that callers can pass a closure over
/// a map in tests and map keys no other source mentions can only come from the command line
/// or a file.
pub(crate) fn env_properties(
    schema: &Schema,
    env: &dyn Fn(&str) -> Option<String>,
    map_names: impl Iterator<Item = String>,
) -> Vec<Property> {
    let names = schema.names();
    let mut seen = std::collections::BTreeSet::new();
    let mut properties = Vec::new();
    let mut look_up = |name: &str, vars: &[String]| {
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
    };
    for key in &schema.env_keys {
        if seen.insert(key.canonical.clone()) {
            look_up(&key.name, &key.vars);
        }
    }
    for name in map_names {
        if seen.insert(names.canonical(&name)) {
            look_up(&name, &names.env_names(&name));
        }
    }
    properties
}

/// Looks a key up on the command line, then in the environment; used for the keys that
/// decide which files to read and so cannot come from a file.
pub(crate) fn early_setting(
    names: &Names,
    command_line: &[Property],
    env: &dyn Fn(&str) -> Option<String>,
    name: &str,
) -> Option<Property> {
    let canonical = names.canonical(name);
    if let Some(property) = command_line
        .iter()
        .rev()
        .find(|property| names.canonical(&property.name) == canonical)
    {
        return Some(property.clone());
    }
    names.env_names(name).into_iter().find_map(|var| {
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
