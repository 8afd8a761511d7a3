//! The audit entries kept for the dashboard: a bounded ring, newest first, which also
//! summarises refusals. Pure: time is passed in, and what is complete is handed back to the
//! caller to log and publish, so every rule here is tested without a clock or a subscriber.
//!
//! An act is complete when it is recorded. A refusal (401, or replication refused 403) opens a
//! summary for its (action, address, user): further refusals of the same key within
//! [`SUMMARY_WINDOW_MS`] of the first only count, in the same entry (the dashboard sees the
//! running count), and the summary is complete when its minute is over, so a password-guessing
//! client makes one entry a minute, not one per attempt. A summary pushed out of the ring
//! while still counting is complete then, with the count so far.

use std::collections::{HashMap, VecDeque};

use heureka_core::Millis;
use heureka_wire::{AuditAction, AuditEntry};

/// How long a summary of refusals counts before it is complete.
pub(crate) const SUMMARY_WINDOW_MS: Millis = 60_000;

/// What refusals are summarised by: one entry per action, address and user name a minute.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct RefusalKey {
    pub(crate) action: AuditAction,
    pub(crate) address: Option<String>,
    pub(crate) user: Option<String>,
    /// Refusals in two namespaces are two summaries: each says where it was refused.
    pub(crate) namespace: String,
}

impl RefusalKey {
    pub(crate) fn of(entry: &AuditEntry) -> RefusalKey {
        RefusalKey {
            action: entry.action,
            address: entry.address.clone(),
            user: entry.user.clone(),
            namespace: entry.namespace.clone(),
        }
    }
}

#[derive(Debug)]
pub(crate) struct AuditRing {
    capacity: usize,
    /// Newest at the front. Numbers are consecutive, so an entry is found from its number.
    slots: VecDeque<Slot>,
    next_number: u64,
    /// The summaries still counting, by key: their entry's number. Each has a slot, so there
    /// are never more than the ring holds.
    open: HashMap<RefusalKey, u64>,
}

#[derive(Debug)]
struct Slot {
    number: u64,
    entry: AuditEntry,
    /// Set while the entry is a summary still counting.
    counting: Option<RefusalKey>,
}

impl AuditRing {
    /// A ring keeping the newest `capacity` entries (at least one).
    pub(crate) fn new(capacity: usize) -> AuditRing {
        AuditRing {
            capacity: capacity.max(1),
            slots: VecDeque::new(),
            next_number: 0,
            open: HashMap::new(),
        }
    }

    /// Keeps an act. Returns what is complete now: the act, after any summary it pushed out.
    pub(crate) fn record(&mut self, entry: AuditEntry) -> Vec<AuditEntry> {
        let mut complete = self.push(entry.clone(), None);
        complete.push(entry);
        complete
    }

    /// Counts one refusal (its `count` is ignored), at `now`. Returns the summaries that are
    /// complete now: this key's previous one if its minute is over, any pushed out.
    pub(crate) fn refuse(&mut self, entry: AuditEntry, now: Millis) -> Vec<AuditEntry> {
        let key = RefusalKey::of(&entry);
        let mut complete = Vec::new();
        if let Some(&number) = self.open.get(&key) {
            let slot = self.slot_mut(number).expect("an open summary has a slot");
            if now < slot.entry.at + SUMMARY_WINDOW_MS {
                slot.entry.count += 1;
                return complete;
            }
            complete.extend(self.close(number));
        }
        let entry = AuditEntry { count: 1, ..entry };
        let number = self.next_number;
        complete.extend(self.push(entry, Some(key.clone())));
        self.open.insert(key, number);
        complete
    }

    /// The summaries whose minute is over at `now`, now complete, oldest first.
    pub(crate) fn close_due(&mut self, now: Millis) -> Vec<AuditEntry> {
        self.close_where(|entry| now >= entry.at + SUMMARY_WINDOW_MS)
    }

    /// Every summary still counting, complete now (at shutdown), oldest first.
    pub(crate) fn close_all(&mut self) -> Vec<AuditEntry> {
        self.close_where(|_| true)
    }

    /// The entries kept, newest first; summaries with their count so far.
    pub(crate) fn newest_first(&self) -> impl Iterator<Item = &AuditEntry> {
        self.slots.iter().map(|slot| &slot.entry)
    }

    fn close_where(&mut self, due: impl Fn(&AuditEntry) -> bool) -> Vec<AuditEntry> {
        let mut numbers: Vec<u64> = self
            .open
            .values()
            .copied()
            .filter(|&number| self.slot(number).is_some_and(|slot| due(&slot.entry)))
            .collect();
        numbers.sort_unstable();
        numbers
            .into_iter()
            .filter_map(|number| self.close(number))
            .collect()
    }

    /// Pushes an entry at the front; returns the summary pushed out of the back, if counting.
    fn push(&mut self, entry: AuditEntry, counting: Option<RefusalKey>) -> Vec<AuditEntry> {
        let mut complete = Vec::new();
        if self.slots.len() == self.capacity {
            let oldest = self
                .slots
                .pop_back()
                .expect("a full ring has an oldest entry");
            if let Some(key) = oldest.counting {
                self.open.remove(&key);
                complete.push(oldest.entry);
            }
        }
        self.slots.push_front(Slot {
            number: self.next_number,
            entry,
            counting,
        });
        self.next_number += 1;
        complete
    }

    /// Stops a summary counting; returns its entry, complete.
    fn close(&mut self, number: u64) -> Option<AuditEntry> {
        let slot = self.slot_mut(number)?;
        let key = slot.counting.take()?;
        let entry = slot.entry.clone();
        self.open.remove(&key);
        Some(entry)
    }

    fn index(&self, number: u64) -> Option<usize> {
        let newest = self.slots.front()?.number;
        usize::try_from(newest.checked_sub(number)?).ok()
    }

    fn slot(&self, number: u64) -> Option<&Slot> {
        self.slots.get(self.index(number)?)
    }

    fn slot_mut(&mut self, number: u64) -> Option<&mut Slot> {
        let index = self.index(number)?;
        self.slots.get_mut(index)
    }
}

#[cfg(test)]
mod tests;
