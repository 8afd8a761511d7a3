//! `PrometheusSd`: the HTTP SD answers, built from the store's read path and kept per
//! (registry version, query), their ETags, and the numbers [`PrometheusSd::status`] shows.
//!
//! An answer is built from one read under the registry lock: the registry version, each
//! selected application's version, and a copy (`Registry::application`, the document a
//! reader is served) of each application that changed since this query's last answer. Its
//! groups are encoded after the lock is released, kept per query and application (a piece),
//! and the body is the pieces joined: a registration re-encodes its own application, not the
//! registry, as the full fetch's cache does. Whole bodies are kept for the current version
//! only, for a bounded number of distinct queries (a fleet's scrape configurations ask a
//! handful), so each is built once per registry change however many Prometheus servers ask.
//! The cache's lock is never held while the registry's is taken, nor the reverse.
//!
//! The ETag is strong: it names the server's start (versions restart at 1 with the process),
//! the registry version and the canonical query, so equal tags mean equal bodies.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use heureka_core::{Application, Millis};
use parking_lot::Mutex;

use super::query::SdQuery;
use super::targets::targets;
use crate::cache::{crc_of, deflate, CachedBody, Checksum, GzipMember};
use crate::store::Store;

/// Distinct queries whose bodies and pieces are kept: a fleet's scrape configurations ask a
/// handful, and each kept query may hold an encoding of the whole registry (about 1 KB per
/// instance), so the bound is also one on memory.
const MAX_KEPT_QUERIES: usize = 8;

/// The Prometheus HTTP SD endpoint's state: its switch, its kept bodies, its counts.
#[derive(Debug)]
pub(crate) struct PrometheusSd {
    enabled: bool,
    /// When this server started: part of every ETag.
    epoch: Millis,
    kept: Mutex<Kept>,
    built: AtomicU64,
    reused: AtomicU64,
    not_modified: AtomicU64,
    last_targets: AtomicU64,
}

/// Whole bodies of one registry version, and each query's pieces, oldest query first.
#[derive(Debug, Default)]
struct Kept {
    version: u64,
    bodies: Vec<(String, Answer)>,
    pieces: Vec<(String, Pieces)>,
}

/// One query's encoded groups, per application, with the application version they show;
/// shared with the answers joined from them.
type Pieces = HashMap<String, Arc<Piece>>;

#[derive(Debug)]
struct Piece {
    version: u64,
    /// The application's groups, comma-separated; empty when none of its instances is a
    /// target.
    groups: Bytes,
    targets: usize,
    /// The same as a raw deflate segment with the CRC of `groups`, made when a gzip answer
    /// first needs it: Prometheus does not ask for gzip, so its answers never pay for it.
    deflated: OnceLock<(Bytes, Checksum)>,
}

impl Piece {
    fn deflated(&self) -> &(Bytes, Checksum) {
        self.deflated
            .get_or_init(|| (Bytes::from(deflate(&self.groups)), crc_of(&self.groups)))
    }
}

/// One answer: its body, the ETag naming it, how many targets it holds, and its gzip body
/// when a client asks for it.
#[derive(Clone, Debug)]
pub(crate) struct Answer {
    /// The pieces it was joined from, sent back to back without being copied into one buffer.
    pub(crate) body: CachedBody,
    /// Its pieces, in order, for the gzip body.
    pieces: Arc<[Arc<Piece>]>,
    /// The gzip body, made once for every request sharing this answer.
    gzip: Arc<OnceLock<Bytes>>,
    /// The plain body's ETag, and the gzip body's.
    pub(crate) etag: String,
    pub(crate) gzip_etag: String,
    pub(crate) targets: usize,
    /// Whether this request built it (else it was kept from an earlier one).
    pub(crate) built: bool,
}

/// What the dashboard may show of the endpoint: cheap to take, plain numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PrometheusSdStatus {
    /// `heureka.prometheus-sd.enabled`.
    pub(crate) enabled: bool,
    /// Answers built (one per registry change and distinct query asked).
    pub(crate) answers_built: u64,
    /// Answers served from a body kept for the same version and query.
    pub(crate) answers_reused: u64,
    /// Conditional requests answered 304 Not Modified, no body built.
    pub(crate) not_modified: u64,
    /// Targets in the last answer built.
    pub(crate) last_targets: u64,
}

impl PrometheusSd {
    pub(crate) fn new(enabled: bool, epoch: Millis) -> PrometheusSd {
        PrometheusSd {
            enabled,
            epoch,
            kept: Mutex::new(Kept::default()),
            built: AtomicU64::new(0),
            reused: AtomicU64::new(0),
            not_modified: AtomicU64::new(0),
            last_targets: AtomicU64::new(0),
        }
    }

    /// `heureka.prometheus-sd.enabled`: off, the endpoint answers 404.
    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// The strong ETag of the answer to `query` at registry `version`, plain or gzipped (two
    /// representations, two tags).
    pub(crate) fn etag(&self, version: u64, query: &SdQuery, gzip: bool) -> String {
        let encoding = if gzip { "-gzip" } else { "" };
        format!(
            "\"{:x}-{version}-{:016x}{encoding}\"",
            self.epoch,
            fnv1a(query.key().as_bytes())
        )
    }

    /// Counts a conditional request answered 304.
    pub(crate) fn answered_not_modified(&self) {
        self.not_modified.fetch_add(1, Ordering::Relaxed);
    }

    /// The answer to `query` for the registry as it is now: kept, or built and kept.
    pub(crate) fn answer(&self, store: &Store, query: &SdQuery) -> Answer {
        let key = query.key();
        let version = store.read().version();
        if let Some(answer) = self.kept_answer(version, &key) {
            self.reused.fetch_add(1, Ordering::Relaxed);
            return answer;
        }
        let mut pieces = self.take_pieces(&key);
        let (version, selected, changed) = read_changes(store, query, &pieces);
        for application in &changed {
            let targets = targets(std::slice::from_ref(application), query);
            let mut groups = Vec::with_capacity(targets.len() * heureka_wire::GROUP_BYTES);
            heureka_wire::push_target_groups(&mut groups, &targets);
            let name = application.name.clone();
            // Kept even when empty: an application none of whose instances is a target is
            // not copied again until it changes.
            let piece = Piece {
                version: selected[&name],
                groups: Bytes::from(groups),
                targets: targets.len(),
                deflated: OnceLock::new(),
            };
            pieces.insert(name, Arc::new(piece));
        }
        // Applications gone from the registry (or no longer selected) leave the answer.
        pieces.retain(|name, _| selected.contains_key(name));
        let answer = self.joined(version, query, &pieces);
        self.built.fetch_add(1, Ordering::Relaxed);
        self.last_targets
            .store(answer.targets as u64, Ordering::Relaxed);
        self.keep(version, key, &answer, pieces);
        answer
    }

    /// The body: every application's piece, in name order, in one list. The pieces are
    /// shared, not copied: at 10,000 instances copying them into one buffer cost more than
    /// encoding the application that changed.
    fn joined(&self, version: u64, query: &SdQuery, pieces: &Pieces) -> Answer {
        let mut names: Vec<&String> = pieces.keys().collect();
        names.sort_unstable();
        let in_order: Vec<Arc<Piece>> = names
            .iter()
            .map(|name| pieces[*name].clone())
            .filter(|piece| piece.targets > 0)
            .collect();
        let mut parts = Vec::with_capacity(2 * in_order.len() + 2);
        parts.push(Bytes::from_static(b"["));
        for (n, piece) in in_order.iter().enumerate() {
            if n > 0 {
                parts.push(Bytes::from_static(b","));
            }
            parts.push(piece.groups.clone());
        }
        parts.push(Bytes::from_static(b"]"));
        Answer {
            body: CachedBody::of(parts),
            targets: in_order.iter().map(|piece| piece.targets).sum(),
            pieces: in_order.into(),
            gzip: Arc::default(),
            etag: self.etag(version, query, false),
            gzip_etag: self.etag(version, query, true),
            built: true,
        }
    }

    fn kept_answer(&self, version: u64, key: &str) -> Option<Answer> {
        let kept = self.kept.lock();
        if kept.version != version {
            return None;
        }
        let (_, answer) = kept.bodies.iter().find(|(kept_key, _)| kept_key == key)?;
        Some(Answer {
            built: false,
            ..answer.clone()
        })
    }

    /// This query's pieces, taken out while it builds (a concurrent build of the same query
    /// starts from none, and the later of the two is kept).
    fn take_pieces(&self, key: &str) -> Pieces {
        let mut kept = self.kept.lock();
        match kept.pieces.iter().position(|(kept_key, _)| kept_key == key) {
            Some(at) => kept.pieces.remove(at).1,
            None => Pieces::new(),
        }
    }

    /// Keeps `answer` unless a newer version's bodies are kept already (a slower build of an
    /// older registry finishing late), and the pieces it was joined from.
    fn keep(&self, version: u64, key: String, answer: &Answer, pieces: Pieces) {
        let mut kept = self.kept.lock();
        if kept.pieces.len() == MAX_KEPT_QUERIES {
            kept.pieces.remove(0);
        }
        kept.pieces.push((key.clone(), pieces));
        if version < kept.version {
            return;
        }
        if version > kept.version {
            kept.version = version;
            kept.bodies.clear();
        }
        if kept.bodies.iter().any(|(kept_key, _)| *kept_key == key) {
            return;
        }
        if kept.bodies.len() == MAX_KEPT_QUERIES {
            kept.bodies.remove(0);
        }
        kept.bodies.push((key, answer.clone()));
    }

    /// What the dashboard shows of the endpoint.
    pub(crate) fn status(&self) -> PrometheusSdStatus {
        PrometheusSdStatus {
            enabled: self.enabled,
            answers_built: self.built.load(Ordering::Relaxed),
            answers_reused: self.reused.load(Ordering::Relaxed),
            not_modified: self.not_modified.load(Ordering::Relaxed),
            last_targets: self.last_targets.load(Ordering::Relaxed),
        }
    }
}

impl Answer {
    /// The body as one gzip member: the pieces' deflate segments (each made once, when first
    /// needed) with the separators as stored blocks, so nothing is compressed twice.
    pub(crate) fn gzip_body(&self) -> Bytes {
        self.gzip
            .get_or_init(|| {
                let mut gzip = GzipMember::new();
                gzip.push_stored(b"[");
                for (n, piece) in self.pieces.iter().enumerate() {
                    if n > 0 {
                        gzip.push_stored(b",");
                    }
                    let (segment, crc) = piece.deflated();
                    gzip.push_deflated(segment, crc);
                }
                gzip.push_stored(b"]");
                gzip.finish()
            })
            .clone()
    }
}

/// Under the registry lock, once: the registry version, the version of every application
/// `query` selects, and a copy of those whose version differs from their piece's.
fn read_changes(
    store: &Store,
    query: &SdQuery,
    pieces: &Pieces,
) -> (u64, HashMap<String, u64>, Vec<Application>) {
    let registry = store.read();
    let mut selected = HashMap::new();
    let mut changed = Vec::new();
    for app in registry.application_versions() {
        if !query.selects_app(app.name) {
            continue;
        }
        selected.insert(app.name.to_owned(), app.version);
        let unchanged = pieces
            .get(app.name)
            .is_some_and(|piece| piece.version == app.version);
        if !unchanged {
            changed.extend(registry.application(app.name));
        }
    }
    (registry.version(), selected, changed)
}

/// FNV-1a, 64 bits: a hash that is the same in every process, so an ETag does not depend on a
/// randomly seeded hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests;
