//! Finding and reading configuration files the way Spring Boot's `ConfigDataEnvironment` does.
//!
//! Default locations, lowest precedence first: `./`, `./config/`, `./config/*/`. In each,
//! `application.yaml` < `application.yml` < `application.properties`. Then, for each active
//! profile (the last wins), documents activated by `spring.config.activate.on-profile` and
//! `application-{profile}.*` in every location. `spring.config.location` replaces the default
//! locations and `spring.config.additional-location` adds more on top.

use std::path::{Path, PathBuf};

use crate::error::ConfigError;
use crate::formats::{self, Document};
use crate::names::Names;
use crate::sources::{Origin, Property};

/// The early settings that decide which files are read.
#[derive(Debug, Default)]
pub(crate) struct FileSettings {
    pub(crate) location: Option<Property>,
    pub(crate) additional_location: Option<Property>,
    pub(crate) name: Option<Property>,
    /// `spring.profiles.active` from the command line or environment; it beats the files.
    pub(crate) profiles: Option<Property>,
}

/// The files' property sources, lowest precedence first, and the files read.
#[derive(Debug, Default)]
pub(crate) struct LoadedFiles {
    pub(crate) sources: Vec<Vec<Property>>,
    pub(crate) read: Vec<PathBuf>,
}

#[derive(Debug)]
enum Location {
    Directory(PathBuf),
    File(PathBuf),
}

struct ParsedFile {
    path: PathBuf,
    documents: Vec<Document>,
}

/// Reads every configuration file that applies, in precedence order.
pub(crate) fn load(settings: &FileSettings, cwd: &Path) -> Result<LoadedFiles, ConfigError> {
    let base_name = settings.name.as_ref().map_or_else(
        || "application".to_owned(),
        |name| name.value.trim().to_owned(),
    );
    let mut locations = match &settings.location {
        Some(location) => explicit_locations(location, cwd)?,
        None => default_locations(cwd),
    };
    if let Some(additional) = &settings.additional_location {
        locations.extend(explicit_locations(additional, cwd)?);
    }

    let mut base_files = Vec::new();
    for location in &locations {
        let paths = match location {
            Location::File(path) => vec![path.clone()],
            Location::Directory(dir) => candidates(dir, &base_name),
        };
        for path in paths {
            base_files.push(read(&path)?);
        }
    }

    let mut loaded = LoadedFiles::default();
    for file in &base_files {
        let plain = file
            .documents
            .iter()
            .filter(|doc| doc.on_profile().is_none());
        loaded.push(&file.path, plain);
    }
    let profiles = active_profiles(settings.profiles.as_ref(), &loaded);
    for profile in &profiles {
        for file in &base_files {
            let activated = file.documents.iter().filter(|doc| {
                doc.on_profile()
                    .is_some_and(|expression| matches_profile(expression, profile, &profiles))
            });
            loaded.push(&file.path, activated);
        }
        for location in &locations {
            let Location::Directory(dir) = location else {
                continue;
            };
            for path in candidates(dir, &format!("{base_name}-{profile}")) {
                let file = read(&path)?;
                let applicable = file.documents.iter().filter(|doc| {
                    doc.on_profile()
                        .is_none_or(|expression| matches_profile(expression, profile, &profiles))
                });
                loaded.push(&file.path, applicable);
            }
        }
    }
    Ok(loaded)
}

/// The properties of the documents of one file that name no profile, in file order.
pub(crate) fn read_plain(path: &Path) -> Result<Vec<Property>, ConfigError> {
    let file = read(path)?;
    let mut loaded = LoadedFiles::default();
    loaded.push(
        &file.path,
        file.documents
            .iter()
            .filter(|doc| doc.on_profile().is_none()),
    );
    Ok(loaded.sources.into_iter().flatten().collect())
}

impl LoadedFiles {
    fn push<'a>(&mut self, path: &Path, documents: impl Iterator<Item = &'a Document>) {
        let mut any = false;
        for document in documents {
            any = true;
            self.sources.push(
                document
                    .entries
                    .iter()
                    .map(|(name, value)| Property {
                        name: name.clone(),
                        value: value.clone(),
                        origin: Origin::File(path.to_owned()),
                    })
                    .collect(),
            );
        }
        if any && !self.read.iter().any(|read| read == path) {
            self.read.push(path.to_owned());
        }
    }
}

fn default_locations(cwd: &Path) -> Vec<Location> {
    let config_dir = cwd.join("config");
    let mut subdirectories: Vec<PathBuf> = std::fs::read_dir(&config_dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.is_dir())
                .collect()
        })
        .unwrap_or_default();
    subdirectories.sort();
    [cwd.to_owned(), config_dir]
        .into_iter()
        .chain(subdirectories)
        .map(Location::Directory)
        .collect()
}

/// Parses `path[,path]`; `optional:` entries may be missing, others must exist.
fn explicit_locations(setting: &Property, cwd: &Path) -> Result<Vec<Location>, ConfigError> {
    let mut locations = Vec::new();
    for entry in setting
        .value
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        let (optional, rest) = match entry.strip_prefix("optional:") {
            Some(rest) => (true, rest),
            None => (false, entry),
        };
        if rest.starts_with("classpath:") {
            if optional {
                continue;
            }
            return Err(location_error(
                setting,
                entry,
                "classpath: locations do not exist here",
            ));
        }
        let rest = rest.strip_prefix("file:").unwrap_or(rest);
        let path = cwd.join(rest);
        let is_directory = rest.ends_with('/') || rest.ends_with('\\') || path.is_dir();
        if !path.exists() {
            if optional {
                continue;
            }
            return Err(location_error(setting, entry, "no such file or directory"));
        }
        locations.push(if is_directory {
            Location::Directory(path)
        } else {
            Location::File(path)
        });
    }
    Ok(locations)
}

fn location_error(setting: &Property, entry: &str, why: &str) -> ConfigError {
    ConfigError::new(format!(
        "cannot read config location '{entry}' given in {} ({}): {why}",
        setting.name, setting.origin
    ))
}

/// The files named `base.*` that exist in `dir`, lowest precedence first.
fn candidates(dir: &Path, base: &str) -> Vec<PathBuf> {
    ["yaml", "yml", "properties"]
        .iter()
        .map(|extension| dir.join(format!("{base}.{extension}")))
        .filter(|path| path.is_file())
        .collect()
}

fn read(path: &Path) -> Result<ParsedFile, ConfigError> {
    let fail = |why: String| ConfigError::new(format!("cannot read {}: {why}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|error| fail(error.to_string()))?;
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let documents = match extension.to_ascii_lowercase().as_str() {
        "properties" => formats::parse_properties(&text),
        "yml" | "yaml" => formats::parse_yaml(&text).map_err(fail)?,
        _ => {
            return Err(fail(
                "expected a .properties, .yml or .yaml file".to_owned(),
            ))
        }
    };
    Ok(ParsedFile {
        path: path.to_owned(),
        documents,
    })
}

/// `spring.profiles.active` from the command line or environment, else from the files; when
/// none is active, Spring activates the `default` profile.
fn active_profiles(early: Option<&Property>, loaded: &LoadedFiles) -> Vec<String> {
    let names = Names::default();
    let wanted = names.canonical("spring.profiles.active");
    let from_files = loaded
        .sources
        .iter()
        .flatten()
        .rfind(|property| names.canonical(&property.name) == wanted);
    let value = early
        .or(from_files)
        .map_or("", |property| property.value.as_str());
    let profiles: Vec<String> = value
        .split(',')
        .map(str::trim)
        .filter(|profile| !profile.is_empty())
        .map(str::to_owned)
        .collect();
    if profiles.is_empty() {
        vec!["default".to_owned()]
    } else {
        profiles
    }
}

/// Whether an `on-profile` expression (`a`, `a,b`, `!a`) selects a document while `current`
/// is being applied: it must name `current`, or be a negation true for the active set.
fn matches_profile(expression: &str, current: &str, active: &[String]) -> bool {
    expression
        .split(',')
        .map(str::trim)
        .any(|item| match item.strip_prefix('!') {
            Some(negated) => {
                current == active[active.len() - 1] && !active.iter().any(|p| p == negated)
            }
            None => item == current,
        })
}
