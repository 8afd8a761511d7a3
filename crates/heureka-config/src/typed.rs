//! Typed reading of one setting: a value type turns a [`Setting`]'s text into a value, or into a
//! [`ConfigError`] naming the key, the value, where it was written and what was expected. An
//! application's key table names a value type per key, so each key's conversion and message
//! are written once.

use crate::binder::Setting;
use crate::error::ConfigError;
use crate::values;

#[cfg(test)]
mod tests;

/// A value type: how a setting's text becomes a value. `Sync` so that a key table of them can
/// be a `static`.
pub trait Value: Sync {
    /// The value read.
    type Out;
    /// `setting`, the value of `key`, converted.
    fn read(&self, key: &str, setting: Setting) -> Result<Self::Out, ConfigError>;
}

/// One value parsed from its text.
pub struct Type<T> {
    /// What a good value looks like, for the error message.
    expected: &'static str,
    parse: fn(&str) -> Option<T>,
}

impl<T> Type<T> {
    /// Values that `parse` reads; `expected` says what a good one looks like (`true or false`).
    pub const fn new(expected: &'static str, parse: fn(&str) -> Option<T>) -> Type<T> {
        Type { expected, parse }
    }
}

impl<T> Value for Type<T> {
    type Out = T;
    fn read(&self, key: &str, setting: Setting) -> Result<T, ConfigError> {
        (self.parse)(&setting.value).ok_or_else(|| {
            ConfigError::invalid(key, &setting.value, &setting.origin, self.expected)
        })
    }
}

/// A value that may be left out: unset or blank is `None`.
pub struct Optional<T>(pub Type<T>);

impl<T> Value for Optional<T> {
    type Out = Option<T>;
    fn read(&self, key: &str, setting: Setting) -> Result<Option<T>, ConfigError> {
        if setting.value.trim().is_empty() {
            return Ok(None);
        }
        self.0.read(key, setting).map(Some)
    }
}

/// A comma-separated list (a YAML list arrives joined), items trimmed and blank ones dropped,
/// as Spring converts a `String` to a `List` ([`values::parse_list`]). A bad item is reported
/// on its own, so that the message points at it in a long list.
pub struct ListOf<T>(pub Type<T>);

impl<T> Value for ListOf<T> {
    type Out = Vec<T>;
    fn read(&self, key: &str, setting: Setting) -> Result<Vec<T>, ConfigError> {
        let Type { expected, parse } = &self.0;
        values::parse_list(&setting.value)
            .into_iter()
            .map(|item| {
                parse(&item)
                    .ok_or_else(|| ConfigError::invalid(key, &item, &setting.origin, expected))
            })
            .collect()
    }
}
