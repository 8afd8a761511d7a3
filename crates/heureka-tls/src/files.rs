//! Reading the files the settings point at, a failure naming the setting.

use crate::error::TlsError;

/// A file's bytes; a failure names `key`, the setting that points at the file.
pub(crate) fn read_file(
    path: &std::path::Path,
    key: impl FnOnce() -> String,
) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|error| {
        let reason = match error.kind() {
            std::io::ErrorKind::NotFound => format!("no such file: {}", path.display()),
            _ => format!("cannot read {}: {error}", path.display()),
        };
        TlsError::new(key(), reason)
    })
}
