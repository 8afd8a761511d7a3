//! Reading typed values out of merged properties: each value with its placeholders resolved,
//! or the application's default, and a bad one reported with its key and source.

use crate::error::ConfigError;
use crate::placeholders::{PlaceholderError, Resolver};
use crate::sources::{Origin, Properties};
use crate::values;

/// A resolved value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// The value, placeholders resolved.
    pub value: String,
    /// Where it was written; [`Origin::Default`] for the application's default.
    pub origin: Origin,
}

/// Where a binder finds a key's default: a key table, or a function in tests.
pub trait Defaults {
    /// The default of `key` as text, empty for "unset".
    fn default_text(&self, key: &str) -> String;
}

impl<F: Fn(&str) -> String> Defaults for F {
    fn default_text(&self, key: &str) -> String {
        self(key)
    }
}

/// Reads keys: the merged value with placeholders resolved, or the application's default.
pub struct Binder<'a> {
    properties: &'a Properties,
    resolver: Resolver<'a>,
    defaults: &'a dyn Defaults,
}

impl<'a> Binder<'a> {
    /// A binder over `resolver.properties`; `defaults` gives a key's default as text, empty
    /// for "unset".
    pub fn new(resolver: Resolver<'a>, defaults: &'a dyn Defaults) -> Binder<'a> {
        Binder {
            properties: resolver.properties,
            resolver,
            defaults,
        }
    }

    /// The merged properties.
    pub fn properties(&self) -> &'a Properties {
        self.properties
    }

    /// The value of `key`, or its default.
    pub fn setting(&self, key: &str) -> Result<Setting, ConfigError> {
        match self.properties.get(key) {
            Some(property) => self.resolve(key, &property.value, &property.origin),
            None => Ok(Setting {
                value: self.defaults.default_text(key),
                origin: Origin::Default,
            }),
        }
    }

    /// `raw` (the value of `key`, from `origin`) with its placeholders resolved.
    pub fn resolve(&self, key: &str, raw: &str, origin: &Origin) -> Result<Setting, ConfigError> {
        let value = self.resolver.resolve(raw).map_err(|error| {
            let why = match error {
                PlaceholderError::Unresolvable(placeholder) => {
                    format!("could not resolve placeholder '{placeholder}'")
                }
                PlaceholderError::Circular(placeholder) => {
                    format!("circular placeholder reference '{placeholder}'")
                }
            };
            ConfigError::new(format!("{why} in value '{raw}' of {key} ({origin})"))
        })?;
        Ok(Setting {
            value,
            origin: origin.clone(),
        })
    }

    /// The value of `key` converted by `parse`; `expected` says what a good value looks like.
    pub fn parse<T>(
        &self,
        key: &str,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<T, ConfigError> {
        let setting = self.setting(key)?;
        parse(&setting.value)
            .ok_or_else(|| ConfigError::invalid(key, &setting.value, &setting.origin, expected))
    }

    /// Like [`Binder::parse`], but unset or blank means `None`.
    pub fn optional<T>(
        &self,
        key: &str,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>, ConfigError> {
        let setting = self.setting(key)?;
        if setting.value.trim().is_empty() {
            return Ok(None);
        }
        parse(&setting.value)
            .map(Some)
            .ok_or_else(|| ConfigError::invalid(key, &setting.value, &setting.origin, expected))
    }

    /// A comma-separated list (or a YAML list, which arrives joined), items trimmed, empty
    /// items dropped, as Spring converts a `String` to a `List<String>`.
    pub fn list(&self, key: &str) -> Result<Vec<String>, ConfigError> {
        Ok(values::parse_list(&self.setting(key)?.value))
    }

    /// The entries of the map at `prefix` (`prefix.<map key>`), values resolved, by map key.
    pub fn map(&self, prefix: &str) -> Result<Vec<(String, Setting)>, ConfigError> {
        self.properties
            .map_entries(prefix)
            .map(|(map_key, property)| {
                let key = format!("{prefix}.{map_key}");
                let setting = self.resolve(&key, &property.value, &property.origin)?;
                Ok((map_key.to_owned(), setting))
            })
            .collect()
    }
}
