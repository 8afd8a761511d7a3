//! The response cache: full and delta documents, never stale, re-encoded as little as possible.
//!
//! Eureka serves reads from a read-only copy refreshed every 30 s, so a new registration can
//! stay invisible for that long. Heureka keys every cached document on the registry's version
//! instead: any visible change makes the next read rebuild, so reads are never stale, while a
//! burst of reads between changes (and all heartbeats, which do not change the version) is
//! served from the same pre-encoded, pre-compressed bytes.
//!
//! The full document is kept as runs of consecutive applications, each one deflate segment.
//! A change re-encodes only the applications it touched and recompresses only the runs
//! holding them. The gzip body is the runs' deflate segments laid end to end inside one gzip
//! member (each segment ends on a byte boundary with a sync flush and none refers back past
//! its start, which is how `pigz` builds one stream from parallel pieces), so clients receive
//! ordinary single-member gzip. Rebuilding after a registration among 10,000 instances costs
//! one application's encoding and one run's compression, not the registry's.
//!
//! Every body is built at most once per registry version, format and encoding, by the first
//! request that finds it out of date, while the others wait for it (one lock per format and
//! document). The plain full body is the runs' plain bytes laid end to end, sent as they are
//! kept ([`CachedBody`]); they are kept only while clients ask for plain, since they are
//! twenty times the size of the gzip.

use std::collections::HashMap;
use std::convert::Infallible;
use std::hash::{Hash, Hasher};
use std::io::Read;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use flate2::{Compress, Compression, Crc, FlushCompress};
use heureka_core::Registry;
use heureka_wire::{ApplicationsPieces, Format};
use hyper::body::{Frame, SizeHint};
use parking_lot::Mutex;

/// How a document is sent: gzipped, or plain for a client that does not accept gzip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    Gzip,
    Plain,
}

impl Encoding {
    pub(crate) const ALL: [Encoding; 2] = [Encoding::Gzip, Encoding::Plain];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Encoding::Gzip => "gzip",
            Encoding::Plain => "identity",
        }
    }
}

/// A cached body: shared buffers sent back to back, so a plain full document is its runs'
/// bytes as they are kept, never copied into one buffer per version or per request.
#[derive(Clone, Debug)]
pub(crate) struct CachedBody {
    parts: Arc<[Bytes]>,
    len: u64,
}

impl CachedBody {
    fn one(part: Bytes) -> CachedBody {
        CachedBody::of(vec![part])
    }

    fn of(parts: Vec<Bytes>) -> CachedBody {
        let len = parts.iter().map(|part| part.len() as u64).sum();
        CachedBody {
            parts: parts.into(),
            len,
        }
    }

    /// The body for a response: its exact length is known, so it goes out with a
    /// `Content-Length`, as a single buffer would.
    pub(crate) fn into_http_body(self) -> axum::body::Body {
        axum::body::Body::new(PartsBody {
            parts: self.parts,
            next: 0,
            remaining: self.len,
        })
    }

    #[cfg(test)]
    pub(crate) fn to_vec(&self) -> Vec<u8> {
        self.parts.concat()
    }
}

/// [`CachedBody`] being sent: one frame per part.
struct PartsBody {
    parts: Arc<[Bytes]>,
    next: usize,
    remaining: u64,
}

impl hyper::body::Body for PartsBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        while let Some(part) = self.parts.get(self.next).cloned() {
            self.next += 1;
            if !part.is_empty() {
                self.remaining -= part.len() as u64;
                return Poll::Ready(Some(Ok(Frame::data(part))));
            }
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

/// Documents built since start, by format and encoding: one count per body assembled for a
/// registry version (or because the entry aged), never per request.
#[derive(Debug, Default)]
struct Builds([[AtomicU64; 2]; 2]);

impl Builds {
    fn slot(&self, format: Format, encoding: Encoding) -> &AtomicU64 {
        let format = match format {
            Format::Json => 0,
            Format::Xml => 1,
        };
        let encoding = match encoding {
            Encoding::Gzip => 0,
            Encoding::Plain => 1,
        };
        &self.0[format][encoding]
    }

    fn count(&self, format: Format, encoding: Encoding) {
        self.slot(format, encoding).fetch_add(1, Ordering::Relaxed);
    }

    fn get(&self, format: Format, encoding: Encoding) -> u64 {
        self.slot(format, encoding).load(Ordering::Relaxed)
    }
}

/// One document for one registry version: gzipped (every real client asks for gzip), and
/// plain once a client has asked for it.
#[derive(Debug)]
struct Document {
    version: u64,
    encoded_at: Instant,
    gzipped: Bytes,
    plain: Option<CachedBody>,
}

impl Document {
    fn is_fresh(&self, version: u64, max_age: Duration) -> bool {
        self.version == version && self.encoded_at.elapsed() < max_age
    }
}

/// Whether plain bodies are kept: only while clients ask for them. A plain body is about 20
/// times its gzip, so a single `curl` must not pin a plain copy of a large registry for good;
/// one plain request in `max_age` keeps it.
fn plain_wanted(plain_asked_at: Option<Instant>, max_age: Duration) -> bool {
    plain_asked_at.is_some_and(|at| at.elapsed() < max_age)
}

/// The delta document, per format: built once per registry version, by the first request
/// that finds it out of date; requests arriving meanwhile wait for that build rather than
/// encoding and compressing the same delta again.
#[derive(Debug)]
pub(crate) struct DeltaCache {
    json: Mutex<DeltaSlot>,
    xml: Mutex<DeltaSlot>,
    max_age: Duration,
    builds: Builds,
}

#[derive(Debug, Default)]
struct DeltaSlot {
    document: Option<Document>,
    plain_asked_at: Option<Instant>,
}

impl DeltaCache {
    pub(crate) fn new(max_age: Duration) -> DeltaCache {
        DeltaCache {
            json: Mutex::default(),
            xml: Mutex::default(),
            max_age,
            builds: Builds::default(),
        }
    }

    /// How many delta bodies have been built since start in this format and encoding.
    pub(crate) fn builds(&self, format: Format, encoding: Encoding) -> u64 {
        self.builds.get(format, encoding)
    }

    /// The delta for the registry's current version. Lock order: this format's slot, then
    /// the registry.
    pub(crate) fn get(
        &self,
        registry: &Mutex<Registry>,
        format: Format,
        encoding: Encoding,
    ) -> CachedBody {
        let mut slot = match format {
            Format::Json => self.json.lock(),
            Format::Xml => self.xml.lock(),
        };
        if encoding == Encoding::Plain {
            slot.plain_asked_at = Some(Instant::now());
        }
        let version = registry.lock().version();
        let fresh = slot
            .document
            .as_ref()
            .is_some_and(|document| document.is_fresh(version, self.max_age));
        if !fresh {
            let keep_plain = plain_wanted(slot.plain_asked_at, self.max_age);
            slot.document = Some(self.build(registry, format, keep_plain));
        }
        let document = slot.document.as_mut().expect("built above");
        match encoding {
            Encoding::Gzip => CachedBody::one(document.gzipped.clone()),
            Encoding::Plain => {
                if document.plain.is_none() {
                    // Asked for plain for the first time at this version: inflated once.
                    self.builds.count(format, Encoding::Plain);
                    document.plain = Some(CachedBody::one(gunzip(&document.gzipped)));
                }
                document.plain.clone().expect("set above")
            }
        }
    }

    fn build(&self, registry: &Mutex<Registry>, format: Format, keep_plain: bool) -> Document {
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
        self.builds.count(format, Encoding::Gzip);
        let plain = keep_plain.then(|| {
            self.builds.count(format, Encoding::Plain);
            CachedBody::one(Bytes::from(body))
        });
        Document {
            version,
            encoded_at: Instant::now(),
            gzipped: gzip.finish(),
            plain,
        }
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
    builds: Builds,
}

/// One format's compressed runs and the document last assembled from them.
#[derive(Debug, Default)]
struct Runs {
    /// By the name of each run's first application.
    by_first_app: HashMap<String, Run>,
    /// The document's runs in order, by first application, and its plain head, from which
    /// the plain body is assembled when first asked for at this version.
    order: Vec<String>,
    head: Bytes,
    document: Option<Document>,
    plain_asked_at: Option<Instant>,
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
    /// The uncompressed run, kept while clients ask for plain documents: the plain body is
    /// these laid end to end, as the gzip body is the deflate segments.
    plain: Option<Bytes>,
}

impl Run {
    /// The run uncompressed: kept, or inflated from its segment once (so it is byte for byte
    /// what the gzip body holds, even where heartbeats moved a lease since).
    fn plain(&mut self) -> Bytes {
        self.plain
            .get_or_insert_with(|| inflate_segment(&self.deflated))
            .clone()
    }
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
            builds: Builds::default(),
        }
    }

    /// How many full bodies have been assembled (from kept or new runs) since start in this
    /// format and encoding.
    pub(crate) fn builds(&self, format: Format, encoding: Encoding) -> u64 {
        self.builds.get(format, encoding)
    }

    /// The full document for the registry's current version.
    pub(crate) fn get(
        &self,
        registry: &Mutex<Registry>,
        format: Format,
        encoding: Encoding,
    ) -> CachedBody {
        // One rebuild per format at a time; readers arriving meanwhile wait for its result
        // rather than encoding the same document again. Lock order: runs, then registry.
        let mut runs = match format {
            Format::Json => self.json.lock(),
            Format::Xml => self.xml.lock(),
        };
        if encoding == Encoding::Plain {
            runs.plain_asked_at = Some(Instant::now());
        }
        let version = registry.lock().version();
        let fresh = runs
            .document
            .as_ref()
            .is_some_and(|doc| doc.is_fresh(version, self.max_age));
        if !fresh {
            let keep_plain = plain_wanted(runs.plain_asked_at, self.max_age);
            let document = runs.rebuild(registry, format, self.max_age, keep_plain);
            runs.document = Some(document);
            self.builds.count(format, Encoding::Gzip);
        }
        match encoding {
            Encoding::Gzip => {
                CachedBody::one(runs.document.as_ref().expect("built above").gzipped.clone())
            }
            Encoding::Plain => {
                if let Some(plain) = &runs.document.as_ref().expect("built above").plain {
                    return plain.clone();
                }
                self.builds.count(format, Encoding::Plain);
                let plain = runs.plain_document(format);
                runs.document.as_mut().expect("built above").plain = Some(plain.clone());
                plain
            }
        }
    }
}

impl Runs {
    fn rebuild(
        &mut self,
        registry: &Mutex<Registry>,
        format: Format,
        max_age: Duration,
        keep_plain: bool,
    ) -> Document {
        let pieces = ApplicationsPieces { format };
        let (version, hashcode, plan) = self.plan(registry, pieces, max_age);

        let head = pieces.head(1, &hashcode);
        let mut gzip = GzipMember::new();
        gzip.push_deflated(&deflate(&head), &crc_of(&head));
        let mut runs = HashMap::with_capacity(plan.len());
        let mut order = Vec::with_capacity(plan.len());
        for (n, planned) in plan.into_iter().enumerate() {
            if n > 0 {
                gzip.push_stored(pieces.separator());
            }
            let mut run = match planned {
                Planned::Keep(first) => self
                    .by_first_app
                    .remove(&first)
                    .expect("planned from this map"),
                Planned::Encode { members, plain } => Run {
                    members,
                    encoded_at: Instant::now(),
                    deflated: Bytes::from(deflate(&plain)),
                    crc: crc_of(&plain),
                    plain: Some(Bytes::from(plain)),
                },
            };
            if !keep_plain {
                run.plain = None;
            }
            gzip.push_deflated(&run.deflated, &run.crc);
            order.push(run.members[0].0.clone());
            runs.insert(run.members[0].0.clone(), run);
        }
        gzip.push_stored(pieces.tail());
        self.by_first_app = runs;
        self.order = order;
        self.head = Bytes::from(head);
        Document {
            version,
            encoded_at: Instant::now(),
            gzipped: gzip.finish(),
            plain: None,
        }
    }

    /// The plain body of the document last rebuilt: its head, runs and separators as kept,
    /// shared with the runs rather than copied.
    fn plain_document(&mut self, format: Format) -> CachedBody {
        let pieces = ApplicationsPieces { format };
        let separator = Bytes::from_static(pieces.separator());
        let mut parts = Vec::with_capacity(self.order.len() * 2 + 2);
        parts.push(self.head.clone());
        for (n, first) in self.order.iter().enumerate() {
            if n > 0 {
                parts.push(separator.clone());
            }
            let run = self
                .by_first_app
                .get_mut(first)
                .expect("the order lists this map's runs");
            parts.push(run.plain());
        }
        parts.push(Bytes::from_static(pieces.tail()));
        CachedBody::of(parts)
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

/// A segment made by [`deflate`], uncompressed: closed with an empty final block, it is a
/// complete raw deflate stream on its own, since no segment refers back past its start.
fn inflate_segment(segment: &[u8]) -> Bytes {
    let mut stream = Vec::with_capacity(segment.len() + GzipMember::FINAL_BLOCK.len());
    stream.extend_from_slice(segment);
    stream.extend_from_slice(&GzipMember::FINAL_BLOCK);
    let mut plain = Vec::with_capacity(segment.len() * 8);
    flate2::read::DeflateDecoder::new(stream.as_slice())
        .read_to_end(&mut plain)
        .expect("our own deflate segment decodes");
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

    fn register(registry: &Mutex<Registry>, app: &str, id: &str) {
        let instance = heureka_core::Instance::new(app, id, "host", "10.0.0.1", 0);
        let mut registry = registry.lock();
        let now = registry.version() as i64;
        registry.register(instance, heureka_core::Origin::Client, now);
    }

    fn whole_full(registry: &Mutex<Registry>, format: Format) -> Vec<u8> {
        heureka_wire::encode_applications(&registry.lock().applications(), format)
    }

    fn whole_delta(registry: &Mutex<Registry>, format: Format) -> Vec<u8> {
        heureka_wire::encode_applications(&registry.lock().delta(), format)
    }

    /// What a client reads in `encoding`, uncompressed.
    fn read(body: &CachedBody, encoding: Encoding) -> Vec<u8> {
        match encoding {
            Encoding::Gzip => gunzip_single_member(&body.to_vec()),
            Encoding::Plain => body.to_vec(),
        }
    }

    const FORMATS: [Format; 2] = [Format::Json, Format::Xml];

    #[test]
    fn full_document_from_runs_equals_a_whole_encoding_in_both_formats_and_encodings() {
        let registry = registry_with(300, 3);
        let cache = FullFetchCache::new(Duration::from_secs(180));
        for format in FORMATS {
            for encoding in Encoding::ALL {
                let body = cache.get(&registry, format, encoding);
                assert_eq!(read(&body, encoding), whole_full(&registry, format));
            }
        }
    }

    #[test]
    fn delta_written_one_application_at_a_time_equals_a_whole_encoding() {
        let registry = registry_with(40, 3);
        registry
            .lock()
            .cancel("APP-7", "APP-7-1", heureka_core::Origin::Client, 1);
        let cache = DeltaCache::new(Duration::from_secs(180));
        for format in FORMATS {
            for encoding in Encoding::ALL {
                let body = cache.get(&registry, format, encoding);
                assert_eq!(read(&body, encoding), whole_delta(&registry, format));
            }
        }
    }

    #[test]
    fn empty_registry_document_is_complete() {
        let registry = registry_with(0, 0);
        let cache = FullFetchCache::new(Duration::from_secs(180));
        let body = cache.get(&registry, Format::Json, Encoding::Plain);
        assert_eq!(
            body.to_vec(),
            r#"{"applications":{"versions__delta":"1","apps__hashcode":"","application":[]}}"#
                .as_bytes()
        );
    }

    #[test]
    fn a_registration_re_encodes_only_its_own_run() {
        let registry = registry_with(300, 3);
        let cache = FullFetchCache::new(Duration::from_secs(180));
        cache.get(&registry, Format::Json, Encoding::Gzip);
        let before = compressed_runs(&cache);
        assert!(before.len() > 3, "the document is split into runs");
        register(&registry, "APP-42", "APP-42-new");
        let body = cache.get(&registry, Format::Json, Encoding::Gzip);
        let after = compressed_runs(&cache);
        let recompressed = after
            .iter()
            .filter(|run| !before.iter().any(|old| old.as_ptr() == run.as_ptr()))
            .count();
        assert_eq!(recompressed, 1);
        assert_eq!(
            read(&body, Encoding::Gzip),
            whole_full(&registry, Format::Json)
        );
    }

    #[test]
    fn identical_full_fetches_build_each_body_once_per_version_and_a_write_once_more() {
        let registry = registry_with(300, 3);
        let cache = FullFetchCache::new(Duration::from_secs(180));
        for expected_builds in [1, 2] {
            for _ in 0..5 {
                for format in FORMATS {
                    for encoding in Encoding::ALL {
                        let body = cache.get(&registry, format, encoding);
                        assert_eq!(read(&body, encoding), whole_full(&registry, format));
                    }
                }
            }
            for format in FORMATS {
                for encoding in Encoding::ALL {
                    assert_eq!(
                        cache.builds(format, encoding),
                        expected_builds,
                        "{format:?} {encoding:?}"
                    );
                }
            }
            register(&registry, "APP-42", "APP-42-new");
        }
    }

    #[test]
    fn identical_delta_fetches_build_each_body_once_per_version_and_a_write_once_more() {
        let registry = registry_with(40, 3);
        let cache = DeltaCache::new(Duration::from_secs(180));
        for expected_builds in [1, 2] {
            for _ in 0..5 {
                for format in FORMATS {
                    for encoding in Encoding::ALL {
                        let body = cache.get(&registry, format, encoding);
                        assert_eq!(read(&body, encoding), whole_delta(&registry, format));
                    }
                }
            }
            for format in FORMATS {
                for encoding in Encoding::ALL {
                    assert_eq!(
                        cache.builds(format, encoding),
                        expected_builds,
                        "{format:?} {encoding:?}"
                    );
                }
            }
            register(&registry, "APP-9", "APP-9-new");
        }
    }

    #[test]
    fn a_read_after_a_write_sees_it_in_every_document_format_and_encoding() {
        let registry = registry_with(40, 3);
        let full = FullFetchCache::new(Duration::from_secs(180));
        let delta = DeltaCache::new(Duration::from_secs(180));
        for n in 0..3 {
            let id = format!("APP-5-late-{n}");
            register(&registry, "APP-5", &id);
            for format in FORMATS {
                for encoding in Encoding::ALL {
                    for body in [
                        full.get(&registry, format, encoding),
                        delta.get(&registry, format, encoding),
                    ] {
                        let text = String::from_utf8(read(&body, encoding)).unwrap();
                        assert!(text.contains(&id), "{format:?} {encoding:?} misses {id}");
                    }
                }
            }
        }
    }

    #[test]
    fn plain_full_body_is_the_kept_runs_and_a_write_renews_only_its_own_run() {
        let registry = registry_with(300, 3);
        let cache = FullFetchCache::new(Duration::from_secs(180));
        let first = cache.get(&registry, Format::Json, Encoding::Plain);
        let again = cache.get(&registry, Format::Json, Encoding::Plain);
        assert!(Arc::ptr_eq(&first.parts, &again.parts), "served as kept");
        register(&registry, "APP-42", "APP-42-new");
        let after = cache.get(&registry, Format::Json, Encoding::Plain);
        let renewed = after
            .parts
            .iter()
            .filter(|part| part.len() > 100)
            .filter(|part| !first.parts.iter().any(|old| old.as_ptr() == part.as_ptr()))
            .count();
        assert_eq!(renewed, 1, "only the registration's run is new");
        assert_eq!(after.to_vec(), whole_full(&registry, Format::Json));
    }

    #[test]
    fn plain_body_asked_after_gzip_only_reads_is_the_same_document() {
        let registry = registry_with(300, 3);
        let cache = FullFetchCache::new(Duration::from_secs(180));
        let gzip = cache.get(&registry, Format::Xml, Encoding::Gzip);
        register(&registry, "APP-42", "APP-42-new");
        cache.get(&registry, Format::Xml, Encoding::Gzip);
        // Runs kept from before plain was asked for are inflated, the changed one kept plain.
        let plain = cache.get(&registry, Format::Xml, Encoding::Plain);
        assert_eq!(plain.to_vec(), whole_full(&registry, Format::Xml));
        assert_ne!(read(&gzip, Encoding::Gzip), plain.to_vec());
    }

    #[test]
    fn large_inputs_deflate_completely() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|n| n.to_le_bytes()).collect();
        let mut gzip = GzipMember::new();
        gzip.push_deflated(&deflate(&data), &crc_of(&data));
        assert_eq!(gunzip_single_member(&gzip.finish()), data);
    }
}
