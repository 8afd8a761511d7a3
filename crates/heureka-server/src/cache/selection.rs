//! The cache of single-application and VIP reads, bounded in bytes.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use heureka_core::{Application, Applications, Registry};
use heureka_wire::Format;
use parking_lot::Mutex;

use super::age::younger;
use crate::clock::Instant;
use crate::store::Store;

/// What a single-application or VIP read selects.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Selection {
    /// `GET /apps/{app}`: keyed by the application's version, so changes elsewhere keep it.
    App(String),
    /// `GET /vips/{vip}`: keyed by the registry version (any application may join it).
    Vip(String),
    /// `GET /svips/{svip}`.
    SecureVip(String),
}

/// Bodies of single-application and VIP reads, each encoded once per version it depends on
/// (and re-encoded after `max_age`, as runs are). The requested names are the client's, so the
/// kept bytes are bounded ([`SelectionCache::MAX_BYTES`]): past the bound everything kept is
/// dropped and encoded again on demand. Two requests missing one body at the same moment may
/// both encode it; the full and delta documents, which cost far more, never are.
#[derive(Debug)]
pub(crate) struct SelectionCache {
    entries: Mutex<SelectionEntries>,
    max_age: Duration,
}

enum Selected {
    One(Application),
    Many(Applications),
}

#[derive(Debug, Default)]
struct SelectionEntries {
    by_selection: HashMap<(Selection, Format), SelectionEntry>,
    bytes: usize,
}

#[derive(Debug)]
struct SelectionEntry {
    version: u64,
    encoded_at: Instant,
    body: Bytes,
}

impl SelectionCache {
    /// 32 MiB: a few hundred small applications' or VIPs' documents, or a handful of large.
    const MAX_BYTES: usize = 32 << 20;

    pub(crate) fn new(max_age: Duration) -> SelectionCache {
        SelectionCache {
            entries: Mutex::default(),
            max_age,
        }
    }

    /// The encoded selection, or None for an application with no instances (a VIP is never
    /// missing: it selects nothing). Lock order: the registry, released, then the entries.
    pub(crate) fn get(
        &self,
        store: &Store,
        selection: &Selection,
        format: Format,
    ) -> Option<Bytes> {
        let version = |registry: &Registry| match selection {
            Selection::App(app) => registry.application_version(app),
            Selection::Vip(_) | Selection::SecureVip(_) => registry.version(),
        };
        let key = (selection.clone(), format);
        let current = version(&store.read());
        if let Some(entry) = self.entries.lock().by_selection.get(&key) {
            if entry.version == current && younger(entry.encoded_at, store.instant(), self.max_age)
            {
                return Some(entry.body.clone());
            }
        }
        // Copied under the registry lock, encoded after it is released.
        let (version, body) = {
            let registry = store.read();
            let selected = match selection {
                Selection::App(app) => Selected::One(registry.application(app)?),
                Selection::Vip(vip) => Selected::Many(registry.vip(vip, false)),
                Selection::SecureVip(vip) => Selected::Many(registry.vip(vip, true)),
            };
            (version(&registry), selected)
        };
        let body = Bytes::from(match body {
            Selected::One(application) => heureka_wire::encode_application(&application, format),
            Selected::Many(applications) => {
                heureka_wire::encode_applications(&applications, format)
            }
        });
        let mut entries = self.entries.lock();
        if entries.bytes + body.len() > Self::MAX_BYTES {
            *entries = SelectionEntries::default();
        }
        if body.len() <= Self::MAX_BYTES {
            entries.bytes += body.len();
            let entry = SelectionEntry {
                version,
                encoded_at: store.instant(),
                body: body.clone(),
            };
            if let Some(old) = entries.by_selection.insert(key, entry) {
                entries.bytes -= old.body.len();
            }
        }
        Some(body)
    }
}

#[cfg(test)]
mod tests;
