//! Persistence (`heureka.persistence.*`, off by default): the registry kept on disk, so that a
//! node that restarts comes back with it instead of answering its first reads with an empty
//! registry (which makes every client drop every instance until they re-register).
//!
//! * **What is written**: every change but a heartbeat marks its instance dirty (a sink on the
//!   one write path, under the registry lock: a set insert, no I/O). Every
//!   `flush-interval` the flush task takes the dirty set, reads what the registry now keeps
//!   of each instance (`Registry::kept`: its stamped copy and lease times, or its tombstone),
//!   and writes them in one transaction synced to disk (`file.rs`). An instance written ten
//!   times in a window costs one row; a heartbeat costs nothing (a restored lease counts as
//!   renewed at the restore). At most one window of acknowledged writes is lost to a crash;
//!   a clean shutdown flushes once more after the last request.
//! * **Restore** happens in `AppState::new`, before the node answers anything: each row goes
//!   through `Registry::restore` (core `persisted.rs`), which records no change, in key order
//!   (`restore.rs`: rows are decoded on other threads meanwhile). Rows of removals past the
//!   tombstone retention, and rows that do not read, are deleted.
//! * **Damage** is survived (`file.rs`): a file that does not open, or is not Heureka's, is
//!   moved aside; a row that does not read is skipped; a file that fails midway is rebuilt
//!   from what was restored. Each is logged with what was lost; the node starts regardless.
//! * **A failed batch** (a full disk) loses nothing acknowledged: its instances go back to the
//!   dirty set, which keeps every instance changed since the last batch that reached the disk
//!   (one entry per instance: bounded by the registry). redb refuses every write on a handle
//!   that saw an I/O error, so the next attempt closes and reopens the file first, then writes
//!   all that is pending; attempts back off (one `flush-interval`, doubling up to
//!   [`RETRY_WAIT_CAP`]). The failure is logged once and the recovery once; meanwhile the
//!   health component is DOWN with the error.
//! * **Size** stays bounded by the live registry: removed instances' rows go when their
//!   tombstones would (the retention), and at start a file much larger than what it holds is
//!   rebuilt (redb reuses freed pages but never shrinks its file).

mod file;
mod restore;

use std::collections::{HashSet, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use heureka_core::{Change, ChangeKind, Kept, KeptInstance, Millis, Registry};
use heureka_wire::{encode_kept, PersistenceView};
use parking_lot::Mutex;

use crate::clock::{self, every, Instant};
use crate::config::PersistenceConfig;
use crate::metrics::Metrics;
use crate::store::{ChangeSink, Store};

pub(crate) use file::FileError;
use file::{Found, Key, RegistryFile};
use restore::Restore;

/// A rebuild at start when the file is this many times larger than the records it holds.
const REBUILD_FACTOR: u64 = 4;
/// ...and larger than this: small files are not worth rewriting.
const REBUILD_FLOOR_BYTES: u64 = 16 * 1024 * 1024;
/// How many instances are read from the registry per lock: requests wait for at most that many.
const READ_CHUNK: usize = 256;
/// The longest wait between two attempts while batches fail: a freed disk is written again
/// within this, and a disk that stays full costs one reopen this often.
const RETRY_WAIT_CAP: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub(crate) struct Persistence {
    flush_interval: Duration,
    /// Instances changed since the last flush (filled under the registry lock).
    dirty: Mutex<HashSet<Key>>,
    /// Rows of the batch being written: acknowledged, not yet on disk either.
    in_flight: AtomicUsize,
    file: Arc<RegistryFile>,
    /// One flush at a time (the task's and the shutdown's).
    flushing: tokio::sync::Mutex<()>,
    /// Rows of removed instances, oldest removal first, deleted once their tombstones expire.
    removals: Mutex<VecDeque<(Millis, Key)>>,
    tombstone_retention_ms: Millis,
    status: Mutex<Status>,
    /// Batches failing in a row, and when to try again.
    retry: Mutex<Retry>,
    metrics: Arc<Metrics>,
}

#[derive(Debug, Default)]
struct Retry {
    /// Failed attempts since the last batch that reached the disk (0: all is well).
    failures: u32,
    /// The flush task makes no attempt before this.
    not_before: Option<Instant>,
    /// The file had gone when it was reopened: the whole registry is written again.
    rewrite_all: bool,
}

#[derive(Debug, Default)]
struct Status {
    last_write: Option<Millis>,
    last_error: Option<String>,
    restored: u64,
}

impl Persistence {
    /// Opens the store in `config.dir` and restores what it holds into `registry` (which must
    /// be empty), logging what was restored and what was lost. Only a store another process
    /// holds is an error.
    pub(crate) fn open(
        config: &PersistenceConfig,
        dir: &str,
        registry: &mut Registry,
        now: Millis,
        tombstone_retention_ms: Millis,
        metrics: Arc<Metrics>,
    ) -> Result<Persistence, FileError> {
        let started = clock::instant();
        let (file, found) = RegistryFile::open(Path::new(dir), now)?;
        log_found(&file, &found);
        let mut restore = Restore::default();
        let read = catch_unwind(AssertUnwindSafe(|| restore.read(&file, registry, now)));
        if read.is_err() {
            restore.damaged = Some("the store's reader failed".to_owned());
        }
        let file = settle(file, &restore, registry)?;
        restore.log(
            file.path(),
            clock::instant().saturating_duration_since(started),
        );
        let persistence = Persistence {
            flush_interval: config.flush_interval,
            dirty: Mutex::new(HashSet::new()),
            in_flight: AtomicUsize::new(0),
            file: Arc::new(file),
            flushing: tokio::sync::Mutex::new(()),
            removals: Mutex::new(restore.removals.into_iter().collect()),
            tombstone_retention_ms,
            status: Mutex::new(Status {
                restored: restore.instances,
                ..Status::default()
            }),
            retry: Mutex::new(Retry::default()),
            metrics,
        };
        Ok(persistence)
    }

    /// What the actuator's health and the dashboard show.
    pub(crate) fn view(&self) -> PersistenceView {
        let status = self.status.lock();
        PersistenceView {
            enabled: true,
            path: self.file.path().display().to_string(),
            last_write: status.last_write,
            pending: self.pending() as u64,
            restored: status.restored,
            last_error: status.last_error.clone(),
            restore_checked: None,
        }
    }

    /// Instances changed and acknowledged whose rows are not on disk yet.
    fn pending(&self) -> usize {
        self.dirty.lock().len() + self.in_flight.load(Ordering::Acquire)
    }

    /// Writes what changed since the last flush, in one synced transaction. On failure the
    /// instances stay dirty, and the next attempt reopens the file before writing them.
    pub(crate) async fn flush(&self, store: &Store) {
        let _one_at_a_time = self.flushing.lock().await;
        let failing = self.retry.lock().failures > 0;
        if failing && !self.reopen(store).await {
            return;
        }
        let keys: Vec<Key> = {
            let mut dirty = self.dirty.lock();
            // Counted before the set empties, so that `pending` never reads 0 meanwhile.
            self.in_flight.store(dirty.len(), Ordering::Release);
            std::mem::take(&mut *dirty).into_iter().collect()
        };
        let now = store.now();
        let expired = self.expired_removals(store, now);
        // While failing, even an empty batch is written: it is what says the disk takes
        // writes again.
        if keys.is_empty() && expired.is_empty() && !failing {
            return;
        }
        let (puts, deletes) = self.rows_of(store, &keys, expired);
        let count = puts.len() + deletes.len();
        let file = Arc::clone(&self.file);
        let started = store.instant();
        let written = tokio::task::spawn_blocking(move || {
            let result = file.write(&puts, &deletes);
            (result, puts, deletes)
        })
        .await;
        let elapsed = store.instant().saturating_duration_since(started);
        let (result, puts, deletes) = match written {
            Ok(written) => written,
            Err(join) => (Err(FileError::Store(join.to_string())), Vec::new(), keys),
        };
        self.metrics
            .persistence_batch(count, elapsed, result.is_ok());
        match result {
            Ok(()) => {
                {
                    let mut status = self.status.lock();
                    status.last_write = Some(store.now());
                    status.last_error = None;
                }
                self.in_flight.store(0, Ordering::Release);
                let retry = std::mem::take(&mut *self.retry.lock());
                if retry.failures > 0 {
                    tracing::info!(
                        failed_attempts = retry.failures,
                        records = count,
                        "persistence: the store is written again; every write pending since the last batch that reached the disk is on it"
                    );
                }
            }
            Err(error) => {
                {
                    let mut dirty = self.dirty.lock();
                    dirty.extend(puts.into_iter().map(|(key, _)| key));
                    dirty.extend(deletes);
                    self.in_flight.store(0, Ordering::Release);
                }
                self.failed(store, &error);
            }
        }
    }

    /// Closes and reopens the file after a failed batch (redb writes nothing more on a handle
    /// that saw an I/O error). Whether it is open again.
    async fn reopen(&self, store: &Store) -> bool {
        let file = Arc::clone(&self.file);
        let gone = !file.path().exists();
        let reopened = tokio::task::spawn_blocking(move || file.reopen()).await;
        let error = match reopened {
            Ok(Ok(())) => {
                let rewrite_all = std::mem::take(&mut self.retry.lock().rewrite_all);
                if gone || rewrite_all {
                    // A file made again holds nothing: everything the registry keeps is pending.
                    let kept = store.read().kept_all();
                    let mut dirty = self.dirty.lock();
                    dirty.extend(kept.into_iter().map(|kept| (kept.copy.app, kept.copy.id)));
                }
                return true;
            }
            Ok(Err(error)) => error,
            Err(join) => FileError::Store(join.to_string()),
        };
        self.retry.lock().rewrite_all |= gone;
        self.metrics
            .persistence_batch(self.pending(), Duration::ZERO, false);
        self.failed(store, &error);
        false
    }

    /// Books a failed attempt: the error for the health component, the time of the next
    /// attempt, and the log line (the first failure only: a full disk fails every attempt).
    fn failed(&self, store: &Store, error: &FileError) {
        self.status.lock().last_error = Some(error.to_string());
        let failures = {
            let mut retry = self.retry.lock();
            retry.failures = retry.failures.saturating_add(1);
            retry.not_before =
                Some(store.instant() + retry_wait(self.flush_interval, retry.failures));
            retry.failures
        };
        if failures == 1 {
            tracing::error!(
                %error,
                records = self.pending(),
                "persistence: a batch did not reach the disk; the acknowledged writes stay pending, and the store is reopened and written again once it can be (attempts back off)"
            );
        } else {
            tracing::debug!(%error, failures, "persistence: still not written");
        }
    }

    /// Whether the flush task should wait rather than attempt (backing off after failures).
    fn backing_off(&self, now: Instant) -> bool {
        self.retry.lock().not_before.is_some_and(|at| now < at)
    }

    /// The rows of `keys` as the registry now keeps them: a record to write, or a row to
    /// delete (the registry keeps nothing of it any more). Read in chunks under the lock;
    /// encoded outside it.
    fn rows_of(
        &self,
        store: &Store,
        keys: &[Key],
        mut deletes: Vec<Key>,
    ) -> (Vec<(Key, Vec<u8>)>, Vec<Key>) {
        let mut kept: Vec<(Key, KeptInstance)> = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(READ_CHUNK) {
            let registry = store.read();
            for key in chunk {
                match registry.kept(&key.0, &key.1) {
                    Some(instance) => kept.push((key.clone(), instance)),
                    None => deletes.push(key.clone()),
                }
            }
        }
        let mut removals = Vec::new();
        let puts = kept
            .into_iter()
            .map(|(key, instance)| {
                if let Kept::Removed { at, .. } = instance.kept {
                    removals.push((at, key.clone()));
                }
                let record = encode_kept(&instance);
                (key, record)
            })
            .collect();
        self.removals.lock().extend(removals);
        (puts, deletes)
    }

    /// Rows of removals whose tombstones the registry has since forgotten.
    fn expired_removals(&self, store: &Store, now: Millis) -> Vec<Key> {
        let mut due = Vec::new();
        {
            let mut removals = self.removals.lock();
            while let Some((at, _)) = removals.front() {
                if now - *at <= self.tombstone_retention_ms {
                    break;
                }
                if let Some((_, key)) = removals.pop_front() {
                    due.push(key);
                }
            }
        }
        if due.is_empty() {
            return due;
        }
        let registry = store.read();
        due.retain(|(app, id)| registry.kept(app, id).is_none());
        due
    }
}

/// Marks every instance a change touched dirty; heartbeats touch nothing kept.
impl ChangeSink for Persistence {
    fn publish(&self, change: &Change, _registry: &Registry) {
        if change.kind == ChangeKind::Renewed {
            return;
        }
        let pending = {
            let mut dirty = self.dirty.lock();
            dirty.insert((change.app.to_string(), change.id.to_string()));
            dirty.len()
        };
        self.metrics
            .persistence_pending(pending + self.in_flight.load(Ordering::Acquire));
    }
}

/// The flush task: a batch every `flush-interval`.
pub(crate) async fn flush_every_interval(persistence: Arc<Persistence>, store: Arc<Store>) {
    let mut timer = every(persistence.flush_interval.max(Duration::from_millis(10)));
    loop {
        timer.tick().await;
        if persistence.backing_off(store.instant()) {
            continue;
        }
        persistence.flush(&store).await;
        persistence
            .metrics
            .persistence_pending(persistence.pending());
    }
}

/// The wait before attempt `failures + 1`: one flush interval after the first failure,
/// doubling, at most [`RETRY_WAIT_CAP`].
fn retry_wait(flush_interval: Duration, failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    flush_interval
        .saturating_mul(1 << doublings)
        .min(RETRY_WAIT_CAP)
}

/// After the reading: rebuilds a damaged (or much oversized) file from what the registry now
/// holds, else deletes the rows that will never restore.
fn settle(
    file: RegistryFile,
    restore: &Restore,
    registry: &Registry,
) -> Result<RegistryFile, FileError> {
    let oversized = file.size() > REBUILD_FLOOR_BYTES.max(REBUILD_FACTOR * restore.record_bytes);
    if restore.damaged.is_none() && !oversized {
        file.write(&[], &restore.stale)?;
        return Ok(file);
    }
    let before = file.size();
    let rows: Vec<(Key, Vec<u8>)> = registry
        .kept_all()
        .into_iter()
        .map(|kept| {
            (
                (kept.copy.app.clone(), kept.copy.id.clone()),
                encode_kept(&kept),
            )
        })
        .collect();
    let file = file.rebuild(&rows)?;
    tracing::info!(
        rows = rows.len(),
        bytes_before = before,
        bytes_after = file.size(),
        "persistence: store rebuilt from the restored registry"
    );
    Ok(file)
}

fn log_found(file: &RegistryFile, found: &Found) {
    let path = file.path().display();
    match found {
        Found::Existing => tracing::info!(%path, "persistence: restoring the registry"),
        Found::New => tracing::info!(%path, "persistence: new store, nothing to restore"),
        Found::MovedAside { reason, to } => tracing::error!(
            %path,
            %reason,
            moved_to = %to.display(),
            "persistence: the store could not be read and was moved aside; nothing was restored from it"
        ),
    }
}

#[cfg(test)]
mod tests;
