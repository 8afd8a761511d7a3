//! `TlsError`: a TLS setting that cannot be used, naming the key the user wrote.

use std::fmt;

/// A TLS setting that cannot be used: the key the user wrote and why, shown on one line as
/// `"{key}: {reason}"`, e.g.
/// `server.ssl.key-store-password: wrong password for /path/ks.p12 (PKCS12)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsError {
    pub key: String,
    pub reason: String,
}

impl TlsError {
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> Self {
        TlsError {
            key: key.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One line whatever a library put in the reason: the binary prints it as its exit message.
        let reason = self.reason.replace(['\n', '\r'], " ");
        write!(f, "{}: {}", self.key, reason)
    }
}

impl std::error::Error for TlsError {}
