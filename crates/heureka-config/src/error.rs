//! The one error of configuration reading: a line naming the key, the value and where it was
//! written.

use std::fmt;

use crate::sources::Origin;

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
