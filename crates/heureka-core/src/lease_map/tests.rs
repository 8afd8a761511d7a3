//! The lease map: a hash table keyed by instance id that keeps each id's hash.

use std::sync::Arc;

use super::LeaseMap;
use crate::lease::{Lease, LeaseExpiry};
use crate::stored::{Interner, Name, StoredInstance};
use crate::test_util::instance;

fn lease(id: &str) -> Lease {
    let stored = StoredInstance::new(instance("a", id), &mut Interner::default());
    Lease::new(stored, LeaseExpiry::Documented, 0)
}

fn leases(ids: impl IntoIterator<Item = String>) -> LeaseMap {
    let mut map = LeaseMap::default();
    for id in ids {
        let lease = lease(&id);
        map.insert(Name::from(id.as_str()), lease);
    }
    map
}

#[test]
fn every_lease_is_found_by_its_id_after_the_table_grew_many_times() {
    let map = leases((0..10_000).map(|i| format!("i-{i}")));
    assert_eq!(map.len(), 10_000);
    for i in 0..10_000 {
        let id = format!("i-{i}");
        assert_eq!(
            map.get(&id).map(|lease| lease.holder.id()),
            Some(id.as_str())
        );
    }
}

#[test]
fn an_id_not_inserted_is_not_found() {
    let map = leases(["i-1".to_owned()]);
    assert!(map.get("i-2").is_none());
    assert!(!map.contains_key("I-1"));
}

#[test]
fn inserting_an_id_again_replaces_its_lease() {
    let mut map = leases(["i-1".to_owned()]);
    let mut newer = lease("i-1");
    newer.delta_seq = Some(7);
    map.insert(Name::from("i-1"), newer);
    assert_eq!(map.len(), 1);
    assert_eq!(map.get("i-1").and_then(|lease| lease.delta_seq), Some(7));
}

#[test]
fn removing_hands_back_the_maps_own_copy_of_the_id() {
    let mut map = LeaseMap::default();
    let id = Name::from("i-1");
    map.insert(Name::clone(&id), lease("i-1"));
    let (removed, _) = map.remove_entry("i-1").expect("inserted");
    assert!(Arc::ptr_eq(&removed, &id));
    assert!(map.is_empty());
    assert!(map.remove_entry("i-1").is_none());
}

#[test]
fn removed_ids_leave_the_others_findable() {
    let mut map = leases((0..1_000).map(|i| format!("i-{i}")));
    for i in (0..1_000).step_by(2) {
        assert!(map.remove_entry(&format!("i-{i}")).is_some());
    }
    assert_eq!(map.len(), 500);
    assert!(map.get("i-998").is_none());
    assert!(map.get("i-999").is_some());
    assert_eq!(map.iter().count(), 500);
}

/// A heartbeat in a large registry finds its slot cold: the id it compares and the lease it
/// renews come first, in the slot's first 34 bytes (`Slot`'s comment; the lease's own part
/// is pinned in `lease/tests.rs`).
#[test]
fn a_renewal_reads_the_front_of_its_slot() {
    use std::mem::{offset_of, size_of};
    assert_eq!(offset_of!(super::Slot, id), 0);
    assert_eq!(offset_of!(super::Slot, lease), 16);
    assert_eq!(size_of::<super::Slot>(), 96);
}
