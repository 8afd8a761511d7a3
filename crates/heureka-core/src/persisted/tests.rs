//! Restoring what a node kept: the same registry, no change recorded, leases that wait for a
//! heartbeat, and removals that keep older copies out.

use super::*;
use crate::lease::RESTORE_MARGIN_MS;
use crate::model::InstanceStatus::{OutOfService, Up};
use crate::origin::Origin;
use crate::test_util::{expiring_registry, heartbeat, instance, register_all, status_of};

const RESTART: Millis = 1_000_000;

/// Everything `registry` keeps, as the server's store would hand it back.
fn kept_all(registry: &Registry, ids: &[(&str, &str)]) -> Vec<KeptInstance> {
    ids.iter()
        .filter_map(|(app, id)| registry.kept(app, id))
        .collect()
}

fn restored(kept: Vec<KeptInstance>, now: Millis) -> Registry {
    let mut registry = expiring_registry();
    for instance in kept {
        registry.restore(instance, now);
    }
    registry
}

const IDS: &[(&str, &str)] = &[("ORDERS", "o1"), ("ORDERS", "o2"), ("PAYMENTS", "p1")];

fn with_override_and_metadata() -> Registry {
    let mut registry = expiring_registry();
    register_all(&mut registry, IDS, 1_000);
    assert!(registry.set_status_override(
        "ORDERS",
        "o2",
        OutOfService,
        None,
        Origin::Client,
        2_000
    ));
    let metadata = vec![("zone".to_owned(), "east".to_owned())];
    assert_eq!(
        registry.update_metadata("PAYMENTS", "p1", metadata, 3_000),
        Ok(true)
    );
    registry.take_changes();
    registry
}

#[test]
fn a_restored_registry_serves_the_same_instances_statuses_metadata_and_hashcode() {
    let before = with_override_and_metadata();
    let after = restored(kept_all(&before, IDS), RESTART);
    assert_eq!(after.full_hashcode(), before.full_hashcode());
    assert_eq!(after.registry_size(), 3);
    assert_eq!(status_of(&after, "ORDERS", "o2"), Some(OutOfService));
    assert_eq!(
        after.status_overrides(RESTART),
        vec![("o2".to_owned(), OutOfService)]
    );
    let p1 = after.instance("PAYMENTS", "p1", RESTART).expect("restored");
    assert_eq!(p1.metadata.get("zone").map(String::as_str), Some("east"));
    let o1 = after.instance("ORDERS", "o1", RESTART).expect("restored");
    assert_eq!(o1.lease_info.registration_timestamp, 1_000);
}

#[test]
fn restoring_records_no_change_and_no_delta_item() {
    let before = with_override_and_metadata();
    let mut after = restored(kept_all(&before, IDS), RESTART);
    assert!(after.take_changes().is_empty());
    assert_eq!(after.recently_changed_len(), 0);
}

#[test]
fn a_restored_lease_lives_until_its_duration_after_the_restore_without_a_heartbeat() {
    let before = with_override_and_metadata();
    let mut after = restored(kept_all(&before, IDS), RESTART);
    // 90 s leases, renewed as of the restore: nothing expired at 89 s.
    assert_eq!(after.evict(RESTART + 89_000, 0, 0).expired, 0);
    assert_eq!(after.evict(RESTART + 91_000, 0, 0).expired, 3);
}

#[test]
fn a_lease_shorter_than_a_renewal_interval_and_the_margin_gets_the_margin() {
    let mut before = expiring_registry();
    let mut short = instance("ORDERS", "o1");
    short.lease_info.duration_in_secs = 5;
    short.lease_info.renewal_interval_in_secs = 30;
    before.register(short, Origin::Client, 1_000);
    let mut after = restored(kept_all(&before, &[("ORDERS", "o1")]), RESTART);
    let grace = 30_000 + RESTORE_MARGIN_MS;
    assert_eq!(after.evict(RESTART + grace - 1_000, 0, 0).expired, 0);
    assert_eq!(after.evict(RESTART + grace + 1_000, 0, 0).expired, 1);
}

#[test]
fn a_restored_lease_revives_nothing_elsewhere_until_a_heartbeat_renews_it() {
    let before = with_override_and_metadata();
    let mut after = restored(kept_all(&before, IDS), RESTART);
    let copy = after.stamped_copy("ORDERS", "o1", RESTART).expect("a copy");
    assert!(!copy.leased);
    let renewed = heartbeat(&mut after, "ORDERS", "o1", RESTART + 1_000);
    assert_eq!(renewed, crate::RenewOutcome::Renewed);
    let copy = after
        .stamped_copy("ORDERS", "o1", RESTART + 1_000)
        .expect("a copy");
    assert!(copy.leased);
}

#[test]
fn a_cancel_kept_on_disk_keeps_an_older_copy_of_the_instance_out() {
    let mut before = expiring_registry();
    register_all(&mut before, &[("ORDERS", "o1")], 1_000);
    let older = before.stamped_copy("ORDERS", "o1", 1_000).expect("a copy");
    assert!(before.cancel("ORDERS", "o1", Origin::Client, 2_000));
    // Restarted within the tombstone's retention.
    let mut after = restored(kept_all(&before, &[("ORDERS", "o1")]), 10_000);
    let merged = after.merge_copy(older, 10_000).expect("in time");
    assert!(!merged.leased);
    assert_eq!(after.registry_size(), 0);
}

#[test]
fn a_peers_later_cancel_removes_a_restored_lease() {
    let mut peer = expiring_registry();
    peer.set_node_tag(2);
    register_all(&mut peer, &[("ORDERS", "o1")], 1_000);
    let mut after = restored(kept_all(&peer, &[("ORDERS", "o1")]), RESTART);
    assert!(peer.cancel("ORDERS", "o1", Origin::Client, 2_000));
    let cancel = peer
        .stamped_copy("ORDERS", "o1", 2_000)
        .expect("a tombstone");
    after.merge_copy(cancel, RESTART).expect("in time");
    assert_eq!(after.registry_size(), 0);
}

#[test]
fn a_removal_older_than_the_tombstone_retention_is_forgotten() {
    let mut before = expiring_registry();
    register_all(&mut before, &[("ORDERS", "o1")], 1_000);
    assert!(before.cancel("ORDERS", "o1", Origin::Client, 2_000));
    let kept = before.kept("ORDERS", "o1").expect("a tombstone");
    let mut after = expiring_registry();
    let retention = after.policy.tombstone_retention_ms;
    assert_eq!(
        after.restore(kept, 2_000 + retention + 1),
        Restored::Expired
    );
}

#[test]
fn a_record_stamped_far_ahead_of_the_clock_is_refused() {
    let before = with_override_and_metadata();
    let kept = before.kept("ORDERS", "o1").expect("kept");
    let mut after = expiring_registry();
    // The node's clock reads 10 minutes before the record's writes.
    let outcome = after.restore(kept, 1_000 - 600_000);
    assert!(matches!(outcome, Restored::Refused(_)), "{outcome:?}");
    assert_eq!(after.registry_size(), 0);
}

#[test]
fn an_up_instance_restored_keeps_its_service_up_time() {
    let before = with_override_and_metadata();
    let after = restored(kept_all(&before, IDS), RESTART);
    let o1 = after.instance("ORDERS", "o1", RESTART).expect("restored");
    let was = before.instance("ORDERS", "o1", 1_000).expect("held");
    assert_eq!(
        o1.lease_info.service_up_timestamp,
        was.lease_info.service_up_timestamp
    );
    assert_eq!(o1.status, Up);
}
