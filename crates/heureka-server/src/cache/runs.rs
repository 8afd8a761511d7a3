//! One format's runs of one document, as last planned: kept, re-encoded and compressed as the
//! registry changes, and laid out as a gzip or a plain body.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use flate2::Compression;
use heureka_core::Application;
use heureka_wire::ApplicationsPieces;

use super::age::younger;
use super::body::CachedBody;
use super::gzip::{
    crc_of, deflate, deflate_at, inflate_segment, stored_block_size, Checksum, GzipMember,
};
use super::pages::Pages;
use super::plan::{batches, encode_entries, Boundaries, KeptRun, Member, Planned, RunMembers};
use super::source::Source;
use crate::clock::Instant;
use crate::store::Store;

/// A gzip body up to this size is laid out in one buffer on each build (a few milliseconds
/// at 8 MiB), without pages. Each body part costs every read: about a thousand
/// instructions, and above all a write of its own to the socket, where one buffer is written
/// as fast as the socket takes it. Pages alone cost 5-17 % more CPU per full fetch at 10,000
/// and 100,000 instances (`bench/results/ab/one-buffer-gzip-body-vs-gzip-body-pages*.md`).
const ONE_BUFFER_BYTES: usize = 8 * 1024 * 1024;

/// One format's runs, as last planned.
#[derive(Debug, Default)]
pub(super) struct Runs {
    pub(super) version: u64,
    pub(super) planned_at: Option<Instant>,
    /// By the name of each run's first application.
    pub(super) by_first_app: RunMap,
    /// The document's runs in order, by first application, and its plain head.
    order: Vec<Arc<str>>,
    head: Bytes,
    /// The number of the last plan, which marks the runs it keeps.
    plans: u64,
    /// When the oldest run was encoded, and the most instances a run holds: whether a build
    /// can have much to encode ([`Runs::may_encode_much`]).
    oldest_encoded_at: Option<Instant>,
    largest_run: usize,
    /// The last gzip body's pages, kept where their runs are.
    pages: Pages,
}

/// A run of consecutive applications, encoded and compressed together. Compressing each
/// application alone would lose most of deflate's gain (its 32 KiB window would see one small
/// application's instances only); compressing the whole document would redo megabytes per
/// change. Runs end at content-defined boundaries (see [`ends_run`]), so a change to one
/// application moves at most its own run's boundaries, and only that run is re-encoded.
#[derive(Debug)]
pub(super) struct Run {
    /// Each application's name and key when the run was encoded.
    members: RunMembers,
    /// Where those members end a run: whether the plan may take them as a run without
    /// finding its end again.
    boundaries: Boundaries,
    /// The last plan that kept the run (or made it, if that one did): once it is settled,
    /// the runs it did not keep are dropped.
    kept_by: Cell<u64>,
    encoded_at: Instant,
    /// CRC-32 and length of the uncompressed run, for the gzip trailer.
    crc: Checksum,
    /// The members' entries, with separators, as one raw deflate segment: made when gzip is
    /// first asked for, then kept.
    pub(super) deflated: Option<Bytes>,
    /// The uncompressed run: kept from its encoding until gzip is served without plain being
    /// wanted. A run always holds one of the two.
    pub(super) plain: Option<Bytes>,
}

impl Run {
    /// A run just encoded: its members' keys and its entries with separators, uncompressed.
    fn encoded(members: RunMembers, mut plain: Vec<u8>, encoded_at: Instant) -> Run {
        // Plain runs stay while plain readers come; not their spare capacity.
        plain.shrink_to_fit();
        Run {
            boundaries: Boundaries::of(&members),
            members,
            kept_by: Cell::new(0),
            encoded_at,
            crc: crc_of(&plain),
            deflated: None,
            plain: Some(Bytes::from(plain)),
        }
    }

    /// Makes the forms `wanted` (compressed at `level`) and drops the plain bytes if they are
    /// not.
    fn keep(&mut self, wanted: Wanted, level: Compression) {
        if wanted.gzip {
            self.deflated_at(level);
        }
        if !wanted.plain && self.deflated.is_some() {
            self.plain = None;
        }
    }

    fn deflated(&mut self) -> Bytes {
        self.deflated_at(Compression::default())
    }

    fn deflated_at(&mut self, level: Compression) -> Bytes {
        let plain = &self.plain;
        self.deflated
            .get_or_insert_with(|| {
                let plain = plain.as_deref().expect("a run holds one form");
                Bytes::from(deflate_at(plain, level))
            })
            .clone()
    }

    /// The deflate segment, once [`Run::deflated`] has made it.
    fn segment(&self) -> &Bytes {
        self.deflated
            .as_ref()
            .expect("deflated before the gzip body is laid out")
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
        self.crc.is_empty()
    }
}

/// Which forms of its runs the body being built needs: gzip for a gzip body; plain for a plain
/// body, or while plain readers come ([`plain_wanted`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Wanted {
    pub(super) gzip: bool,
    pub(super) plain: bool,
}

/// Runs by their first application. The order holds the same names as `Arc`s (clones, not
/// copies of the text), so that a plan keeping a run copies no name. foldhash, not SipHash: a build looks up every run (tens of thousands at
/// 1,000,000 instances) under the registry lock. The names are clients' but the seed is
/// random per process, as std's is.
type RunMap = HashMap<Arc<str>, Run, foldhash::fast::RandomState>;

impl Runs {
    /// Takes the registry's current runs: kept where their members' keys did not move (and
    /// they have not aged), newly encoded (not compressed) where they did. Most of a large
    /// build's encoding happens before the plan, between short registry locks
    /// ([`Runs::encode_stale_unlocked`]); the plan itself holds the lock, so the document it
    /// settles is one registry version's.
    pub(super) fn replan<S: Source>(
        &mut self,
        store: &Store,
        pieces: ApplicationsPieces,
        max_age: Duration,
        wanted: Wanted,
    ) {
        if self.may_encode_much(store.read().version(), store.instant(), max_age) {
            self.encode_stale_unlocked::<S>(store, pieces, max_age, wanted);
        }
        self.plans += 1;
        let plan_number = self.plans;
        let (version, head, plan) = {
            let registry = store.read();
            let now = store.instant();
            let kept = |rest: &[Member<'_>]| self.kept_run(rest, now, max_age);
            let (head, plan) = S::plan(&registry, pieces, &kept);
            (registry.version(), head, plan)
        };
        // Kept runs stay where they are; new ones replace the runs of their first name.
        let mut order = Vec::with_capacity(plan.len());
        for planned in plan {
            let first = match planned {
                Planned::Keep(first) => first,
                Planned::Encode { members, plain } => {
                    let run = Run::encoded(members, plain, store.instant());
                    run.kept_by.set(plan_number);
                    let first: Arc<str> = Arc::from(run.members[0].0.as_str());
                    self.by_first_app.insert(first.clone(), run);
                    first
                }
            };
            order.push(first);
        }
        self.by_first_app
            .retain(|_, run| run.kept_by.get() == plan_number);
        debug_assert_eq!(
            self.by_first_app.len(),
            order.len(),
            "the map holds exactly the runs of the order"
        );
        let runs = &self.by_first_app;
        self.oldest_encoded_at = runs.values().map(|run| run.encoded_at).min();
        self.largest_run = runs
            .values()
            .map(|run| run.members.iter().map(|(_, key)| key.1).sum())
            .max()
            .unwrap_or(0);
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

    /// The run kept that can stand, as it is, at the start of `rest` (the document's members
    /// from a run's start to its end): the one whose first application starts it, when it has
    /// not aged and it is the run its members make there ([`Boundaries::stands_at`]). Marks
    /// it kept by the latest plan (a mark the unlocked pass leaves before a plan is the last
    /// plan's, which no longer counts).
    fn kept_run(&self, rest: &[Member<'_>], now: Instant, max_age: Duration) -> Option<KeptRun> {
        let (first, old) = self.by_first_app.get_key_value(rest[0].name)?;
        let stands =
            younger(old.encoded_at, now, max_age) && old.boundaries.stands_at(&old.members, rest);
        if stands {
            old.kept_by.set(self.plans);
        }
        stands.then(|| KeptRun {
            first: first.clone(),
            len: old.members.len(),
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
        let first = self.by_first_app.is_empty();
        for _ in 0..UNLOCKED_PASSES {
            let stale = {
                let registry = store.read();
                let now = store.instant();
                S::stale_runs(&registry, &|rest| self.kept_run(rest, now, max_age))
            };
            let instances = stale.iter().map(|run| run.instances).sum::<usize>();
            if instances < LOCKED_ENCODE_INSTANCES {
                return;
            }
            // The first build of a very large registry (after a warm restart) has clients
            // waiting for it: compressed fast, its runs are compressed again at the kept level
            // as they change or age out (`response-cache-auto-expiration-in-seconds`).
            let level = if first && instances >= FAST_FIRST_BUILD_INSTANCES {
                FIRST_BUILD_LEVEL
            } else {
                Compression::default()
            };
            // A batch per lock for each encoding thread, so that all of them have runs.
            for batch in batches(&stale, UNLOCKED_BATCH_INSTANCES * encode_threads()) {
                let copied: Vec<_> = {
                    let registry = store.read();
                    batch
                        .iter()
                        .map(|run| S::copy_run(&registry, run))
                        .collect()
                };
                for run in encode_runs(copied, pieces, wanted, level, store.instant()) {
                    self.by_first_app
                        .insert(Arc::from(run.members[0].0.as_str()), run);
                }
            }
        }
    }

    /// The gzip body: head, the runs' deflate segments (compressing those not yet compressed)
    /// with stored separators laid out in pages ([`Pages`]), and the tail, in one member.
    /// Drops plain copies nobody wants.
    pub(super) fn gzip_body(&mut self, pieces: ApplicationsPieces, keep_plain: bool) -> CachedBody {
        CachedBody::of(self.gzip_parts(pieces, keep_plain, ONE_BUFFER_BYTES))
    }

    /// [`Runs::gzip_body`]'s member: in one buffer if it holds up to `one_buffer_bytes`, else
    /// in parts (the gzip header and the head, the pages, the tail with the trailer).
    fn gzip_parts(
        &mut self,
        pieces: ApplicationsPieces,
        keep_plain: bool,
        one_buffer_bytes: usize,
    ) -> Vec<Bytes> {
        for run in self.by_first_app.values_mut() {
            if !run.is_empty() {
                run.deflated();
            }
            if !keep_plain {
                run.plain = None;
            }
        }
        let head = deflate(&self.head);
        let runs: Vec<(&Bytes, &Checksum)> = self
            .order
            .iter()
            .map(|name| &self.by_first_app[&**name])
            .filter(|run| !run.is_empty())
            .map(|run| (run.segment(), &run.crc))
            .collect();
        let separators = runs.len().saturating_sub(1);
        let size = head.len()
            + runs.iter().map(|(segment, _)| segment.len()).sum::<usize>()
            + separators * stored_block_size(pieces.separator())
            + stored_block_size(pieces.tail());
        let one_buffer = size <= one_buffer_bytes;
        let mut gzip = GzipMember::with_capacity(if one_buffer { size } else { head.len() });
        gzip.push_deflated(&head, &crc_of(&self.head));
        if one_buffer {
            // No pages kept for a body this small: they would be a third copy of it.
            self.pages.clear();
            for (n, (segment, checksum)) in runs.iter().enumerate() {
                if n > 0 {
                    gzip.push_stored(pieces.separator());
                }
                gzip.push_deflated(segment, checksum);
            }
        } else {
            for (page, checksum) in self.pages.lay_out(&runs, pieces.separator()) {
                gzip.push_shared(page, &checksum);
            }
        }
        gzip.push_stored(pieces.tail());
        gzip.finish_parts()
    }

    /// The plain body: head, runs and separators as kept, shared with the runs rather than
    /// copied (runs kept only compressed are inflated once).
    pub(super) fn plain_body(&mut self, pieces: ApplicationsPieces) -> CachedBody {
        let separator = Bytes::from_static(pieces.separator());
        let mut parts = Vec::with_capacity(self.order.len() * 2 + 2);
        parts.push(self.head.clone());
        for name in &self.order {
            let run = self
                .by_first_app
                .get_mut(&**name)
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

/// Runs copied out of the registry, encoded and kept in the forms `wanted`, on up to
/// [`ENCODE_THREADS`] threads: runs are independent deflate segments, and a large build (the
/// first full fetch after a warm restart is a whole registry's encoding and compression) would
/// otherwise leave all cores but one idle while clients wait for it.
fn encode_runs(
    copied: Vec<(RunMembers, Vec<Application>)>,
    pieces: ApplicationsPieces,
    wanted: Wanted,
    level: Compression,
    at: Instant,
) -> Vec<Run> {
    let encode = move |part: Vec<(RunMembers, Vec<Application>)>| -> Vec<Run> {
        part.into_iter()
            .map(|(members, applications)| {
                let mut run = Run::encoded(members, encode_entries(&applications, pieces), at);
                run.keep(wanted, level);
                run
            })
            .collect()
    };
    let threads = encode_threads().min(copied.len());
    if threads <= 1 {
        return encode(copied);
    }
    // Dealt round-robin: neighbouring runs are alike in size, so each thread gets a fair share.
    let mut parts: Vec<Vec<_>> = (0..threads).map(|_| Vec::new()).collect();
    for (n, run) in copied.into_iter().enumerate() {
        parts[n % threads].push(run);
    }
    let own = parts.pop().expect("two parts or more");
    std::thread::scope(|scope| {
        let others: Vec<_> = parts
            .into_iter()
            .map(|part| scope.spawn(move || encode(part)))
            .collect();
        let mut runs = encode(own);
        for other in others {
            runs.extend(other.join().expect("encoding a run does not panic"));
        }
        runs
    })
}

/// Threads a large build encodes on: the machine's cores, up to [`ENCODE_THREADS`].
fn encode_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(ENCODE_THREADS))
}

/// The most threads one build encodes on: beyond a few, the copies under the registry lock
/// would be the bound, and other requests need cores too.
const ENCODE_THREADS: usize = 4;

/// The compression of a process's first build when it is very large: at 1,000,000 instances
/// zlib-rs' level 2 made the first full fetch after a warm restart 7.2 s instead of 9.5 s
/// from the spawn, into 1.21 times the bytes.
const FIRST_BUILD_LEVEL: Compression = Compression::new(2);
/// From how many instances a first build is compressed at [`FIRST_BUILD_LEVEL`]: below, a
/// level-6 build takes well under a second on two cores.
const FAST_FIRST_BUILD_INSTANCES: usize = 200_000;

/// A build leaves a stale remainder this small (about 5 ms of encoding) to its plan, under the
/// registry lock, rather than making another pass.
const LOCKED_ENCODE_INSTANCES: usize = 4_096;
/// Instances copied out of the registry per lock in [`Runs::encode_stale_unlocked`], for each
/// thread that encodes them.
const UNLOCKED_BATCH_INSTANCES: usize = 2_048;
/// Passes of [`Runs::encode_stale_unlocked`] before the plan takes what is left.
const UNLOCKED_PASSES: usize = 3;

#[cfg(test)]
mod tests;
