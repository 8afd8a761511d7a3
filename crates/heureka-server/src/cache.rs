//! The response cache: full and delta documents, encoded once per registry version.
//!
//! Eureka serves reads from a read-only copy refreshed every 30 s, so a new registration can
//! stay invisible for that long. Heureka keys each cached document on the registry's version
//! instead: any visible change makes the next read re-encode, so reads are never stale, while
//! a burst of reads between changes (and all heartbeats, which do not change the version) is
//! served from the same pre-encoded, pre-compressed bytes.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;
use heureka_wire::Format;
use parking_lot::Mutex;

/// Which cached document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Document {
    /// `GET /apps`.
    AllApps,
    /// `GET /apps/delta`.
    Delta,
}

/// One encoded document and the registry version it was encoded from.
#[derive(Debug)]
pub(crate) struct Encoded {
    version: u64,
    encoded_at: Instant,
    pub(crate) body: Bytes,
    gzipped: OnceLock<Bytes>,
}

impl Encoded {
    /// The body gzip-compressed, computed on first request and then kept.
    pub(crate) fn gzipped(&self) -> Bytes {
        self.gzipped.get_or_init(|| gzip(&self.body)).clone()
    }
}

#[derive(Debug)]
pub(crate) struct ResponseCache {
    entries: Mutex<HashMap<(Document, Format), Arc<Encoded>>>,
    /// `response-cache-auto-expiration-in-seconds`: even without changes, documents are
    /// re-encoded this often so the lease timestamps they show do not age indefinitely.
    max_age: Duration,
}

impl ResponseCache {
    pub(crate) fn new(max_age: Duration) -> ResponseCache {
        ResponseCache {
            entries: Mutex::new(HashMap::new()),
            max_age,
        }
    }

    /// The cached document if it was encoded from registry `version` and is fresh enough.
    pub(crate) fn get(
        &self,
        document: Document,
        format: Format,
        version: u64,
    ) -> Option<Arc<Encoded>> {
        let entries = self.entries.lock();
        let entry = entries.get(&(document, format))?;
        (entry.version == version && entry.encoded_at.elapsed() < self.max_age)
            .then(|| entry.clone())
    }

    /// Stores a freshly encoded document, unless a newer version got there first.
    pub(crate) fn put(
        &self,
        document: Document,
        format: Format,
        version: u64,
        body: Vec<u8>,
    ) -> Arc<Encoded> {
        let encoded = Arc::new(Encoded {
            version,
            encoded_at: Instant::now(),
            body: Bytes::from(body),
            gzipped: OnceLock::new(),
        });
        let mut entries = self.entries.lock();
        let slot = entries
            .entry((document, format))
            .or_insert_with(|| encoded.clone());
        if slot.version <= version {
            *slot = encoded.clone();
        }
        encoded
    }
}

/// Fast gzip: these payloads are highly repetitive, so level 1 already shrinks them ~10×
/// at a fraction of the default level's cost on the request path.
fn gzip(body: &[u8]) -> Bytes {
    let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 8 + 64), Compression::fast());
    encoder
        .write_all(body)
        .expect("writing to a Vec cannot fail");
    Bytes::from(encoder.finish().expect("writing to a Vec cannot fail"))
}
