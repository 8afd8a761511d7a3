//! The response cache: full and delta documents, never stale, re-encoded as little as possible.
//!
//! Eureka serves reads from a read-only copy refreshed every 30 s, so a new registration can
//! stay invisible for that long. Heureka keys every cached document on the registry's version
//! instead: any visible change makes the next read rebuild, so reads are never stale, while a
//! burst of reads between changes (and all heartbeats, which do not change the version) is
//! served from the same pre-encoded, pre-compressed bytes.
//!
//! The full document is kept as one encoded fragment per application, each with its own
//! deflate segment. A change re-encodes and re-compresses only the applications it touched;
//! the document is then the unchanged fragments in order. The gzip body is the fragments'
//! deflate segments laid end to end inside one gzip member (each segment ends on a byte
//! boundary with a sync flush and none refers back past its start, which is how `pigz` builds
//! one stream from parallel pieces), so clients receive ordinary single-member gzip.
//! Rebuilding after a registration among 10,000 instances costs one application's encoding,
//! not the registry's.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use flate2::{Compress, Compression, Crc, FlushCompress};
use heureka_core::{Application, Registry};
use heureka_wire::{ApplicationsPieces, Format};
use parking_lot::Mutex;

/// One encoded document and the registry version it was encoded from.
#[derive(Debug)]
pub(crate) struct Encoded {
    version: u64,
    encoded_at: Instant,
    /// The document, in pieces to be sent in order (a full document is sent without being
    /// copied into one buffer).
    pub(crate) body: Vec<Bytes>,
    pub(crate) body_len: usize,
    /// The same document as a single gzip member.
    pub(crate) gzipped: Bytes,
}

impl Encoded {
    fn is_fresh(&self, version: u64, max_age: Duration) -> bool {
        self.version == version && self.encoded_at.elapsed() < max_age
    }
}

/// The delta document, per format: small, so it is re-encoded whole on every change.
#[derive(Debug)]
pub(crate) struct DeltaCache {
    entries: Mutex<HashMap<Format, Arc<Encoded>>>,
    max_age: Duration,
}

impl DeltaCache {
    pub(crate) fn new(max_age: Duration) -> DeltaCache {
        DeltaCache {
            entries: Mutex::new(HashMap::new()),
            max_age,
        }
    }

    /// The delta for registry `version`, encoding it (outside the registry lock) if needed.
    pub(crate) fn get(&self, registry: &Mutex<Registry>, format: Format) -> Arc<Encoded> {
        let version = registry.lock().version();
        if let Some(entry) = self
            .entries
            .lock()
            .get(&format)
            .filter(|entry| entry.is_fresh(version, self.max_age))
        {
            return entry.clone();
        }
        let (version, delta) = {
            let registry = registry.lock();
            (registry.version(), registry.delta())
        };
        let body = heureka_wire::encode_applications(&delta, format);
        let mut gzip = GzipMember::new();
        gzip.push_deflated(&deflate(&body), &body);
        let encoded = Arc::new(Encoded {
            version,
            encoded_at: Instant::now(),
            body_len: body.len(),
            body: vec![Bytes::from(body)],
            gzipped: gzip.finish(),
        });
        let mut entries = self.entries.lock();
        let newest = entries
            .get(&format)
            .is_none_or(|entry| entry.version <= version);
        if newest {
            entries.insert(format, encoded.clone());
        }
        encoded
    }
}

/// The full document (`GET /apps`), per format, kept as per-application fragments.
#[derive(Debug)]
pub(crate) struct FullFetchCache {
    json: Mutex<Fragments>,
    xml: Mutex<Fragments>,
    /// `response-cache-auto-expiration-in-seconds`: even without changes, fragments are
    /// re-encoded this often so the lease timestamps they show do not age indefinitely.
    max_age: Duration,
}

/// One format's fragments and the document last assembled from them.
#[derive(Debug, Default)]
struct Fragments {
    by_app: HashMap<String, Arc<Fragment>>,
    document: Option<Arc<Encoded>>,
}

/// One application, encoded as it stands inside the `applications` list.
#[derive(Debug)]
struct Fragment {
    /// The application's change version ([`Registry::application_versions`]) when encoded.
    version: u64,
    encoded_at: Instant,
    body: Bytes,
    /// `body` as a raw deflate segment ending in a sync flush.
    deflated: Bytes,
}

impl FullFetchCache {
    pub(crate) fn new(max_age: Duration) -> FullFetchCache {
        FullFetchCache {
            json: Mutex::default(),
            xml: Mutex::default(),
            max_age,
        }
    }

    /// The full document for the registry's current version.
    pub(crate) fn get(&self, registry: &Mutex<Registry>, format: Format) -> Arc<Encoded> {
        // One rebuild per format at a time; readers arriving meanwhile wait for its result
        // rather than encoding the same document again. Lock order: fragments, then registry.
        let mut fragments = match format {
            Format::Json => self.json.lock(),
            Format::Xml => self.xml.lock(),
        };
        let version = registry.lock().version();
        if let Some(document) = fragments
            .document
            .as_ref()
            .filter(|doc| doc.is_fresh(version, self.max_age))
        {
            return document.clone();
        }
        let document = Arc::new(fragments.rebuild(registry, format, self.max_age));
        fragments.document = Some(document.clone());
        document
    }
}

impl Fragments {
    fn rebuild(
        &mut self,
        registry: &Mutex<Registry>,
        format: Format,
        max_age: Duration,
    ) -> Encoded {
        // Under the registry lock: which applications exist, and copies of those whose
        // fragment is missing or out of date. Everything else happens after it is released.
        let (version, hashcode, order, changed) = {
            let registry = registry.lock();
            let mut order = Vec::new();
            let mut changed: Vec<(u64, Application)> = Vec::new();
            for (name, app_version) in registry.application_versions() {
                let current = self.by_app.get(name).is_some_and(|fragment| {
                    fragment.version == app_version && fragment.encoded_at.elapsed() < max_age
                });
                if !current {
                    if let Some(application) = registry.application(name) {
                        changed.push((app_version, application));
                    }
                }
                order.push(name.to_owned());
            }
            (registry.version(), registry.full_hashcode(), order, changed)
        };

        let pieces = ApplicationsPieces { format };
        for (app_version, application) in changed {
            let body = pieces.entry(&application);
            let fragment = Fragment {
                version: app_version,
                encoded_at: Instant::now(),
                deflated: Bytes::from(deflate(&body)),
                body: Bytes::from(body),
            };
            self.by_app.insert(application.name, Arc::new(fragment));
        }
        self.by_app
            .retain(|name, _| order.binary_search(name).is_ok());

        let head = pieces.head(1, &hashcode);
        let tail = pieces.tail();
        let separator = pieces.separator();
        let mut body = Vec::with_capacity(order.len() * 2 + 2);
        let mut gzip = GzipMember::new();
        body.push(Bytes::from(head));
        gzip.push_deflated(&deflate(&body[0]), &body[0]);
        for (n, name) in order.iter().enumerate() {
            let fragment = &self.by_app[name];
            if n > 0 && !separator.is_empty() {
                body.push(Bytes::from_static(separator));
                gzip.push_stored(separator);
            }
            body.push(fragment.body.clone());
            gzip.push_deflated(&fragment.deflated, &fragment.body);
        }
        body.push(Bytes::from_static(tail));
        gzip.push_stored(tail);
        Encoded {
            version,
            encoded_at: Instant::now(),
            body_len: body.iter().map(Bytes::len).sum(),
            body,
            gzipped: gzip.finish(),
        }
    }
}

/// `data` as a raw deflate segment that ends with a sync flush, so segments can be
/// concatenated into one stream. Level 6, zlib's default: a fragment is compressed once per
/// change, not once per read, so the smaller payload is worth the extra microseconds.
fn deflate(data: &[u8]) -> Vec<u8> {
    let mut compressor = Compress::new(Compression::default(), false);
    let mut out = Vec::with_capacity(data.len() / 6 + 64);
    loop {
        let consumed = compressor.total_in() as usize;
        compressor
            .compress_vec(&data[consumed..], &mut out, FlushCompress::Sync)
            .expect("deflate into a Vec cannot fail");
        if compressor.total_in() as usize == data.len() && out.len() < out.capacity() {
            return out;
        }
        out.reserve(out.capacity().max(64));
    }
}

/// A gzip member assembled from deflate segments and stored blocks (RFC 1951/1952).
struct GzipMember {
    out: Vec<u8>,
    crc: Crc,
}

impl GzipMember {
    /// Header: magic, deflate, no flags, no mtime, no extra flags, unknown OS.
    const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    /// An empty final block with fixed Huffman codes: closes the deflate stream.
    const FINAL_BLOCK: [u8; 2] = [0x03, 0x00];

    fn new() -> GzipMember {
        GzipMember {
            out: Vec::from(Self::HEADER),
            crc: Crc::new(),
        }
    }

    /// Appends a segment produced by [`deflate`] of `plain`.
    fn push_deflated(&mut self, segment: &[u8], plain: &[u8]) {
        self.out.extend_from_slice(segment);
        self.crc.update(plain);
    }

    /// Appends `plain` uncompressed, as one stored block (used for the few bytes of
    /// separators and the closing brackets). Stored blocks hold at most 65,535 bytes.
    fn push_stored(&mut self, plain: &[u8]) {
        if plain.is_empty() {
            return;
        }
        let len = u16::try_from(plain.len()).expect("stored blocks here are a few bytes");
        self.out.push(0x00);
        self.out.extend_from_slice(&len.to_le_bytes());
        self.out.extend_from_slice(&(!len).to_le_bytes());
        self.out.extend_from_slice(plain);
        self.crc.update(plain);
    }

    fn finish(mut self) -> Bytes {
        self.out.extend_from_slice(&Self::FINAL_BLOCK);
        self.out.extend_from_slice(&self.crc.sum().to_le_bytes());
        self.out.extend_from_slice(&self.crc.amount().to_le_bytes());
        Bytes::from(self.out)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn gunzip(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(data)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn deflate_segments_and_stored_blocks_form_one_valid_gzip_member() {
        let parts: [&[u8]; 3] = [
            b"{\"applications\":[",
            b"{\"name\":\"A\"}",
            b"{\"name\":\"B\"}",
        ];
        let mut gzip = GzipMember::new();
        gzip.push_deflated(&deflate(parts[0]), parts[0]);
        gzip.push_deflated(&deflate(parts[1]), parts[1]);
        gzip.push_stored(b",");
        gzip.push_deflated(&deflate(parts[2]), parts[2]);
        gzip.push_stored(b"]}");
        let member = gzip.finish();
        let mut single = Vec::new();
        // A single-member decoder: must not need to look past the first member.
        flate2::read::GzDecoder::new(&member[..])
            .read_to_end(&mut single)
            .unwrap();
        assert_eq!(
            single,
            b"{\"applications\":[{\"name\":\"A\"},{\"name\":\"B\"}]}"
        );
    }

    #[test]
    fn large_inputs_deflate_completely() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|n| n.to_le_bytes()).collect();
        let mut gzip = GzipMember::new();
        gzip.push_deflated(&deflate(&data), &data);
        assert_eq!(gunzip(&gzip.finish()), data);
    }
}
