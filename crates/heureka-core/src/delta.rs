//! The recently-changed queue behind `GET /apps/delta`, and `apps__hashcode` (§5, §6.9).
//!
//! Eureka's `recentlyChangedQueue` holds references to leases, so a delta shows each instance
//! as it is when the payload is generated. We keep `(time, app, id)` items instead and look the
//! lease up at render time; only a cancel has to keep its own copy, because the lease is gone
//! from the registry by then. Rendering keeps the latest item per (app, id), which is what the
//! Java payload amounts to.

use std::collections::{BTreeMap, HashMap};

use crate::lease::Lease;
use crate::model::{InstanceStatus, Millis};
use crate::stored::Name;

/// `apps__hashcode` over a set of statuses: `STATUS_count_` per status present, by status name.
///
/// Eureka's `Applications.getReconcileHashCode`: clients recompute it after applying a delta
/// and do a full fetch when it differs, so only statuses count, never metadata.
pub fn apps_hashcode<'a>(statuses: impl IntoIterator<Item = &'a InstanceStatus>) -> String {
    let mut counts = [0usize; InstanceStatus::BY_NAME.len()];
    for status in statuses {
        counts[by_name_index(*status)] += 1;
    }
    let mut hash = String::new();
    for (status, count) in InstanceStatus::BY_NAME.iter().zip(counts) {
        if count > 0 {
            hash.push_str(&format!("{}_{}_", status.as_str(), count));
        }
    }
    hash
}

fn by_name_index(status: InstanceStatus) -> usize {
    InstanceStatus::BY_NAME
        .iter()
        .position(|candidate| *candidate == status)
        .expect("BY_NAME lists every status")
}

/// Eureka's `recentlyChangedQueue`, oldest item first, holding only the latest item per
/// instance.
///
/// Only the latest item per instance is ever served, so an instance's earlier item is dropped
/// when a new one arrives. Without that, a loop of registers and cancels of one instance kept a
/// full copy of it per cancel for the whole retention window, memory growing with the write
/// rate instead of with the registry. Removing the earlier item does not change what readers
/// see or when the survivor is purged, since retention is measured from the newest item.
#[derive(Debug, Default)]
pub(crate) struct RecentlyChanged {
    /// Items by sequence number, which orders them as they were queued.
    items: BTreeMap<u64, ChangeItem>,
    /// The sequence number of each instance's item, by (app, id): the item's own names,
    /// shared, not copies.
    latest: HashMap<(Name, Name), u64>,
    next_seq: u64,
}

#[derive(Debug)]
pub(crate) struct ChangeItem {
    /// When the change was queued; retention is measured from here.
    at: Millis,
    pub(crate) app: Name,
    pub(crate) id: Name,
    pub(crate) entry: DeltaEntry,
}

#[derive(Debug)]
pub(crate) enum DeltaEntry {
    /// Register or status change: show the registry's lease as it is at render time.
    Live,
    /// Cancel or eviction: the lease as it was when removed, `actionType` DELETED.
    Deleted(Box<Lease>),
}

impl RecentlyChanged {
    pub(crate) fn push_live(&mut self, app: Name, id: Name, now: Millis) {
        self.push(app, id, DeltaEntry::Live, now);
    }

    pub(crate) fn push_deleted(&mut self, app: Name, id: Name, lease: Lease, now: Millis) {
        self.push(app, id, DeltaEntry::Deleted(Box::new(lease)), now);
    }

    fn push(&mut self, app: Name, id: Name, entry: DeltaEntry, now: Millis) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let key = (Name::clone(&app), Name::clone(&id));
        if let Some(earlier) = self.latest.insert(key, seq) {
            self.items.remove(&earlier);
        }
        let item = ChangeItem {
            at: now,
            app,
            id,
            entry,
        };
        self.items.insert(seq, item);
    }

    /// Drops items older than `now - retention_ms` from the head, stopping at the first young
    /// one, as Eureka's `deltaRetentionTimer` does. Returns how many were dropped.
    pub(crate) fn purge(&mut self, now: Millis, retention_ms: Millis) -> usize {
        let cutoff = now - retention_ms;
        let mut purged = 0;
        while let Some(entry) = self.items.first_entry() {
            if entry.get().at >= cutoff {
                break;
            }
            let item = entry.remove();
            self.latest.remove(&(item.app, item.id));
            purged += 1;
        }
        purged
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// The latest item per (app, id), in the order those items were queued: a later change to
    /// the same instance replaces the earlier one and moves to the end, as in Eureka's payload.
    pub(crate) fn latest(&self) -> impl Iterator<Item = &ChangeItem> {
        self.items.values()
    }
}

#[cfg(test)]
mod tests;
