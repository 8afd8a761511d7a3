//! `PrometheusSd`: the HTTP SD answers, built from the store's read path and kept per
//! (registry version, query), their ETags, and the numbers [`PrometheusSd::status`] shows.
//!
//! An answer is built from one read under the registry lock: the registry version and a copy
//! of its UP instances (`Registry::applications_in_status`), taken together so that the body
//! and the ETag it is served with name the same registry. Filtering and encoding happen after
//! the lock is released. Bodies are kept for the current version only, for a bounded number
//! of distinct queries (a fleet's scrape configurations ask a handful), so each is built once
//! per registry change however many Prometheus servers ask. The cache's lock is never held
//! while the registry's is taken, nor the reverse.
//!
//! The ETag is strong: it names the server's start (versions restart at 1 with the process),
//! the registry version and the canonical query, so equal tags mean equal bodies.

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use heureka_core::{InstanceStatus, Millis};
use parking_lot::Mutex;

use super::query::SdQuery;
use super::targets::target_groups;
use crate::store::Store;

/// Distinct queries whose bodies are kept for the current registry version.
const MAX_KEPT_QUERIES: usize = 32;

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

/// Bodies of one registry version, oldest first.
#[derive(Debug, Default)]
struct Kept {
    version: u64,
    bodies: Vec<(String, Answer)>,
}

/// One answer: its body, the ETag naming it, how many targets it holds.
#[derive(Clone, Debug)]
pub(crate) struct Answer {
    pub(crate) body: Bytes,
    pub(crate) etag: String,
    pub(crate) targets: usize,
    /// Whether this request built it (else it was kept from an earlier one).
    pub(crate) built: bool,
}

/// What the dashboard may show of the endpoint: cheap to take, plain numbers.
#[allow(dead_code, reason = "read by the dashboard once it shows the endpoint")]
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

    /// The strong ETag of the answer to `query` at registry `version`.
    pub(crate) fn etag(&self, version: u64, query: &SdQuery) -> String {
        format!(
            "\"{:x}-{version}-{:016x}\"",
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
        let (version, applications) = {
            let registry = store.read();
            (
                registry.version(),
                registry.applications_in_status(InstanceStatus::Up),
            )
        };
        let groups = target_groups(&applications, query);
        let answer = Answer {
            body: Bytes::from(heureka_wire::encode_target_groups(&groups)),
            etag: self.etag(version, query),
            targets: groups.len(),
            built: true,
        };
        self.built.fetch_add(1, Ordering::Relaxed);
        self.last_targets
            .store(answer.targets as u64, Ordering::Relaxed);
        self.keep(version, key, &answer);
        answer
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

    /// Keeps `answer` unless a newer version's bodies are kept already (a slower build of an
    /// older registry finishing late).
    fn keep(&self, version: u64, key: String, answer: &Answer) {
        let mut kept = self.kept.lock();
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
    #[allow(dead_code, reason = "read by the dashboard once it shows the endpoint")]
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

/// FNV-1a, 64 bits: a hash that is the same in every process, so an ETag does not depend on a
/// randomly seeded hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests;
