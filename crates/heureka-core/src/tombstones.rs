//! What the registry keeps of instances it no longer holds: their parts and stamps, so that a
//! copy older than their removal, arriving late from a peer, cannot bring them back.
//!
//! A **cancel** is a write: its tombstone carries the cancel's stamp (and the stamps, not the
//! document, of what it removed: tombstones of mass deregistrations stay small), and only a
//! registration stamped later revives the instance (`merge.rs`). An **eviction** is not a write but this
//! server's own judgement that a lease lapsed (another server may still hold the instance,
//! renewed): its tombstone stamps nothing and keeps the instance's parts, the operator's
//! override among them, so that when the instance comes back (a peer's copy, the client's
//! registration after a 404) it comes back with the override it had.
//!
//! Tombstones are kept for `tombstone_retention_ms` (Heureka's
//! `heureka.replication.tombstone-retention-ms`): at least as long as an older copy can still
//! be on its way (a lease, replication's retry horizon and an anti-entropy interval).

use crate::maps::HashMap;
use crate::merge::Parts;
use crate::model::Millis;

/// Why the registry no longer holds an instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// Cancelled (by its client, or a peer's copy of a cancel): the parts' `removed` stamp
    /// says when.
    Cancelled,
    /// Evicted here when its lease lapsed, last renewed at `last_renewal`.
    Evicted { last_renewal: Millis },
}

/// One removed instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tombstone {
    pub parts: Parts,
    pub removal: Removal,
    /// When this server removed it (its wall clock), for retention.
    pub(crate) at: Millis,
}

/// Tombstones by upper-cased app name and instance id.
#[derive(Debug, Default)]
pub(crate) struct Tombstones {
    entries: HashMap<(String, String), Tombstone>,
}

impl Tombstones {
    pub(crate) fn get(&self, app: &str, id: &str) -> Option<&Tombstone> {
        // The key is owned; a lookup allocates, which removals and merges can afford.
        self.entries.get(&(app.to_owned(), id.to_owned()))
    }

    pub(crate) fn insert(&mut self, app: &str, id: &str, tombstone: Tombstone) {
        self.entries
            .insert((app.to_owned(), id.to_owned()), tombstone);
    }

    pub(crate) fn remove(&mut self, app: &str, id: &str) -> Option<Tombstone> {
        if self.entries.is_empty() {
            return None;
        }
        self.entries.remove(&(app.to_owned(), id.to_owned()))
    }

    /// Forgets tombstones older than `retention_ms`.
    pub(crate) fn purge(&mut self, now: Millis, retention_ms: Millis) {
        self.entries
            .retain(|_, tombstone| now - tombstone.at <= retention_ms);
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&(String, String), &Tombstone)> {
        self.entries.iter()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}
