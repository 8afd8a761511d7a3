//! The recently-changed queue behind `GET /apps/delta`, and `apps__hashcode` (§5, §6.9).
//!
//! Eureka's `recentlyChangedQueue` holds references to leases, so a delta shows each instance
//! as it is when the payload is generated. We keep `(time, app, id)` items instead and look the
//! lease up at render time; only a cancel has to keep its own copy, because the lease is gone
//! from the registry by then. Rendering keeps the latest item per (app, id), which is what the
//! Java payload amounts to.

use std::collections::BTreeMap;

use crate::lease::Lease;
use crate::model::{InstanceStatus, Millis};
use crate::stored::Name;

/// `apps__hashcode` over a set of statuses: `STATUS_count_` per status present, by status name.
///
/// Eureka's `Applications.getReconcileHashCode`: clients recompute it after applying a delta
/// and do a full fetch when it differs, so only statuses count, never metadata.
pub fn apps_hashcode<'a>(statuses: impl IntoIterator<Item = &'a InstanceStatus>) -> String {
    let mut counts = StatusCounts::default();
    for status in statuses {
        counts.changed(None, Some(*status));
    }
    counts.hashcode()
}

/// How many instances hold each status, for [`apps_hashcode`].
///
/// The registry keeps one up to date as writes happen (`Registry::record`), so the hash of
/// the whole registry, which every full and delta document carries, costs a step per status
/// instead of a walk over every lease: 85 ms at 1,000,000 instances, under the registry lock.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct StatusCounts {
    by_name: [usize; InstanceStatus::BY_NAME.len()],
}

impl StatusCounts {
    /// One instance's status went from `before` to `after`; None is "not registered".
    pub(crate) fn changed(
        &mut self,
        before: Option<InstanceStatus>,
        after: Option<InstanceStatus>,
    ) {
        if before == after {
            return;
        }
        if let Some(status) = before {
            self.by_name[by_name_index(status)] -= 1;
        }
        if let Some(status) = after {
            self.by_name[by_name_index(status)] += 1;
        }
    }

    /// How many instances are counted, whatever their status.
    pub(crate) fn total(&self) -> usize {
        self.by_name.iter().sum()
    }

    /// `apps__hashcode` of the counted instances.
    pub(crate) fn hashcode(&self) -> String {
        let mut hash = String::new();
        for (status, count) in InstanceStatus::BY_NAME.iter().zip(self.by_name) {
            if count > 0 {
                hash.push_str(&format!("{}_{}_", status.as_str(), count));
            }
        }
        hash
    }
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
///
/// Finding an instance's earlier item takes no registry-sized index: a registered instance's
/// lease keeps the number of its item ([`Lease::delta_seq`]), and only removed instances, which
/// have no lease, are looked up here. A hash map with an entry per instance used to do this,
/// and each of its doublings rehashed the whole registry under the registry lock: 0.2 s at
/// 460,000 instances (`bench/results/regcpu.md`).
#[derive(Debug, Default)]
pub(crate) struct RecentlyChanged {
    /// Items by sequence number, which orders them as they were queued.
    items: BTreeMap<u64, ChangeItem>,
    /// The sequence number of each queued DELETED item, by (app, id): the item's own names,
    /// shared, not copies. A removed instance's latest item is its DELETED one until it
    /// registers again, so this holds the instances removed within the retention window. A
    /// B-tree, so that a mass eviction grows it node by node, never in one rehash.
    deleted: BTreeMap<(Name, Name), u64>,
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
    /// Queues a live item for a registered instance and returns its sequence number, for the
    /// lease to keep. `earlier` is the number the lease kept, if any: that item goes.
    pub(crate) fn push_live(
        &mut self,
        app: Name,
        id: Name,
        earlier: Option<u64>,
        now: Millis,
    ) -> u64 {
        match earlier {
            Some(seq) => self.drop_item(seq),
            // A lease with no number is new, and the instance may have been removed within the
            // window: its DELETED item goes. (A lease with one never has a DELETED item.)
            None => {
                let key = (Name::clone(&app), Name::clone(&id));
                if let Some(seq) = self.deleted.remove(&key) {
                    self.drop_item(seq);
                }
            }
        }
        self.push(app, id, DeltaEntry::Live, now)
    }

    /// Queues the DELETED item of an instance whose lease has just been removed; `earlier` is
    /// the number that lease kept.
    pub(crate) fn push_deleted(
        &mut self,
        app: Name,
        id: Name,
        earlier: Option<u64>,
        lease: Lease,
        now: Millis,
    ) {
        if let Some(seq) = earlier {
            self.drop_item(seq);
        }
        let key = (Name::clone(&app), Name::clone(&id));
        let seq = self.push(app, id, DeltaEntry::Deleted(Box::new(lease)), now);
        if let Some(stale) = self.deleted.insert(key, seq) {
            self.drop_item(stale);
        }
    }

    /// Drops an instance's earlier item. A lease's number may name an item the purge already
    /// dropped; numbers are never reused, so that is a no-op, and the purge need not reach the
    /// leases.
    fn drop_item(&mut self, seq: u64) {
        self.items.remove(&seq);
    }

    fn push(&mut self, app: Name, id: Name, entry: DeltaEntry, now: Millis) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        let item = ChangeItem {
            at: now,
            app,
            id,
            entry,
        };
        self.items.insert(seq, item);
        seq
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
            let (seq, item) = entry.remove_entry();
            if let DeltaEntry::Deleted(_) = item.entry {
                let key = (item.app, item.id);
                if self.deleted.get(&key) == Some(&seq) {
                    self.deleted.remove(&key);
                }
            }
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

    /// [`RecentlyChanged::latest`] with each item's sequence number.
    pub(crate) fn numbered(&self) -> impl Iterator<Item = (u64, &ChangeItem)> {
        self.items.iter().map(|(seq, item)| (*seq, item))
    }

    /// The lease kept for a removed instance's DELETED item, while it is queued.
    pub(crate) fn deleted_lease(&self, app: &str, id: &str) -> Option<&Lease> {
        let seq = self.deleted.get(&(Name::from(app), Name::from(id)))?;
        match &self.items.get(seq)?.entry {
            DeltaEntry::Deleted(lease) => Some(lease),
            DeltaEntry::Live => None,
        }
    }

    /// The item with this sequence number, if it is still queued (not replaced by a later
    /// item of its instance, nor purged).
    pub(crate) fn item(&self, seq: u64) -> Option<&ChangeItem> {
        self.items.get(&seq)
    }
}

#[cfg(test)]
mod tests;
