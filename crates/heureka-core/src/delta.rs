//! The recently-changed queue behind `GET /apps/delta`, and `apps__hashcode` (§5, §6.9).
//!
//! Eureka's `recentlyChangedQueue` holds references to leases, so a delta shows each instance
//! as it is when the payload is generated. We keep `(time, app, id)` items instead and look the
//! lease up at render time; only a cancel has to keep its own copy, because the lease is gone
//! from the registry by then. Rendering keeps the latest item per (app, id), which is what the
//! Java payload amounts to.

use std::collections::{HashMap, VecDeque};

use crate::lease::Lease;
use crate::model::{InstanceStatus, Millis};

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

/// Eureka's `recentlyChangedQueue`, oldest item first.
#[derive(Debug, Default)]
pub(crate) struct RecentlyChanged {
    items: VecDeque<ChangeItem>,
}

#[derive(Debug)]
pub(crate) struct ChangeItem {
    /// When the change was queued; retention is measured from here.
    at: Millis,
    pub(crate) app: String,
    pub(crate) id: String,
    pub(crate) change: Change,
}

#[derive(Debug)]
pub(crate) enum Change {
    /// Register or status change: show the registry's lease as it is at render time.
    Live,
    /// Cancel or eviction: the lease as it was when removed, `actionType` DELETED.
    Deleted(Box<Lease>),
}

impl RecentlyChanged {
    pub(crate) fn push_live(&mut self, app: &str, id: &str, now: Millis) {
        self.push(app, id, Change::Live, now);
    }

    pub(crate) fn push_deleted(&mut self, app: &str, id: &str, lease: Lease, now: Millis) {
        self.push(app, id, Change::Deleted(Box::new(lease)), now);
    }

    fn push(&mut self, app: &str, id: &str, change: Change, now: Millis) {
        let item = ChangeItem {
            at: now,
            app: app.to_owned(),
            id: id.to_owned(),
            change,
        };
        self.items.push_back(item);
    }

    /// Drops items older than `now - retention_ms` from the head, stopping at the first young
    /// one, as Eureka's `deltaRetentionTimer` does. Returns how many were dropped.
    pub(crate) fn purge(&mut self, now: Millis, retention_ms: Millis) -> usize {
        let cutoff = now - retention_ms;
        let mut purged = 0;
        while self.items.front().is_some_and(|item| item.at < cutoff) {
            self.items.pop_front();
            purged += 1;
        }
        purged
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// The latest item per (app, id), in the order of those latest items: a later change to
    /// the same instance replaces the earlier one and moves to the end, as in Eureka's payload.
    pub(crate) fn latest(&self) -> Vec<&ChangeItem> {
        let mut latest_index: HashMap<(&str, &str), usize> = HashMap::new();
        for (index, item) in self.items.iter().enumerate() {
            latest_index.insert((&item.app, &item.id), index);
        }
        let mut indices: Vec<usize> = latest_index.into_values().collect();
        indices.sort_unstable();
        indices
            .into_iter()
            .map(|index| &self.items[index])
            .collect()
    }
}

#[cfg(test)]
mod tests;
