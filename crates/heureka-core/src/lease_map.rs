//! One application's leases: a hash table whose entries keep their id's hash, with the
//! hasher every map of the registry uses (`maps.rs`).

use std::hash::BuildHasher;

use hashbrown::hash_table::Entry;

use crate::lease::Lease;
use crate::stored::Name;

/// One application's leases by case-sensitive instance id.
///
/// A hash table whose entries keep their id's hash. A map that grows moves every entry to a
/// table twice the size, in one call under the registry lock, and std's map hashes each key
/// again to do it: a cache miss on the id's heap copy and a hash per entry, about 0.34 µs,
/// 155 ms for the resize at 458,752 instances of one application. Moving entries that carry
/// their hash reads no id (`bench/results/regcpu.md`).
#[derive(Debug, Default)]
pub(crate) struct LeaseMap {
    table: hashbrown::HashTable<Slot>,
    hasher: foldhash::fast::RandomState,
}

///
/// In the order written: a renewal compares the id, follows the holder and writes the lease's
/// renewal time, which come first here and in [`Lease`], in 34 of the slot's 96 bytes. In a
/// large registry every heartbeat finds its slot cold, and the compiler's own order put the id
/// and the holder 56 bytes apart, always on two cache lines; now only a slot that starts half
/// way into a line (every other one) reaches into a second.
#[derive(Debug)]
#[repr(C)]
struct Slot {
    /// Shared with the instance's delta-queue item, so one copy serves both.
    id: Name,
    lease: Lease,
    hash: u64,
}

impl LeaseMap {
    fn hash(&self, id: &str) -> u64 {
        self.hasher.hash_one(id)
    }

    fn slot(&self, id: &str) -> Option<&Slot> {
        self.table
            .find(self.hash(id), |slot| slot.id.as_ref() == id)
    }

    pub(crate) fn get(&self, id: &str) -> Option<&Lease> {
        self.slot(id).map(|slot| &slot.lease)
    }

    /// The lease and the map's shared copy of its id.
    pub(crate) fn get_key_value(&self, id: &str) -> Option<(&Name, &Lease)> {
        self.slot(id).map(|slot| (&slot.id, &slot.lease))
    }

    pub(crate) fn get_mut(&mut self, id: &str) -> Option<&mut Lease> {
        let hash = self.hash(id);
        self.table
            .find_mut(hash, |slot| slot.id.as_ref() == id)
            .map(|slot| &mut slot.lease)
    }

    /// The lease, to change, and the map's shared copy of its id.
    pub(crate) fn get_key_value_mut(&mut self, id: &str) -> Option<(&Name, &mut Lease)> {
        let hash = self.hash(id);
        self.table
            .find_mut(hash, |slot| slot.id.as_ref() == id)
            .map(|slot| (&slot.id, &mut slot.lease))
    }

    pub(crate) fn contains_key(&self, id: &str) -> bool {
        self.slot(id).is_some()
    }

    /// Removes the lease, handing back the map's shared copy of its id with it.
    pub(crate) fn remove_entry(&mut self, id: &str) -> Option<(Name, Lease)> {
        let hash = self.hash(id);
        let entry = self
            .table
            .find_entry(hash, |slot| slot.id.as_ref() == id)
            .ok()?;
        let (slot, _) = entry.remove();
        Some((slot.id, slot.lease))
    }

    /// Inserts or replaces the lease of `id`.
    pub(crate) fn insert(&mut self, id: Name, lease: Lease) {
        let hash = self.hash(&id);
        match self.table.entry(
            hash,
            |slot| slot.id == id,
            // Growing reads the stored hashes only.
            |slot| slot.hash,
        ) {
            Entry::Occupied(mut occupied) => occupied.get_mut().lease = lease,
            Entry::Vacant(vacant) => {
                vacant.insert(Slot { hash, id, lease });
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// The leases with their ids, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Name, &Lease)> {
        self.table.iter().map(|slot| (&slot.id, &slot.lease))
    }

    /// The leases, in no particular order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &Lease> {
        self.table.iter().map(|slot| &slot.lease)
    }
}

#[cfg(test)]
mod tests;
