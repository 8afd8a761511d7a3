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
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use flate2::{Compress, Compression, Crc, FlushCompress};
use heureka_core::Registry;
use heureka_wire::{ApplicationsPieces, Format};
use parking_lot::Mutex;

/// One document, kept gzipped: every real client asks for gzip. The plain form is made from
/// it the first time someone asks without gzip, and kept from then on.
#[derive(Debug)]
pub(crate) struct Encoded {
    version: u64,
    encoded_at: Instant,
    pub(crate) gzipped: Bytes,
    plain: OnceLock<Bytes>,
}

impl Encoded {
    fn new(version: u64, gzipped: Bytes) -> Encoded {
        Encoded {
            version,
            encoded_at: Instant::now(),
            gzipped,
            plain: OnceLock::new(),
        }
    }

    fn is_fresh(&self, version: u64, max_age: Duration) -> bool {
        self.version == version && self.encoded_at.elapsed() < max_age
    }

    /// The document uncompressed.
    pub(crate) fn plain(&self) -> Bytes {
        self.plain.get_or_init(|| gunzip(&self.gzipped)).clone()
    }
}

/// The delta document, per format: small, so it is re-encoded whole on every change.
#[derive(Debug)]
pub(crate) struct DeltaCache {
    entries: Mutex<HashMap<Format, Arc<Encoded>>>,
    max_age: Duration,
    /// Documents encoded since start (for the metrics).
    rebuilds: AtomicU64,
}

impl DeltaCache {
    pub(crate) fn new(max_age: Duration) -> DeltaCache {
        DeltaCache {
            entries: Mutex::new(HashMap::new()),
            max_age,
            rebuilds: AtomicU64::new(0),
        }
    }

    /// How many delta documents have been encoded since start.
    pub(crate) fn rebuilds(&self) -> u64 {
        self.rebuilds.load(Ordering::Relaxed)
    }

    /// The delta for the registry's current version, encoded (outside the registry lock) if needed.
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
        self.rebuilds.fetch_add(1, Ordering::Relaxed);
        // Encoded under the lock one application at a time, so a large delta (all instances,
        // right after a mass registration) is never copied whole; compressed after it.
        let pieces = ApplicationsPieces { format };
        let (version, body) = {
            let registry = registry.lock();
            let mut entries = Vec::new();
            let (versions_delta, hashcode) = registry.visit_delta(|application| {
                if !entries.is_empty() {
                    entries.extend_from_slice(pieces.separator());
                }
                entries.extend_from_slice(&pieces.entry(application));
            });
            let mut body = pieces.head(versions_delta, &hashcode);
            body.extend_from_slice(&entries);
            body.extend_from_slice(pieces.tail());
            (registry.version(), body)
        };
        let mut gzip = GzipMember::new();
        gzip.push_deflated(&deflate(&body), &crc_of(&body));
        let encoded = Arc::new(Encoded::new(version, gzip.finish()));
        let mut entries = self.entries.lock();
        if entries
            .get(&format)
            .is_none_or(|entry| entry.version <= version)
        {
            entries.insert(format, encoded.clone());
        }
        encoded
    }
}

/// The full document (`GET /apps`), per format, kept as compressed runs of applications.
#[derive(Debug)]
pub(crate) struct FullFetchCache {
    json: Mutex<Runs>,
    xml: Mutex<Runs>,
    /// `response-cache-auto-expiration-in-seconds`: even without changes, runs are re-encoded
    /// this often so the lease timestamps they show do not age indefinitely.
    max_age: Duration,
    /// Documents assembled since start (for the metrics).
    rebuilds: AtomicU64,
}

/// One format's compressed runs and the document last assembled from them.
#[derive(Debug, Default)]
struct Runs {
    /// By the name of each run's first application.
    by_first_app: HashMap<String, Run>,
    document: Option<Arc<Encoded>>,
}

/// A run of consecutive applications, encoded and compressed together. Compressing each
/// application alone would lose most of deflate's gain (its 32 KiB window would see one small
/// application's instances only); compressing the whole document would redo megabytes per
/// change. Runs end at content-defined boundaries (see [`ends_run`]), so a change to one
/// application moves at most its own run's boundaries, and only that run is re-encoded.
#[derive(Debug)]
struct Run {
    /// Each application's name and change version when the run was encoded.
    members: Vec<(String, u64)>,
    encoded_at: Instant,
    /// The members' entries, with separators, as one raw deflate segment.
    deflated: Bytes,
    /// CRC-32 and length of the uncompressed run, for the gzip trailer.
    crc: Crc,
}

/// What a rebuild does with each run: keep the compressed one, or compress a new encoding.
enum Planned {
    Keep(String),
    Encode {
        members: Vec<(String, u64)>,
        plain: Vec<u8>,
    },
}

impl FullFetchCache {
    pub(crate) fn new(max_age: Duration) -> FullFetchCache {
        FullFetchCache {
            json: Mutex::default(),
            xml: Mutex::default(),
            max_age,
            rebuilds: AtomicU64::new(0),
        }
    }

    /// How many full documents have been assembled (from kept or new runs) since start.
    pub(crate) fn rebuilds(&self) -> u64 {
        self.rebuilds.load(Ordering::Relaxed)
    }

    /// The full document for the registry's current version.
    pub(crate) fn get(&self, registry: &Mutex<Registry>, format: Format) -> Arc<Encoded> {
        // One rebuild per format at a time; readers arriving meanwhile wait for its result
        // rather than encoding the same document again. Lock order: runs, then registry.
        let mut runs = match format {
            Format::Json => self.json.lock(),
            Format::Xml => self.xml.lock(),
        };
        let version = registry.lock().version();
        if let Some(document) = runs
            .document
            .as_ref()
            .filter(|doc| doc.is_fresh(version, self.max_age))
        {
            return document.clone();
        }
        self.rebuilds.fetch_add(1, Ordering::Relaxed);
        let document = Arc::new(runs.rebuild(registry, format, self.max_age));
        runs.document = Some(document.clone());
        document
    }
}

impl Runs {
    fn rebuild(
        &mut self,
        registry: &Mutex<Registry>,
        format: Format,
        max_age: Duration,
    ) -> Encoded {
        let pieces = ApplicationsPieces { format };
        let (version, hashcode, plan) = self.plan(registry, pieces, max_age);

        let head = pieces.head(1, &hashcode);
        let mut gzip = GzipMember::new();
        gzip.push_deflated(&deflate(&head), &crc_of(&head));
        let mut runs = HashMap::with_capacity(plan.len());
        for (n, planned) in plan.into_iter().enumerate() {
            if n > 0 {
                gzip.push_stored(pieces.separator());
            }
            let run = match planned {
                Planned::Keep(first) => self
                    .by_first_app
                    .remove(&first)
                    .expect("planned from this map"),
                Planned::Encode { members, plain } => Run {
                    members,
                    encoded_at: Instant::now(),
                    deflated: Bytes::from(deflate(&plain)),
                    crc: crc_of(&plain),
                },
            };
            gzip.push_deflated(&run.deflated, &run.crc);
            runs.insert(run.members[0].0.clone(), run);
        }
        gzip.push_stored(pieces.tail());
        self.by_first_app = runs;
        Encoded::new(version, gzip.finish())
    }

    /// Under the registry lock: the runs of the current registry, and the encoding of those
    /// that changed. Encoding takes microseconds per application and copies one application
    /// at a time, so no copy of the whole registry is ever held; compression, the costly part,
    /// happens after the lock is released.
    fn plan(
        &self,
        registry: &Mutex<Registry>,
        pieces: ApplicationsPieces,
        max_age: Duration,
    ) -> (u64, String, Vec<Planned>) {
        let registry = registry.lock();
        let applications = registry.application_versions();
        let mut plan = Vec::new();
        let mut run: Vec<(&str, u64)> = Vec::new();
        let mut run_instances = 0;
        for (n, application) in applications.iter().enumerate() {
            run.push((application.name, application.version));
            run_instances += application.instances;
            if n + 1 < applications.len() && !ends_run(application.name, run_instances) {
                continue;
            }
            let kept = self.by_first_app.get(run[0].0).filter(|old| {
                old.encoded_at.elapsed() < max_age
                    && old
                        .members
                        .iter()
                        .map(|(name, version)| (name.as_str(), *version))
                        .eq(run.iter().copied())
            });
            plan.push(match kept {
                Some(_) => Planned::Keep(run[0].0.to_owned()),
                None => Planned::Encode {
                    members: run
                        .iter()
                        .map(|(name, version)| ((*name).to_owned(), *version))
                        .collect(),
                    plain: encode_run(&registry, &run, pieces),
                },
            });
            run.clear();
            run_instances = 0;
        }
        (registry.version(), registry.full_hashcode(), plan)
    }
}

/// The entries of a run's applications, joined by the format's separator.
fn encode_run(registry: &Registry, run: &[(&str, u64)], pieces: ApplicationsPieces) -> Vec<u8> {
    let mut plain = Vec::new();
    for (n, (name, _)) in run.iter().enumerate() {
        if n > 0 {
            plain.extend_from_slice(pieces.separator());
        }
        if let Some(application) = registry.application(name) {
            plain.extend_from_slice(&pieces.entry(&application));
        }
    }
    plain
}

/// Whether a run of applications ends after `name`, `run_instances` instances into it.
/// Boundaries come from application names, not positions, so they stay put when other
/// applications come, go or change size; the size limits keep every run big enough to
/// compress well (32 instances are about 30 KiB, deflate's window) and small enough to
/// re-encode in about a millisecond.
fn ends_run(name: &str, run_instances: usize) -> bool {
    const MIN_INSTANCES: usize = 32;
    const MAX_INSTANCES: usize = 256;
    let mut hasher = std::hash::DefaultHasher::new();
    name.hash(&mut hasher);
    run_instances >= MAX_INSTANCES
        || (run_instances >= MIN_INSTANCES && hasher.finish().is_multiple_of(8))
}

fn crc_of(data: &[u8]) -> Crc {
    let mut crc = Crc::new();
    crc.update(data);
    crc
}

fn gunzip(gzipped: &[u8]) -> Bytes {
    let mut plain = Vec::with_capacity(gzipped.len() * 8);
    flate2::read::GzDecoder::new(gzipped)
        .read_to_end(&mut plain)
        .expect("our own gzip member decodes");
    Bytes::from(plain)
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

    /// Appends a segment produced by [`deflate`] from data whose CRC is `crc`.
    fn push_deflated(&mut self, segment: &[u8], crc: &Crc) {
        self.out.extend_from_slice(segment);
        self.crc.combine(crc);
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
    use super::*;

    fn gunzip_single_member(data: &[u8]) -> Vec<u8> {
        // A single-member decoder (like httpx's): must not need to look past the first member.
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(data)
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
        gzip.push_deflated(&deflate(parts[0]), &crc_of(parts[0]));
        gzip.push_deflated(&deflate(parts[1]), &crc_of(parts[1]));
        gzip.push_stored(b",");
        gzip.push_deflated(&deflate(parts[2]), &crc_of(parts[2]));
        gzip.push_stored(b"]}");
        let single = gunzip_single_member(&gzip.finish());
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

    fn compressed_runs(cache: &FullFetchCache) -> Vec<Bytes> {
        cache
            .json
            .lock()
            .by_first_app
            .values()
            .map(|run| run.deflated.clone())
            .collect()
    }

    #[test]
    fn full_document_from_runs_equals_a_whole_encoding_in_both_formats() {
        let registry = registry_with(300, 3);
        let cache = FullFetchCache::new(Duration::from_secs(180));
        for format in [Format::Json, Format::Xml] {
            let document = cache.get(&registry, format);
            let whole = heureka_wire::encode_applications(&registry.lock().applications(), format);
            assert_eq!(document.plain(), whole);
            assert_eq!(gunzip_single_member(&document.gzipped), whole);
        }
    }

    #[test]
    fn delta_written_one_application_at_a_time_equals_a_whole_encoding() {
        let registry = registry_with(40, 3);
        registry
            .lock()
            .cancel("APP-7", "APP-7-1", heureka_core::Origin::Client, 1);
        let cache = DeltaCache::new(Duration::from_secs(180));
        for format in [Format::Json, Format::Xml] {
            let document = cache.get(&registry, format);
            let whole = heureka_wire::encode_applications(&registry.lock().delta(), format);
            assert_eq!(document.plain(), whole);
        }
    }

    #[test]
    fn empty_registry_document_is_complete() {
        let registry = registry_with(0, 0);
        let cache = FullFetchCache::new(Duration::from_secs(180));
        let document = cache.get(&registry, Format::Json);
        assert_eq!(
            document.plain(),
            r#"{"applications":{"versions__delta":"1","apps__hashcode":"","application":[]}}"#
                .as_bytes()
        );
    }

    #[test]
    fn a_registration_re_encodes_only_its_own_run() {
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
        assert_eq!(document.plain(), whole);
    }

    #[test]
    fn large_inputs_deflate_completely() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|n| n.to_le_bytes()).collect();
        let mut gzip = GzipMember::new();
        gzip.push_deflated(&deflate(&data), &crc_of(&data));
        assert_eq!(gunzip_single_member(&gzip.finish()), data);
    }
}
