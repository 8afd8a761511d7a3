//! Reading the store back at start. Decoding a row is most of a restore's work (two thirds
//! of it at 100,000 instances, and a million take seconds), and rows decode independently:
//! this thread reads the file in key order and hands chunks of rows to decoding threads, then
//! restores what they decoded in the same key order, while they decode the next chunks.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use heureka_core::{Kept, KeptInstance, Millis, Registry, Restored};
use heureka_wire::{decode_kept, DecodeError};

use super::file::{Key, RegistryFile};

/// Rows handed to a decoding thread at once: about a megabyte of records.
pub(super) const CHUNK_ROWS: usize = 512;
/// Chunks queued for each decoding thread: enough that it never waits for this one, few
/// enough that the rows read ahead stay a few megabytes.
const QUEUED_CHUNKS: usize = 2;
/// The most decoding threads: beyond them, reading the file and restoring is the bound.
const MAX_DECODERS: usize = 4;

/// What a restore found, for its log line.
#[derive(Debug, Default)]
pub(super) struct Restore {
    pub(super) instances: u64,
    pub(super) tombstones: u64,
    pub(super) forgotten: u64,
    pub(super) unreadable: u64,
    pub(super) refused: u64,
    pub(super) first_problem: Option<String>,
    /// The reading stopped at a damaged part of the file.
    pub(super) damaged: Option<String>,
    pub(super) record_bytes: u64,
    /// Rows to delete: expired removals and records that will never restore.
    pub(super) stale: Vec<Key>,
    pub(super) removals: Vec<(Millis, Key)>,
}

/// A row as read from the file, owned, on its way to a decoding thread.
struct Read {
    key: Key,
    record: Vec<u8>,
}

/// A row decoded, on its way back to be restored.
struct Decoded {
    key: Key,
    record_len: usize,
    kept: Result<KeptInstance, DecodeError>,
}

impl Restore {
    /// Restores every row of `file` into `registry`, in key order, noting what does not
    /// restore; stops at a row that does not read (the damage).
    pub(super) fn read(&mut self, file: &RegistryFile, registry: &mut Registry, now: Millis) {
        let decoders =
            std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_DECODERS));
        std::thread::scope(|scope| {
            let (decoded_tx, decoded_rx) = mpsc::channel();
            let queues: Vec<_> = (0..decoders)
                .map(|_| {
                    let (queue, chunks) = mpsc::sync_channel::<(usize, Vec<Read>)>(QUEUED_CHUNKS);
                    let decoded = decoded_tx.clone();
                    scope.spawn(move || {
                        for (seq, chunk) in chunks {
                            // The receiver goes only when this thread's restore failed.
                            let _ = decoded.send((seq, decode_all(chunk)));
                        }
                    });
                    queue
                })
                .collect();
            drop(decoded_tx);
            let mut in_order = InOrder::default();
            let mut chunk = Vec::with_capacity(CHUNK_ROWS);
            let mut sent = 0;
            let mut send = |chunk: Vec<Read>, restore: &mut Restore, registry: &mut Registry| {
                queues[sent % decoders]
                    .send((sent, chunk))
                    .expect("decoding threads run until their queue closes");
                sent += 1;
                while let Ok((seq, decoded)) = decoded_rx.try_recv() {
                    in_order.arrived(seq, decoded, |row| restore.restore(row, registry, now));
                }
            };
            file.for_each(|row| match row {
                Ok((app, id, record)) => {
                    chunk.push(Read {
                        key: (app.to_owned(), id.to_owned()),
                        record: record.to_vec(),
                    });
                    if chunk.len() == CHUNK_ROWS {
                        let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK_ROWS));
                        send(full, self, registry);
                    }
                }
                Err(error) => self.damaged = Some(error),
            });
            if !chunk.is_empty() {
                send(chunk, self, registry);
            }
            drop(queues);
            for (seq, decoded) in decoded_rx {
                in_order.arrived(seq, decoded, |row| self.restore(row, registry, now));
            }
        });
    }

    /// Restores one decoded row, or notes why not.
    fn restore(&mut self, row: Decoded, registry: &mut Registry, now: Millis) {
        let Decoded {
            key,
            record_len,
            kept,
        } = row;
        self.record_bytes += record_len as u64;
        let kept = match kept {
            Ok(kept) => kept,
            Err(error) => {
                self.unreadable += 1;
                self.note(format!("{}/{}: {error}", key.0, key.1));
                self.stale.push(key);
                return;
            }
        };
        let removed_at = match kept.kept {
            Kept::Removed { at, .. } => Some(at),
            Kept::Lease { .. } => None,
        };
        match registry.restore(kept, now) {
            Restored::Lease => self.instances += 1,
            Restored::Tombstone => {
                self.tombstones += 1;
                self.removals.push((removed_at.unwrap_or(now), key));
            }
            Restored::Expired => {
                self.forgotten += 1;
                self.stale.push(key);
            }
            Restored::Refused(why) => {
                self.refused += 1;
                self.note(format!("{}/{}: {why}", key.0, key.1));
                self.stale.push(key);
            }
        }
    }

    fn note(&mut self, problem: String) {
        if self.first_problem.is_none() {
            self.first_problem = Some(problem);
        }
    }

    pub(super) fn log(&self, path: &Path, elapsed: Duration) {
        if let Some(damage) = &self.damaged {
            tracing::error!(
                path = %path.display(),
                %damage,
                restored = self.instances,
                "persistence: the store is damaged; what followed the damage is lost; restored what came before it and rebuilt the store"
            );
        }
        if self.unreadable + self.refused > 0 {
            tracing::warn!(
                unreadable = self.unreadable,
                refused = self.refused,
                first = self.first_problem.as_deref().unwrap_or(""),
                "persistence: records not restored (dropped from the store)"
            );
        }
        tracing::info!(
            instances = self.instances,
            tombstones = self.tombstones,
            forgotten = self.forgotten,
            unreadable = self.unreadable,
            refused = self.refused,
            elapsed_ms = elapsed.as_millis() as u64,
            path = %path.display(),
            "registry restored"
        );
    }
}

fn decode_all(chunk: Vec<Read>) -> Vec<Decoded> {
    chunk
        .into_iter()
        .map(|Read { key, record }| Decoded {
            kept: decode_kept(&record),
            record_len: record.len(),
            key,
        })
        .collect()
}

/// Decoded chunks back in the order they were read: a chunk that arrives early waits for
/// those before it.
#[derive(Default)]
struct InOrder {
    next: usize,
    early: BTreeMap<usize, Vec<Decoded>>,
}

impl InOrder {
    fn arrived(&mut self, seq: usize, chunk: Vec<Decoded>, mut restore: impl FnMut(Decoded)) {
        self.early.insert(seq, chunk);
        while let Some(chunk) = self.early.remove(&self.next) {
            chunk.into_iter().for_each(&mut restore);
            self.next += 1;
        }
    }
}
