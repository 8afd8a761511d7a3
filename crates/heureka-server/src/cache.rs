//! The response cache: full and delta documents, never stale, re-encoded as little as possible.
//!
//! Eureka serves reads from a read-only copy refreshed every 30 s, so a new registration can
//! stay invisible for that long. Heureka keys every cached document on the registry's version
//! instead: any visible change makes the next read rebuild, so reads are never stale, while a
//! burst of reads between changes (and all heartbeats, which do not change the version) is
//! served from the same pre-encoded, pre-compressed bytes.
//!
//! Both documents are kept as runs of consecutive applications, each encoded once and, when a
//! client asks for gzip, compressed once into its own deflate segment. A change re-encodes only
//! the applications it touched and recompresses only the runs holding them: the full document
//! follows `Registry::application_versions`, the delta `Registry::delta_applications`, in
//! the delta's order. The gzip body is the runs' deflate segments laid end to end inside one
//! gzip member (each segment ends on a byte boundary with a sync flush and none refers back
//! past its start, which is how `pigz` builds one stream from parallel pieces), so clients
//! receive ordinary single-member gzip. The plain body is the runs' plain bytes, sent as kept
//! ([`CachedBody`]).
//!
//! A build settles which runs make the document under the registry lock, so a document is one
//! registry version's. Before that, a build with many runs to encode copies them out of the
//! registry a batch at a time and encodes and compresses them between locks
//! ([`Runs::encode_stale_unlocked`]), so heartbeats do not wait seconds for a large build and
//! the build never holds a whole document's plain bytes.
//!
//! Every body is built at most once per registry version, format and encoding, by the first
//! request that finds it missing, while the others wait for it (one build lock per document
//! and format). A request finding its body ready takes it without waiting for a build of
//! another encoding or version ([`DocumentCache::ready`]). An encoding nobody asks for costs
//! nothing: plain-only readers never compress, gzip-only readers keep no plain copy (plain
//! bytes are twenty times the size of the gzip, kept only while clients ask for plain).

use std::collections::HashMap;
use std::convert::Infallible;
use std::hash::BuildHasher;
use std::io::Read;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use flate2::{Compress, Compression, Crc, FlushCompress};
use heureka_core::{Application, ApplicationVersion, Applications, DeltaApplication, Registry};
use heureka_wire::{ApplicationsPieces, Format};
use hyper::body::{Frame, SizeHint};
use parking_lot::Mutex;

use crate::clock::Instant;
use crate::store::Store;

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

/// A cached body: shared buffers sent back to back, so a plain document is its runs' bytes as
/// they are kept, never copied into one buffer per version or per request.
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

/// Whether plain bodies are kept: only while clients ask for them. A plain body is about 20
/// times its gzip, so a single `curl` must not pin a plain copy of a large registry for good;
/// one plain request in `max_age` keeps it.
fn plain_wanted(plain_asked_at: Option<Instant>, now: Instant, max_age: Duration) -> bool {
    plain_asked_at.is_some_and(|at| younger(at, now, max_age))
}

/// Whether something made `at` is younger than `max_age` at `now`.
fn younger(at: Instant, now: Instant, max_age: Duration) -> bool {
    now.saturating_duration_since(at) < max_age
}

/// Which document a cache holds: how its applications are listed, keyed and rendered.
pub(crate) trait Source: Send + Sync + 'static {
    /// Under the registry lock: the document's head and its runs, encoding those whose
    /// members are not `kept`.
    fn plan(
        registry: &Registry,
        pieces: ApplicationsPieces,
        kept: &dyn Fn(&[Member<'_>]) -> bool,
    ) -> (Vec<u8>, Vec<Planned>);

    /// Under the registry lock, before the plan: the runs it would encode now, for
    /// [`Runs::encode_stale_unlocked`] to copy out later.
    fn stale_runs(registry: &Registry, kept: &dyn Fn(&[Member<'_>]) -> bool) -> Vec<StaleRun>;

    /// Under a later registry lock: a stale run's applications as they are now, each with
    /// the key it has now (so the two agree).
    fn copy_run(registry: &Registry, run: &StaleRun) -> (RunMembers, Vec<Application>);
}

/// A run that a build must encode again, as found under one lock to be copied under another:
/// its applications and how many instances they held.
#[derive(Debug)]
pub(crate) struct StaleRun {
    apps: Vec<StaleApp>,
    instances: usize,
}

/// One application of a [`StaleRun`]: its name and, in the delta, its items' numbers.
#[derive(Debug)]
struct StaleApp {
    name: String,
    items: Vec<u64>,
}

/// The stale runs among a document's members, each application with what `items` gives.
fn stale_among<'a, E>(
    applications: &'a [E],
    member: impl Fn(&'a E) -> Member<'a>,
    items: impl Fn(&'a E) -> Vec<u64>,
    kept: &dyn Fn(&[Member<'_>]) -> bool,
) -> Vec<StaleRun> {
    let mut start = 0;
    let mut stale = Vec::new();
    for run in group_runs(applications.iter().map(&member)) {
        let of_run = &applications[start..start + run.len()];
        start += run.len();
        if kept(&run) {
            continue;
        }
        stale.push(StaleRun {
            apps: run
                .iter()
                .zip(of_run)
                .map(|(member, application)| StaleApp {
                    name: member.name.to_owned(),
                    items: items(application),
                })
                .collect(),
            instances: run.iter().map(|member| member.key.1).sum(),
        });
    }
    stale
}

/// The full document (`GET /apps`): applications by name, keyed by the version of their last
/// change (`Registry::application_versions`).
#[derive(Debug)]
pub(crate) struct Full;

/// The delta (`GET /apps/delta`): applications in the delta's order, keyed by their version
/// and number of delta items (`Registry::delta_applications`), cancelled ones included.
#[derive(Debug)]
pub(crate) struct Delta;

/// The cache of `GET /apps`.
pub(crate) type FullFetchCache = DocumentCache<Full>;
/// The cache of `GET /apps/delta`.
pub(crate) type DeltaCache = DocumentCache<Delta>;

impl Source for Full {
    fn plan(
        registry: &Registry,
        pieces: ApplicationsPieces,
        kept: &dyn Fn(&[Member<'_>]) -> bool,
    ) -> (Vec<u8>, Vec<Planned>) {
        let applications = registry.application_versions();
        let plan = plan_runs(
            &applications,
            full_member,
            kept,
            |application| registry.application(application.name),
            pieces,
        );
        (pieces.head(1, &registry.full_hashcode()), plan)
    }

    fn stale_runs(registry: &Registry, kept: &dyn Fn(&[Member<'_>]) -> bool) -> Vec<StaleRun> {
        let applications = registry.application_versions();
        stale_among(&applications, full_member, |_| Vec::new(), kept)
    }

    /// An application gone since keeps its name with no instances: the plan will not find
    /// it so, and encodes that run again.
    fn copy_run(registry: &Registry, run: &StaleRun) -> (RunMembers, Vec<Application>) {
        let mut members = Vec::with_capacity(run.apps.len());
        let mut applications = Vec::with_capacity(run.apps.len());
        for StaleApp { name, .. } in &run.apps {
            let application = registry.application(name);
            let instances = application.as_ref().map_or(0, |app| app.instances.len());
            members.push((
                name.clone(),
                (registry.application_version(name), instances),
            ));
            applications.extend(application);
        }
        (members, applications)
    }
}

impl Source for Delta {
    fn plan(
        registry: &Registry,
        pieces: ApplicationsPieces,
        kept: &dyn Fn(&[Member<'_>]) -> bool,
    ) -> (Vec<u8>, Vec<Planned>) {
        let applications = registry.delta_applications();
        let plan = plan_runs(
            &applications,
            delta_member,
            kept,
            |application| registry.delta_application(application),
            pieces,
        );
        let versions_delta = i64::try_from(registry.version()).unwrap_or(i64::MAX);
        (pieces.head(versions_delta, &registry.full_hashcode()), plan)
    }

    fn stale_runs(registry: &Registry, kept: &dyn Fn(&[Member<'_>]) -> bool) -> Vec<StaleRun> {
        let applications = registry.delta_applications();
        stale_among(
            &applications,
            delta_member,
            DeltaApplication::item_numbers,
            kept,
        )
    }

    /// Items replaced or purged since are left out, and the key counts only those still
    /// queued; items queued since are missing, but they moved the application's version.
    /// Either way the plan finds the key moved where the content did, and encodes that run
    /// again.
    fn copy_run(registry: &Registry, run: &StaleRun) -> (RunMembers, Vec<Application>) {
        let mut members = Vec::with_capacity(run.apps.len());
        let mut applications = Vec::with_capacity(run.apps.len());
        for StaleApp { name, items } in &run.apps {
            let copied = registry.delta_application_items(name, items);
            members.push((name.clone(), (copied.version, copied.queued)));
            applications.extend(copied.application);
        }
        (members, applications)
    }
}

/// The full document's member for an application: keyed by its version and size.
fn full_member<'a>(application: &'a ApplicationVersion<'_>) -> Member<'a> {
    Member {
        name: application.name,
        key: (application.version, application.instances),
    }
}

/// The delta's member for an application: keyed by its version and number of delta items.
fn delta_member<'a>(application: &'a DeltaApplication<'_>) -> Member<'a> {
    Member {
        name: application.name,
        key: (application.version, application.instances),
    }
}

/// One application of a run: its name and what must move for its entry to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Member<'a> {
    name: &'a str,
    key: (u64, usize),
}

/// A document per format, kept as runs.
#[derive(Debug)]
pub(crate) struct DocumentCache<S> {
    json: Slot,
    xml: Slot,
    /// `response-cache-auto-expiration-in-seconds`: even without changes, runs are re-encoded
    /// this often so the lease timestamps they show do not age indefinitely.
    max_age: Duration,
    builds: Builds,
    source: PhantomData<S>,
}

/// One format of one document.
#[derive(Debug, Default)]
struct Slot {
    /// Held by the one build at a time, and only by it.
    runs: Mutex<Runs>,
    /// The bodies built so far for the latest version; held only to look or to store.
    ready: Mutex<Ready>,
}

#[derive(Debug, Default)]
struct Ready {
    /// The registry version the bodies are of, and when its runs were planned.
    version: u64,
    planned_at: Option<Instant>,
    gzip: Option<CachedBody>,
    plain: Option<CachedBody>,
    plain_asked_at: Option<Instant>,
}

impl Ready {
    fn body(
        &self,
        version: u64,
        encoding: Encoding,
        now: Instant,
        max_age: Duration,
    ) -> Option<CachedBody> {
        let fresh =
            self.version == version && self.planned_at.is_some_and(|at| younger(at, now, max_age));
        let body = match encoding {
            Encoding::Gzip => &self.gzip,
            Encoding::Plain => &self.plain,
        };
        body.as_ref().filter(|_| fresh).cloned()
    }
}

/// One format's runs, as last planned.
#[derive(Debug, Default)]
struct Runs {
    version: u64,
    planned_at: Option<Instant>,
    /// By the name of each run's first application.
    by_first_app: RunMap,
    /// The document's runs in order, by first application, and its plain head.
    order: Vec<String>,
    head: Bytes,
    /// When the oldest run was encoded, and the most instances a run holds: whether a build
    /// can have much to encode ([`Runs::may_encode_much`]).
    oldest_encoded_at: Option<Instant>,
    largest_run: usize,
}

/// A run of consecutive applications, encoded and compressed together. Compressing each
/// application alone would lose most of deflate's gain (its 32 KiB window would see one small
/// application's instances only); compressing the whole document would redo megabytes per
/// change. Runs end at content-defined boundaries (see [`ends_run`]), so a change to one
/// application moves at most its own run's boundaries, and only that run is re-encoded.
#[derive(Debug)]
struct Run {
    /// Each application's name and key when the run was encoded.
    members: RunMembers,
    encoded_at: Instant,
    /// CRC-32 and length of the uncompressed run, for the gzip trailer.
    crc: Crc,
    /// The members' entries, with separators, as one raw deflate segment: made when gzip is
    /// first asked for, then kept.
    deflated: Option<Bytes>,
    /// The uncompressed run: kept from its encoding until gzip is served without plain being
    /// wanted. A run always holds one of the two.
    plain: Option<Bytes>,
}

impl Run {
    /// A run just encoded: its members' keys and its entries with separators, uncompressed.
    fn encoded(members: RunMembers, mut plain: Vec<u8>, encoded_at: Instant) -> Run {
        // Plain runs stay while plain readers come; not their spare capacity.
        plain.shrink_to_fit();
        Run {
            members,
            encoded_at,
            crc: crc_of(&plain),
            deflated: None,
            plain: Some(Bytes::from(plain)),
        }
    }

    /// Makes the forms `wanted` and drops the plain bytes if they are not.
    fn keep(&mut self, wanted: Wanted) {
        if wanted.gzip {
            self.deflated();
        }
        if !wanted.plain && self.deflated.is_some() {
            self.plain = None;
        }
    }

    fn deflated(&mut self) -> Bytes {
        let plain = &self.plain;
        self.deflated
            .get_or_insert_with(|| {
                Bytes::from(deflate(plain.as_deref().expect("a run holds one form")))
            })
            .clone()
    }

    /// The run uncompressed: kept, or inflated from its segment once (so it is byte for byte
    /// what the gzip body holds, even where heartbeats moved a lease since).
    fn plain(&mut self) -> Bytes {
        let deflated = &self.deflated;
        self.plain
            .get_or_insert_with(|| {
                inflate_segment(deflated.as_deref().expect("a run holds one form"))
            })
            .clone()
    }

    fn is_empty(&self) -> bool {
        self.crc.amount() == 0
    }
}

/// Which forms of its runs the body being built needs: gzip for a gzip body; plain for a plain
/// body, or while plain readers come ([`plain_wanted`]).
#[derive(Clone, Copy, Debug)]
struct Wanted {
    gzip: bool,
    plain: bool,
}

/// Runs by their first application. foldhash, not SipHash: a build looks up every run (tens
/// of thousands at 1,000,000 instances) under the registry lock. The names are clients'
/// but the seed is random per process, as std's is.
type RunMap = HashMap<String, Run, foldhash::fast::RandomState>;

/// A run's applications by name, each with its key when the run was encoded.
type RunMembers = Vec<(String, (u64, usize))>;

/// What a rebuild does with each run: keep the one it has, or take a new encoding.
pub(crate) enum Planned {
    Keep(String),
    Encode { members: RunMembers, plain: Vec<u8> },
}

impl<S: Source> DocumentCache<S> {
    pub(crate) fn new(max_age: Duration) -> DocumentCache<S> {
        DocumentCache {
            json: Slot::default(),
            xml: Slot::default(),
            max_age,
            builds: Builds::default(),
            source: PhantomData,
        }
    }

    /// How many bodies have been assembled (from kept or new runs) since start in this format
    /// and encoding.
    pub(crate) fn builds(&self, format: Format, encoding: Encoding) -> u64 {
        self.builds.get(format, encoding)
    }

    fn slot(&self, format: Format) -> &Slot {
        match format {
            Format::Json => &self.json,
            Format::Xml => &self.xml,
        }
    }

    /// The document for the registry's current version: [`DocumentCache::ready`], or built
    /// on the calling thread (the server builds on its blocking pool instead).
    #[cfg(test)]
    pub(crate) fn get(&self, store: &Store, format: Format, encoding: Encoding) -> CachedBody {
        self.ready(store, format, encoding)
            .unwrap_or_else(|| self.build(store, format, encoding))
    }

    /// The document for the registry's current version if it is built already: two short
    /// locks, never a wait for a build. Marks plain as wanted when asked for.
    pub(crate) fn ready(
        &self,
        store: &Store,
        format: Format,
        encoding: Encoding,
    ) -> Option<CachedBody> {
        let version = store.read().version();
        let now = store.instant();
        let mut ready = self.slot(format).ready.lock();
        if encoding == Encoding::Plain {
            ready.plain_asked_at = Some(now);
        }
        ready.body(version, encoding, now, self.max_age)
    }

    /// Builds the document for the registry's current version, or waits for the build under
    /// way and takes its result: one build per format at a time, never two of one body. Costs
    /// up to a whole encoding and compression of the document, so the server calls it off its
    /// async workers. Lock order: this format's runs, then the registry, then its ready bodies.
    pub(crate) fn build(&self, store: &Store, format: Format, encoding: Encoding) -> CachedBody {
        let slot = self.slot(format);
        let mut runs = slot.runs.lock();
        // The build waited for may have made this body.
        if let Some(body) = self.ready(store, format, encoding) {
            return body;
        }
        let now = store.instant();
        let keep_plain = plain_wanted(slot.ready.lock().plain_asked_at, now, self.max_age);
        let pieces = ApplicationsPieces { format };
        let version = store.read().version();
        let aged = runs
            .planned_at
            .is_none_or(|at| !younger(at, now, self.max_age));
        if runs.version != version || aged {
            let wanted = Wanted {
                gzip: encoding == Encoding::Gzip,
                plain: encoding == Encoding::Plain || keep_plain,
            };
            runs.replan::<S>(store, pieces, self.max_age, wanted);
        }
        let body = match encoding {
            Encoding::Gzip => CachedBody::one(runs.gzip_body(pieces, keep_plain)),
            Encoding::Plain => runs.plain_body(pieces),
        };
        self.builds.count(format, encoding);
        let mut ready = slot.ready.lock();
        if ready.version != runs.version || ready.planned_at != runs.planned_at {
            ready.version = runs.version;
            ready.planned_at = runs.planned_at;
            ready.gzip = None;
            ready.plain = None;
        }
        match encoding {
            Encoding::Gzip => ready.gzip = Some(body.clone()),
            Encoding::Plain => ready.plain = Some(body.clone()),
        }
        body
    }
}

impl Runs {
    /// Takes the registry's current runs: kept where their members' keys did not move (and
    /// they have not aged), newly encoded (not compressed) where they did. Most of a large
    /// build's encoding happens before the plan, between short registry locks
    /// ([`Runs::encode_stale_unlocked`]); the plan itself holds the lock, so the document it
    /// settles is one registry version's.
    fn replan<S: Source>(
        &mut self,
        store: &Store,
        pieces: ApplicationsPieces,
        max_age: Duration,
        wanted: Wanted,
    ) {
        if self.may_encode_much(store.read().version(), store.instant(), max_age) {
            self.encode_stale_unlocked::<S>(store, pieces, max_age, wanted);
        }
        let (version, head, plan) = {
            let registry = store.read();
            let now = store.instant();
            let kept = |members: &[Member<'_>]| self.is_kept(members, now, max_age);
            let (head, plan) = S::plan(&registry, pieces, &kept);
            (registry.version(), head, plan)
        };
        let mut runs = RunMap::with_capacity_and_hasher(plan.len(), Default::default());
        let mut order = Vec::with_capacity(plan.len());
        for planned in plan {
            let run = match planned {
                Planned::Keep(first) => self
                    .by_first_app
                    .remove(&first)
                    .expect("planned from this map"),
                Planned::Encode { members, plain } => Run::encoded(members, plain, store.instant()),
            };
            order.push(run.members[0].0.clone());
            runs.insert(run.members[0].0.clone(), run);
        }
        self.oldest_encoded_at = runs.values().map(|run| run.encoded_at).min();
        self.largest_run = runs
            .values()
            .map(|run| run.members.iter().map(|(_, key)| key.1).sum())
            .max()
            .unwrap_or(0);
        self.by_first_app = runs;
        self.order = order;
        self.head = Bytes::from(head);
        self.version = version;
        self.planned_at = Some(store.instant());
    }

    /// Whether the build for `version` may have enough to encode for
    /// [`Runs::encode_stale_unlocked`] to pay: the first one, one where runs have aged, or
    /// one after enough changes that their runs (a change moves at most its own run and the
    /// boundaries beside it) may hold [`LOCKED_ENCODE_INSTANCES`]. Finding the stale runs
    /// costs a pass over all applications, tens of milliseconds at 1,000,000 instances: the
    /// build after a single registration should not pay it twice.
    fn may_encode_much(&self, version: u64, now: Instant, max_age: Duration) -> bool {
        let changes = usize::try_from(version.saturating_sub(self.version)).unwrap_or(usize::MAX);
        self.by_first_app.is_empty()
            || self
                .oldest_encoded_at
                .is_none_or(|at| !younger(at, now, max_age))
            || changes.saturating_mul(3 * self.largest_run.max(1)) >= LOCKED_ENCODE_INSTANCES
    }

    /// Whether a run with these members, as kept, can stand in the next document.
    fn is_kept(&self, members: &[Member<'_>], now: Instant, max_age: Duration) -> bool {
        self.by_first_app.get(members[0].name).is_some_and(|old| {
            younger(old.encoded_at, now, max_age)
                && old
                    .members
                    .iter()
                    .map(|(name, key)| (name.as_str(), *key))
                    .eq(members.iter().map(|member| (member.name, member.key)))
        })
    }

    /// Encodes the runs the plan would encode, a batch at a time: each batch is copied out of
    /// the registry under a short lock and encoded after releasing it. A whole build is
    /// seconds of work at a million instances (the first fetch, and every `max_age` after),
    /// and heartbeats and registrations wait for the registry lock; they now wait for one
    /// batch at most. Runs whose applications change meanwhile no longer match their keys,
    /// so the plan encodes them again; a pass that finds few instances stale leaves them to
    /// the plan, and after a few passes (writes outpacing the encoding) the plan takes the
    /// rest under the lock.
    ///
    /// Each run is also compressed (if gzip is `wanted`) and its plain bytes dropped (if plain
    /// is not) as soon as it is encoded, so a build holds one batch's plain bytes at a time,
    /// not the whole document's: the allocator reuses them, where a document's worth (about
    /// the payload's size) freed at once stays resident in the heap.
    fn encode_stale_unlocked<S: Source>(
        &mut self,
        store: &Store,
        pieces: ApplicationsPieces,
        max_age: Duration,
        wanted: Wanted,
    ) {
        for _ in 0..UNLOCKED_PASSES {
            let stale = {
                let registry = store.read();
                let now = store.instant();
                S::stale_runs(&registry, &|members| self.is_kept(members, now, max_age))
            };
            if stale.iter().map(|run| run.instances).sum::<usize>() < LOCKED_ENCODE_INSTANCES {
                return;
            }
            for batch in batches(&stale, UNLOCKED_BATCH_INSTANCES) {
                let copied: Vec<_> = {
                    let registry = store.read();
                    batch
                        .iter()
                        .map(|run| S::copy_run(&registry, run))
                        .collect()
                };
                for (members, applications) in copied {
                    let plain = encode_entries(&applications, pieces);
                    let mut run = Run::encoded(members, plain, store.instant());
                    run.keep(wanted);
                    self.by_first_app.insert(run.members[0].0.clone(), run);
                }
            }
        }
    }

    /// The gzip body: head, the runs' deflate segments (compressing those not yet compressed)
    /// and stored separators, in one member. Drops plain copies nobody wants.
    fn gzip_body(&mut self, pieces: ApplicationsPieces, keep_plain: bool) -> Bytes {
        let mut gzip = GzipMember::new();
        gzip.push_deflated(&deflate(&self.head), &crc_of(&self.head));
        let mut first = true;
        for name in &self.order {
            let run = self
                .by_first_app
                .get_mut(name)
                .expect("the order lists this map's runs");
            if !run.is_empty() {
                if !first {
                    gzip.push_stored(pieces.separator());
                }
                first = false;
                gzip.push_deflated(&run.deflated(), &run.crc);
            }
            if !keep_plain {
                run.plain = None;
            }
        }
        gzip.push_stored(pieces.tail());
        gzip.finish()
    }

    /// The plain body: head, runs and separators as kept, shared with the runs rather than
    /// copied (runs kept only compressed are inflated once).
    fn plain_body(&mut self, pieces: ApplicationsPieces) -> CachedBody {
        let separator = Bytes::from_static(pieces.separator());
        let mut parts = Vec::with_capacity(self.order.len() * 2 + 2);
        parts.push(self.head.clone());
        for name in &self.order {
            let run = self
                .by_first_app
                .get_mut(name)
                .expect("the order lists this map's runs");
            if run.is_empty() {
                continue;
            }
            if parts.len() > 1 {
                parts.push(separator.clone());
            }
            parts.push(run.plain());
        }
        parts.push(Bytes::from_static(pieces.tail()));
        CachedBody::of(parts)
    }
}

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

/// A build leaves a stale remainder this small (about 5 ms of encoding) to its plan, under the
/// registry lock, rather than making another pass.
const LOCKED_ENCODE_INSTANCES: usize = 4_096;
/// Instances copied out of the registry per lock in [`Runs::encode_stale_unlocked`].
const UNLOCKED_BATCH_INSTANCES: usize = 2_048;
/// Passes of [`Runs::encode_stale_unlocked`] before the plan takes what is left.
const UNLOCKED_PASSES: usize = 3;

/// Splits a document's applications into runs (see [`ends_run`]) and encodes those that are
/// not `kept`, one application at a time, so no copy of the whole registry is ever held.
fn plan_runs<'a, E>(
    applications: &'a [E],
    member: impl Fn(&'a E) -> Member<'a>,
    kept: &dyn Fn(&[Member<'_>]) -> bool,
    render: impl Fn(&'a E) -> Option<Application>,
    pieces: ApplicationsPieces,
) -> Vec<Planned> {
    let mut start = 0;
    group_runs(applications.iter().map(member))
        .into_iter()
        .map(|run| {
            let of_run = &applications[start..start + run.len()];
            start += run.len();
            if kept(&run) {
                Planned::Keep(run[0].name.to_owned())
            } else {
                let rendered: Vec<Application> = of_run.iter().filter_map(&render).collect();
                Planned::Encode {
                    members: run
                        .iter()
                        .map(|member| (member.name.to_owned(), member.key))
                        .collect(),
                    plain: encode_entries(&rendered, pieces),
                }
            }
        })
        .collect()
}

/// A document's members, in order, cut into runs where [`ends_run`] says.
fn group_runs<'a>(members: impl Iterator<Item = Member<'a>>) -> Vec<Vec<Member<'a>>> {
    let mut runs = Vec::new();
    let mut run: Vec<Member<'a>> = Vec::new();
    let mut run_instances = 0;
    for member in members {
        run.push(member);
        run_instances += member.key.1;
        if ends_run(member.name, run_instances) {
            runs.push(std::mem::take(&mut run));
            run_instances = 0;
        }
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs
}

/// Stale runs in batches of at least `instances` instances (the last one smaller).
fn batches(runs: &[StaleRun], instances: usize) -> Vec<&[StaleRun]> {
    let mut out = Vec::new();
    let (mut start, mut held) = (0, 0);
    for (n, run) in runs.iter().enumerate() {
        held += run.instances;
        if held >= instances {
            out.push(&runs[start..=n]);
            (start, held) = (n + 1, 0);
        }
    }
    if start < runs.len() {
        out.push(&runs[start..]);
    }
    out
}

/// The entries of applications, with separators between them: a run's bytes.
fn encode_entries(applications: &[Application], pieces: ApplicationsPieces) -> Vec<u8> {
    let mut plain = Vec::new();
    for application in applications {
        if !plain.is_empty() {
            plain.extend_from_slice(pieces.separator());
        }
        plain.extend_from_slice(&pieces.entry(application));
    }
    plain
}

/// The hash that picks run boundaries: fixed, so a name ends a run in every build of the
/// process, and fast, since every build hashes every application's name (SipHash was 8 % of
/// a build after one change at 1,000,000 instances).
static BOUNDARY_HASH: foldhash::fast::FixedState =
    foldhash::fast::FixedState::with_seed(0x0048_4555_5245_4b41);

/// Whether a run of applications ends after `name`, `run_instances` instances into it.
/// Boundaries come from application names, not positions, so they stay put when other
/// applications come, go or change size; the size limits keep every run big enough to
/// compress well (32 instances are about 30 KiB, deflate's window) and small enough to
/// re-encode in about a millisecond.
fn ends_run(name: &str, run_instances: usize) -> bool {
    const MIN_INSTANCES: usize = 32;
    const MAX_INSTANCES: usize = 256;
    run_instances >= MAX_INSTANCES
        || (run_instances >= MIN_INSTANCES && BOUNDARY_HASH.hash_one(name).is_multiple_of(8))
}

fn crc_of(data: &[u8]) -> Crc {
    let mut crc = Crc::new();
    crc.update(data);
    crc
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
            // Kept for as long as the run is unchanged: `Bytes` would hold the spare capacity
            // too (about 2/3 of it, at JSON's 1:20 ratio), so give it back first.
            out.shrink_to_fit();
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
        // The body is kept for the whole version; without this, so would its spare capacity.
        self.out.shrink_to_fit();
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

    fn registry_with(apps: usize, per_app: usize) -> Store {
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
        store(registry)
    }

    /// A store with no sinks, on the wall clock: the caches only read it.
    fn store(registry: Registry) -> Store {
        Store::new(registry, crate::clock::Clock::System, Vec::new())
    }

    fn compressed_runs(cache: &FullFetchCache) -> Vec<Bytes> {
        cache
            .json
            .runs
            .lock()
            .by_first_app
            .values()
            .filter_map(|run| run.deflated.clone())
            .collect()
    }

    fn register(registry: &Store, app: &str, id: &str) {
        let instance = heureka_core::Instance::new(app, id, "host", "10.0.0.1", 0);
        registry.write(|registry, _| {
            let now = registry.version() as i64;
            registry.register(instance, heureka_core::Origin::Client, now);
        });
    }

    fn whole_full(registry: &Store, format: Format) -> Vec<u8> {
        heureka_wire::encode_applications(&registry.read().applications(), format)
    }

    fn whole_delta(registry: &Store, format: Format) -> Vec<u8> {
        heureka_wire::encode_applications(&registry.read().delta(), format)
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
        assert_every_form_equals_a_whole_encoding::<Full>(&registry_with(300, 3), whole_full);
    }

    #[test]
    fn delta_written_one_application_at_a_time_equals_a_whole_encoding() {
        let registry = registry_with(40, 3);
        registry.write(|registry, _| {
            registry.cancel("APP-7", "APP-7-1", heureka_core::Origin::Client, 1)
        });
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

    const PLAIN: Wanted = Wanted {
        gzip: false,
        plain: true,
    };

    /// Runs' plain bytes by first application, to tell kept runs (same allocation) from
    /// re-encoded ones.
    fn plain_runs(runs: &Runs) -> HashMap<String, Bytes> {
        let runs = runs.by_first_app.iter();
        runs.map(|(name, run)| (name.clone(), run.plain.clone().expect("plain")))
            .collect()
    }

    /// A large build's unlocked pass encodes its runs, the plan keeps every one of them, and
    /// the body equals a whole encoding (`whole`).
    fn assert_plan_keeps_the_unlocked_runs<S: Source>(whole: fn(&Store, Format) -> Vec<u8>) {
        let registry = registry_with(1_500, 4);
        let pieces = ApplicationsPieces {
            format: Format::Json,
        };
        let max_age = Duration::from_secs(180);
        let mut runs = Runs::default();
        runs.encode_stale_unlocked::<S>(&registry, pieces, max_age, PLAIN);
        let encoded = plain_runs(&runs);
        assert!(encoded.len() > 10, "the pass encoded the runs");
        runs.replan::<S>(&registry, pieces, max_age, PLAIN);
        let planned = plain_runs(&runs);
        assert_eq!(planned.len(), encoded.len());
        assert!(planned
            .iter()
            .all(|(name, plain)| encoded[name].as_ptr() == plain.as_ptr()));
        let body = CachedBody::one(runs.gzip_body(pieces, true));
        assert_eq!(read(&body, Encoding::Gzip), whole(&registry, Format::Json));
    }

    /// Every format and encoding of `registry`'s document equals a whole encoding (`whole`).
    fn assert_every_form_equals_a_whole_encoding<S: Source>(
        registry: &Store,
        whole: fn(&Store, Format) -> Vec<u8>,
    ) {
        let cache = DocumentCache::<S>::new(Duration::from_secs(180));
        for format in FORMATS {
            for encoding in Encoding::ALL {
                let body = cache.get(registry, format, encoding);
                assert_eq!(read(&body, encoding), whole(registry, format));
            }
        }
    }

    #[test]
    fn a_large_build_encodes_before_its_plan_and_the_plan_keeps_all_of_it() {
        assert_plan_keeps_the_unlocked_runs::<Full>(whole_full);
    }

    #[test]
    fn a_change_after_the_unlocked_encoding_is_encoded_again_by_the_plan() {
        let registry = registry_with(1_500, 4);
        let pieces = ApplicationsPieces {
            format: Format::Xml,
        };
        let max_age = Duration::from_secs(180);
        let mut runs = Runs::default();
        runs.encode_stale_unlocked::<Full>(&registry, pieces, max_age, PLAIN);
        let encoded = plain_runs(&runs);
        register(&registry, "APP-42", "APP-42-new");
        runs.replan::<Full>(&registry, pieces, max_age, PLAIN);
        let re_encoded = plain_runs(&runs)
            .iter()
            .filter(|(name, plain)| encoded[*name].as_ptr() != plain.as_ptr())
            .count();
        assert_eq!(re_encoded, 1);
        let body = CachedBody::one(runs.gzip_body(pieces, true));
        assert_eq!(
            read(&body, Encoding::Gzip),
            whole_full(&registry, Format::Xml)
        );
    }

    #[test]
    fn a_large_delta_build_encodes_before_its_plan_and_the_plan_keeps_all_of_it() {
        assert_plan_keeps_the_unlocked_runs::<Delta>(whole_delta);
    }

    #[test]
    fn delta_changes_after_the_unlocked_encoding_are_encoded_again_by_the_plan() {
        let registry = registry_with(1_500, 4);
        let pieces = ApplicationsPieces {
            format: Format::Xml,
        };
        let max_age = Duration::from_secs(180);
        let mut runs = Runs::default();
        runs.encode_stale_unlocked::<Delta>(&registry, pieces, max_age, PLAIN);
        register(&registry, "APP-42", "APP-42-new");
        // Replaces APP-7's live item by a DELETED one: same number of items.
        let now = registry.read().version() as i64;
        assert!(registry.write(|registry, _| registry.cancel(
            "APP-7",
            "APP-7-1",
            heureka_core::Origin::Client,
            now
        )));
        runs.replan::<Delta>(&registry, pieces, max_age, PLAIN);
        let body = CachedBody::one(runs.gzip_body(pieces, true));
        assert_eq!(
            read(&body, Encoding::Gzip),
            whole_delta(&registry, Format::Xml)
        );
    }

    #[test]
    fn large_delta_fetches_equal_a_whole_encoding_in_both_formats() {
        assert_every_form_equals_a_whole_encoding::<Delta>(&registry_with(1_500, 4), whole_delta);
    }

    #[test]
    fn a_build_after_a_few_changes_skips_the_unlocked_pass_and_one_after_many_does_not() {
        let registry = registry_with(1_500, 4);
        let pieces = ApplicationsPieces {
            format: Format::Json,
        };
        let max_age = Duration::from_secs(180);
        let mut runs = Runs::default();
        assert!(runs.may_encode_much(registry.read().version(), registry.instant(), max_age));
        runs.replan::<Full>(&registry, pieces, max_age, PLAIN);
        register(&registry, "APP-42", "APP-42-new");
        assert!(!runs.may_encode_much(registry.read().version(), registry.instant(), max_age));
        for n in 0..500 {
            register(&registry, &format!("APP-{n}"), "another");
        }
        assert!(runs.may_encode_much(registry.read().version(), registry.instant(), max_age));
        assert!(runs.may_encode_much(runs.version, registry.instant(), Duration::ZERO));
    }

    #[test]
    fn a_large_gzip_build_holds_its_runs_compressed_only() {
        let registry = registry_with(1_500, 4);
        let cache = FullFetchCache::new(Duration::from_secs(180));
        let body = cache.get(&registry, Format::Json, Encoding::Gzip);
        let runs = cache.json.runs.lock();
        assert!(runs.by_first_app.len() > 10);
        assert!(runs
            .by_first_app
            .values()
            .all(|run| run.plain.is_none() && run.deflated.is_some()));
        drop(runs);
        assert_eq!(
            read(&body, Encoding::Gzip),
            whole_full(&registry, Format::Json)
        );
    }

    #[test]
    fn large_full_fetches_equal_a_whole_encoding_in_both_formats() {
        assert_every_form_equals_a_whole_encoding::<Full>(&registry_with(1_500, 4), whole_full);
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

    fn register_at(registry: &Store, app: &str, id: &str, now: i64) {
        let instance = heureka_core::Instance::new(app, id, "host", "10.0.0.1", 0);
        registry
            .write(|registry, _| registry.register(instance, heureka_core::Origin::Client, now));
    }

    fn delta_runs(cache: &DeltaCache) -> Vec<Bytes> {
        cache
            .json
            .runs
            .lock()
            .by_first_app
            .values()
            .filter_map(|run| run.deflated.clone())
            .collect()
    }

    /// Whether every run of `slot` holds its plain bytes and its deflate segment.
    fn forms_kept(slot: &Slot) -> (bool, bool) {
        let runs = slot.runs.lock();
        let all = |form: fn(&Run) -> bool| runs.by_first_app.values().all(form);
        (
            all(|run| run.plain.is_some()),
            all(|run| run.deflated.is_some()),
        )
    }

    #[test]
    fn a_delta_after_one_change_re_encodes_only_that_changes_run() {
        let registry = registry_with(300, 3);
        let cache = DeltaCache::new(Duration::from_secs(180));
        cache.get(&registry, Format::Json, Encoding::Gzip);
        let before = delta_runs(&cache);
        assert!(before.len() > 3, "the delta is split into runs");
        register(&registry, "APP-42", "APP-42-new");
        let body = cache.get(&registry, Format::Json, Encoding::Gzip);
        let recompressed = delta_runs(&cache)
            .iter()
            .filter(|run| !before.iter().any(|old| old.as_ptr() == run.as_ptr()))
            .count();
        assert_eq!(recompressed, 1);
        assert_eq!(
            read(&body, Encoding::Gzip),
            whole_delta(&registry, Format::Json)
        );
    }

    #[test]
    fn a_purge_that_shrinks_an_applications_delta_without_changing_it_renews_its_run() {
        // One application, so its run's members are the same before and after but for the
        // number of its delta items.
        let registry = registry_with(1, 3);
        register_at(&registry, "APP-0", "APP-0-late", 100_000);
        let cache = DeltaCache::new(Duration::from_secs(180));
        for format in FORMATS {
            for encoding in Encoding::ALL {
                cache.get(&registry, format, encoding);
            }
        }
        // Retention is 180 s: this drops the items queued at 0 and keeps APP-0-late, so
        // APP-0's part of the delta shrinks while its version stays.
        registry.write(|registry, _| registry.purge_recently_changed(190_000));
        for format in FORMATS {
            for encoding in Encoding::ALL {
                let body = cache.get(&registry, format, encoding);
                assert_eq!(read(&body, encoding), whole_delta(&registry, format));
            }
        }
    }

    #[test]
    fn a_delta_shows_an_application_whose_last_instance_was_cancelled() {
        let registry = registry_with(40, 2);
        let cache = DeltaCache::new(Duration::from_secs(180));
        cache.get(&registry, Format::Json, Encoding::Gzip);
        for id in ["APP-8-0", "APP-8-1"] {
            registry
                .write(|registry, _| registry.cancel("APP-8", id, heureka_core::Origin::Client, 1));
        }
        for format in FORMATS {
            for encoding in Encoding::ALL {
                let body = cache.get(&registry, format, encoding);
                let text = read(&body, encoding);
                assert_eq!(text, whole_delta(&registry, format));
                assert!(String::from_utf8(text).unwrap().contains("DELETED"));
            }
        }
    }

    #[test]
    fn plain_only_reads_compress_nothing() {
        let registry = registry_with(300, 3);
        let full = FullFetchCache::new(Duration::from_secs(180));
        let delta = DeltaCache::new(Duration::from_secs(180));
        for _ in 0..2 {
            register(
                &registry,
                "APP-42",
                &format!("APP-42-{}", registry.read().version()),
            );
            for format in FORMATS {
                full.get(&registry, format, Encoding::Plain);
                delta.get(&registry, format, Encoding::Plain);
            }
        }
        for slot in [&full.json, &full.xml, &delta.json, &delta.xml] {
            assert_eq!(forms_kept(slot), (true, false));
        }
        for format in FORMATS {
            assert_eq!(full.builds(format, Encoding::Gzip), 0);
            assert_eq!(delta.builds(format, Encoding::Gzip), 0);
        }
    }

    #[test]
    fn gzip_only_reads_keep_no_plain_copy() {
        let registry = registry_with(300, 3);
        let full = FullFetchCache::new(Duration::from_secs(180));
        let delta = DeltaCache::new(Duration::from_secs(180));
        for format in FORMATS {
            full.get(&registry, format, Encoding::Gzip);
            delta.get(&registry, format, Encoding::Gzip);
        }
        for slot in [&full.json, &full.xml, &delta.json, &delta.xml] {
            assert_eq!(forms_kept(slot), (false, true));
        }
    }

    #[test]
    fn a_gzip_body_after_plain_only_reads_is_the_same_document() {
        let registry = registry_with(300, 3);
        let full = FullFetchCache::new(Duration::from_secs(180));
        let delta = DeltaCache::new(Duration::from_secs(180));
        for format in FORMATS {
            let plain = full.get(&registry, format, Encoding::Plain).to_vec();
            let gzip = full.get(&registry, format, Encoding::Gzip);
            assert_eq!(read(&gzip, Encoding::Gzip), plain);
            let plain = delta.get(&registry, format, Encoding::Plain).to_vec();
            let gzip = delta.get(&registry, format, Encoding::Gzip);
            assert_eq!(read(&gzip, Encoding::Gzip), plain);
        }
    }

    #[test]
    fn concurrent_first_fetches_build_once() {
        let registry = registry_with(300, 3);
        let full = FullFetchCache::new(Duration::from_secs(180));
        let delta = DeltaCache::new(Duration::from_secs(180));
        let bodies: Vec<(CachedBody, CachedBody)> = std::thread::scope(|scope| {
            let readers: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        (
                            full.get(&registry, Format::Json, Encoding::Gzip),
                            delta.get(&registry, Format::Json, Encoding::Gzip),
                        )
                    })
                })
                .collect();
            readers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        assert_eq!(full.builds(Format::Json, Encoding::Gzip), 1);
        assert_eq!(delta.builds(Format::Json, Encoding::Gzip), 1);
        for (full_body, delta_body) in &bodies {
            assert!(Arc::ptr_eq(&full_body.parts, &bodies[0].0.parts));
            assert!(Arc::ptr_eq(&delta_body.parts, &bodies[0].1.parts));
        }
    }

    #[test]
    fn a_ready_body_is_taken_without_building_and_a_missing_one_is_not_built() {
        let registry = registry_with(40, 3);
        let full = FullFetchCache::new(Duration::from_secs(180));
        assert!(full
            .ready(&registry, Format::Json, Encoding::Gzip)
            .is_none());
        assert_eq!(full.builds(Format::Json, Encoding::Gzip), 0);
        let built = full.get(&registry, Format::Json, Encoding::Gzip);
        let ready = full.ready(&registry, Format::Json, Encoding::Gzip).unwrap();
        assert!(Arc::ptr_eq(&built.parts, &ready.parts));
        assert!(full
            .ready(&registry, Format::Json, Encoding::Plain)
            .is_none());
        register(&registry, "APP-1", "APP-1-new");
        assert!(full
            .ready(&registry, Format::Json, Encoding::Gzip)
            .is_none());
        assert_eq!(full.builds(Format::Json, Encoding::Gzip), 1);
    }

    #[test]
    fn a_single_application_read_is_kept_across_other_applications_changes_only() {
        let registry = registry_with(40, 3);
        let cache = SelectionCache::new(Duration::from_secs(180));
        let app = Selection::App("APP-1".to_owned());
        let first = cache.get(&registry, &app, Format::Json).unwrap();
        register(&registry, "APP-2", "APP-2-new");
        let kept = cache.get(&registry, &app, Format::Json).unwrap();
        assert_eq!(kept.as_ptr(), first.as_ptr(), "another application changed");
        register(&registry, "APP-1", "APP-1-new");
        let renewed = cache.get(&registry, &app, Format::Json).unwrap();
        let expected = heureka_wire::encode_application(
            &registry.read().application("APP-1").unwrap(),
            Format::Json,
        );
        assert_eq!(renewed, expected);
    }

    #[test]
    fn a_vip_read_after_any_registration_shows_it() {
        let registry = registry_with(40, 3);
        let cache = SelectionCache::new(Duration::from_secs(180));
        let vip = Selection::Vip("orders".to_owned());
        let before = cache.get(&registry, &vip, Format::Xml).unwrap();
        let mut instance = heureka_core::Instance::new("ORDERS", "orders-1", "host", "10.0.0.2", 0);
        instance.vip_address = Some("orders".to_owned());
        registry.write(|registry, _| registry.register(instance, heureka_core::Origin::Client, 1));
        let after = cache.get(&registry, &vip, Format::Xml).unwrap();
        assert_ne!(before, after);
        let expected =
            heureka_wire::encode_applications(&registry.read().vip("orders", false), Format::Xml);
        assert_eq!(after, expected);
    }

    #[test]
    fn an_application_with_no_instances_is_not_found_in_the_selection_cache() {
        let registry = registry_with(2, 1);
        let cache = SelectionCache::new(Duration::from_secs(180));
        assert!(cache
            .get(&registry, &Selection::App("NOPE".to_owned()), Format::Json)
            .is_none());
    }

    #[test]
    fn large_inputs_deflate_completely() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|n| n.to_le_bytes()).collect();
        let mut gzip = GzipMember::new();
        gzip.push_deflated(&deflate(&data), &crc_of(&data));
        assert_eq!(gunzip_single_member(&gzip.finish()), data);
    }
}
