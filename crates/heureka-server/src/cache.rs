//! The response cache: full and delta documents, never stale, re-encoded as little as possible.
//!
//! Eureka serves reads from a read-only copy refreshed every 30 s, so a new registration can
//! stay invisible for that long. Heureka keys every cached document on the registry's version
//! instead: any visible change makes the next read rebuild, so reads are never stale, while a
//! burst of reads between changes (and all heartbeats, which do not change the version) is
//! served from the same pre-encoded, pre-compressed bytes.
//!
//! The full document is kept as one encoded fragment per application, and runs of
//! consecutive applications as deflate segments. A change re-encodes only the applications it
//! touched and recompresses only the runs holding them; the document is then the fragments in
//! order. The gzip body is the runs' deflate segments laid end to end inside one gzip member
//! (each segment ends on a byte boundary with a sync flush and none refers back past its
//! start, which is how `pigz` builds one stream from parallel pieces), so clients receive
//! ordinary single-member gzip. Rebuilding after a registration among 10,000 instances costs
//! one application's encoding and one run's compression, not the registry's.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use flate2::{Compress, Compression, Crc, FlushCompress};
use heureka_core::Registry;
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
        gzip.push_deflated(&deflate(&body), &[&body]);
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
    /// Compressed runs of consecutive applications, by the name of each run's first one.
    chunks: HashMap<String, Chunk>,
    document: Option<Arc<Encoded>>,
}

/// A run of consecutive applications compressed together. Compressing each application
/// alone would lose most of deflate's gain (a 32 KiB window sees the instances of one small
/// application only); compressing the whole document would redo megabytes per change.
/// Runs end at content-defined boundaries (see [`ends_chunk`]), so a change to one
/// application moves at most its own run's boundaries, and only that run is recompressed.
#[derive(Debug)]
struct Chunk {
    members: Vec<Arc<Fragment>>,
    /// The members' bodies, with separators, as one raw deflate segment.
    deflated: Bytes,
}

/// One application, encoded as it stands inside the `applications` list.
#[derive(Debug)]
struct Fragment {
    /// The application's change version ([`Registry::application_versions`]) when encoded.
    version: u64,
    encoded_at: Instant,
    body: Bytes,
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
        // Under the registry lock: which applications exist, and the encoding of those whose
        // fragment is missing or out of date. Encoding one application takes microseconds and
        // needs only a copy of that application, so no copy of the whole registry is ever held
        // (after loading 10,000 instances the first read would otherwise hold two). The costly
        // part, compression, happens after the lock is released.
        let pieces = ApplicationsPieces { format };
        let (version, hashcode, order, changed) = {
            let registry = registry.lock();
            let mut order = Vec::new();
            let mut changed: Vec<(String, u64, Vec<u8>)> = Vec::new();
            for (name, app_version) in registry.application_versions() {
                let current = self.by_app.get(name).is_some_and(|fragment| {
                    fragment.version == app_version && fragment.encoded_at.elapsed() < max_age
                });
                if !current {
                    if let Some(application) = registry.application(name) {
                        changed.push((name.to_owned(), app_version, pieces.entry(&application)));
                    }
                }
                order.push(name.to_owned());
            }
            (registry.version(), registry.full_hashcode(), order, changed)
        };

        for (name, app_version, body) in changed {
            let fragment = Fragment {
                version: app_version,
                encoded_at: Instant::now(),
                body: Bytes::from(body),
            };
            self.by_app.insert(name, Arc::new(fragment));
        }
        self.by_app
            .retain(|name, _| order.binary_search(name).is_ok());

        let head = Bytes::from(pieces.head(1, &hashcode));
        let separator = pieces.separator();
        let mut document = DocumentBuilder::new(head, separator);
        let mut chunks = HashMap::new();
        let mut run: Vec<(&String, Arc<Fragment>)> = Vec::new();
        let mut run_len = 0;
        for (n, name) in order.iter().enumerate() {
            let fragment = self.by_app[name].clone();
            run_len += fragment.body.len();
            run.push((name, fragment));
            if n + 1 == order.len() || ends_chunk(name, run_len) {
                let first = run[0].0.clone();
                let members: Vec<Arc<Fragment>> =
                    run.drain(..).map(|(_, fragment)| fragment).collect();
                let chunk = match self.chunks.remove(&first) {
                    Some(old) if same_members(&old.members, &members) => old,
                    _ => Chunk {
                        deflated: Bytes::from(deflate(&concat(&members, separator))),
                        members,
                    },
                };
                document.push_chunk(&chunk);
                chunks.insert(first, chunk);
                run_len = 0;
            }
        }
        self.chunks = chunks;
        document.finish(version, pieces.tail())
    }
}

/// Whether a run of applications ends after `name`, `run_len` bytes into it. Boundaries come
/// from the application's name, not from positions, so they stay put when other applications
/// come, go or change size; the size limits keep every run big enough to compress well and
/// small enough to recompress in about a millisecond.
fn ends_chunk(name: &str, run_len: usize) -> bool {
    const MIN_LEN: usize = 32 * 1024;
    const MAX_LEN: usize = 256 * 1024;
    let mut hasher = std::hash::DefaultHasher::new();
    name.hash(&mut hasher);
    run_len >= MAX_LEN || (run_len >= MIN_LEN && hasher.finish().is_multiple_of(8))
}

fn same_members(old: &[Arc<Fragment>], new: &[Arc<Fragment>]) -> bool {
    old.len() == new.len() && old.iter().zip(new).all(|(a, b)| Arc::ptr_eq(a, b))
}

/// The members' bodies joined by `separator`, as they appear in the document.
fn concat(members: &[Arc<Fragment>], separator: &[u8]) -> Vec<u8> {
    let len = members.iter().map(|m| m.body.len() + separator.len()).sum();
    let mut plain = Vec::with_capacity(len);
    for (n, member) in members.iter().enumerate() {
        if n > 0 {
            plain.extend_from_slice(separator);
        }
        plain.extend_from_slice(&member.body);
    }
    plain
}

/// Lays out a full document from its head and chunks, both plain and gzipped.
struct DocumentBuilder {
    body: Vec<Bytes>,
    gzip: GzipMember,
    separator: &'static [u8],
    chunks: usize,
}

impl DocumentBuilder {
    fn new(head: Bytes, separator: &'static [u8]) -> DocumentBuilder {
        let mut gzip = GzipMember::new();
        gzip.push_deflated(&deflate(&head), &[&head]);
        DocumentBuilder {
            body: vec![head],
            gzip,
            separator,
            chunks: 0,
        }
    }

    fn push_chunk(&mut self, chunk: &Chunk) {
        if self.chunks > 0 {
            self.push_plain(self.separator);
        }
        self.chunks += 1;
        let mut plain: Vec<&[u8]> = Vec::with_capacity(chunk.members.len() * 2);
        for (n, member) in chunk.members.iter().enumerate() {
            if n > 0 && !self.separator.is_empty() {
                self.body.push(Bytes::from_static(self.separator));
                plain.push(self.separator);
            }
            self.body.push(member.body.clone());
            plain.push(&member.body);
        }
        self.gzip.push_deflated(&chunk.deflated, &plain);
    }

    fn push_plain(&mut self, bytes: &'static [u8]) {
        if !bytes.is_empty() {
            self.body.push(Bytes::from_static(bytes));
            self.gzip.push_stored(bytes);
        }
    }

    fn finish(mut self, version: u64, tail: &'static [u8]) -> Encoded {
        self.push_plain(tail);
        Encoded {
            version,
            encoded_at: Instant::now(),
            body_len: self.body.iter().map(Bytes::len).sum(),
            body: self.body,
            gzipped: self.gzip.finish(),
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

    /// Appends a segment produced by [`deflate`] of the concatenation of `plain`.
    fn push_deflated(&mut self, segment: &[u8], plain: &[&[u8]]) {
        self.out.extend_from_slice(segment);
        for part in plain {
            self.crc.update(part);
        }
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
        gzip.push_deflated(&deflate(parts[0]), &[parts[0]]);
        gzip.push_deflated(&deflate(parts[1]), &[parts[1]]);
        gzip.push_stored(b",");
        gzip.push_deflated(&deflate(parts[2]), &[parts[2]]);
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

    fn registry_with(apps: usize, per_app: usize) -> Mutex<Registry> {
        let mut registry = Registry::new(heureka_core::RegistryPolicy::default(), 0);
        for app in 0..apps {
            for n in 0..per_app {
                let name = format!("APP-{app}");
                let instance = heureka_core::Instance::new(
                    &name,
                    &format!("{name}-{n}"),
                    "host",
                    "10.0.0.1",
                    0,
                );
                registry.register(instance, heureka_core::Origin::Client, 0);
            }
        }
        Mutex::new(registry)
    }

    fn plain(document: &Encoded) -> Vec<u8> {
        document
            .body
            .iter()
            .flat_map(|piece| piece.iter().copied())
            .collect()
    }

    fn compressed_runs(cache: &FullFetchCache) -> Vec<Bytes> {
        cache
            .json
            .lock()
            .chunks
            .values()
            .map(|chunk| chunk.deflated.clone())
            .collect()
    }

    #[test]
    fn full_document_in_pieces_equals_a_whole_encoding_in_both_formats() {
        let registry = registry_with(300, 3);
        let cache = FullFetchCache::new(Duration::from_secs(180));
        for format in [Format::Json, Format::Xml] {
            let document = cache.get(&registry, format);
            let whole = heureka_wire::encode_applications(&registry.lock().applications(), format);
            assert_eq!(plain(&document), whole);
            assert_eq!(gunzip(&document.gzipped), whole);
        }
    }

    #[test]
    fn a_registration_recompresses_only_its_own_run() {
        let registry = registry_with(300, 3);
        let cache = FullFetchCache::new(Duration::from_secs(180));
        cache.get(&registry, Format::Json);
        let before = compressed_runs(&cache);
        assert!(before.len() > 3, "the document is split into runs");
        let newcomer = heureka_core::Instance::new("APP-42", "APP-42-new", "host", "10.0.0.1", 0);
        registry
            .lock()
            .register(newcomer, heureka_core::Origin::Client, 1);
        let document = cache.get(&registry, Format::Json);
        let after = compressed_runs(&cache);
        let recompressed = after
            .iter()
            .filter(|run| !before.iter().any(|old| old.as_ptr() == run.as_ptr()))
            .count();
        assert_eq!(recompressed, 1);
        let whole =
            heureka_wire::encode_applications(&registry.lock().applications(), Format::Json);
        assert_eq!(gunzip(&document.gzipped), whole);
    }

    #[test]
    fn large_inputs_deflate_completely() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|n| n.to_le_bytes()).collect();
        let mut gzip = GzipMember::new();
        gzip.push_deflated(&deflate(&data), &[&data]);
        assert_eq!(gunzip(&gzip.finish()), data);
    }
}
