//! The cache of documents that include remote regions: each body encoded (and compressed)
//! once per local registry version and regions version, keyed on which document, which
//! regions, format and encoding. Kept simple on purpose: a region's document is rebuilt whole,
//! and only the bodies of the current versions are kept.

use std::collections::HashMap;
use std::io::Write;

use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;
use heureka_core::Applications;
use heureka_wire::Format;
use parking_lot::Mutex;

use super::encoding::Encoding;

/// Which merged body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct MergedKey {
    /// `true` for `/apps/delta`, `false` for `/apps`.
    pub(crate) delta: bool,
    /// The regions, as indexes in configuration order.
    pub(crate) regions: Vec<usize>,
    pub(crate) format: Format,
    pub(crate) encoding: Encoding,
    /// The local registry's version and the regions' version the body was built at.
    pub(crate) versions: (u64, u64),
}

/// At most this many bodies are kept: the combinations of regions clients ask for are few.
const MAX_ENTRIES: usize = 64;

#[derive(Debug, Default)]
pub(crate) struct MergedCache {
    entries: Mutex<HashMap<MergedKey, Bytes>>,
}

impl MergedCache {
    /// The body for `key` if it was built.
    pub(crate) fn ready(&self, key: &MergedKey) -> Option<Bytes> {
        self.entries.lock().get(key).cloned()
    }

    /// The body for `key`, built by `build` when missing. Two requests missing the same body
    /// at once may both build it; the regions' documents are read far less than the local ones.
    pub(crate) fn get(&self, key: MergedKey, build: impl FnOnce() -> Applications) -> Bytes {
        if let Some(body) = self.entries.lock().get(&key) {
            return body.clone();
        }
        let plain = heureka_wire::encode_applications(&build(), key.format);
        let body = Bytes::from(match key.encoding {
            Encoding::Plain => plain,
            Encoding::Gzip => gzip(&plain),
        });
        let mut entries = self.entries.lock();
        entries.retain(|kept, _| kept.versions == key.versions);
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(key, body.clone());
        body
    }
}

fn gzip(plain: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(plain.len() / 8), Compression::new(6));
    encoder
        .write_all(plain)
        .expect("writing to a Vec does not fail");
    encoder.finish().expect("writing to a Vec does not fail")
}

#[cfg(test)]
mod tests;
