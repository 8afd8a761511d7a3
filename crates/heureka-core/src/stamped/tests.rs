//! Stamped copies between Heureka servers: merging a peer's copy, and stamped heartbeats.

use proptest::prelude::*;

use super::*;
use crate::change::ChangeKind;
use crate::hlc::{Stamp, MAX_DRIFT_MS};
use crate::model::InstanceStatus::{Down, OutOfService, Unknown, Up};
use crate::test_util::{expiring_registry, instance, status_of};

/// Three servers, each tagged differently, self-preservation off.
fn servers() -> (Registry, Registry, Registry) {
    let tagged = |tag| {
        let mut registry = expiring_registry();
        registry.set_node_tag(tag);
        registry
    };
    (tagged(1), tagged(2), tagged(3))
}

/// When these tests take copies: within the lease of every registration they make, unless a
/// test says otherwise.
const COPIED_AT: Millis = 10_000;

fn copy_of(registry: &Registry) -> StampedCopy {
    registry
        .stamped_copy("ORDERS", "o1", COPIED_AT)
        .expect("a copy")
}

fn override_of(registry: &Registry) -> Option<InstanceStatus> {
    registry
        .stamped_copy("ORDERS", "o1", COPIED_AT)?
        .parts
        .overridden
}

fn is_held(registry: &Registry) -> bool {
    registry
        .stamped_copy("ORDERS", "o1", COPIED_AT)
        .is_some_and(|copy| copy.leased)
}

fn register(registry: &mut Registry, now: Millis) {
    registry.register(instance("ORDERS", "o1"), Origin::Client, now);
}

fn set_out_of_service(registry: &mut Registry, now: Millis) {
    assert!(registry.set_status_override("ORDERS", "o1", OutOfService, None, Origin::Client, now));
}

/// Servers `a` and `b` (of `servers`) once `ORDERS/o1` registered on `a` at 1_000.
fn registered_on_a() -> (Registry, Registry) {
    let (mut a, b, _) = servers();
    register(&mut a, 1_000);
    (a, b)
}

/// As `registered_on_a`, and `b` merged `a`'s copy at 1_000.
fn copied_to_b() -> (Registry, Registry) {
    let (a, mut b) = registered_on_a();
    b.merge_copy(copy_of(&a), 1_000).unwrap();
    (a, b)
}

/// As `registered_on_a`, then put OUT_OF_SERVICE on `a` at 2_000 and `a`'s copy merged by `b`
/// at 2_000.
fn overridden_and_copied() -> (Registry, Registry) {
    let (mut a, mut b) = registered_on_a();
    set_out_of_service(&mut a, 2_000);
    b.merge_copy(copy_of(&a), 2_000).unwrap();
    (a, b)
}

/// `b`'s answer to a stamped heartbeat of `ORDERS/o1` carrying `stamps`.
fn stamped_heartbeat(
    b: &mut Registry,
    stamps: &crate::merge::PartStamps,
    now: Millis,
) -> StampedRenewal {
    b.renew_stamped("ORDERS", "o1", stamps, now).unwrap()
}

// === merging a peer's copy ===

#[test]
fn a_newer_override_removal_replaces_the_override_held_here() {
    let (mut a, mut b) = overridden_and_copied();
    assert!(a.delete_status_override("ORDERS", "o1", Some(Up), None, Origin::Client, 3_000));

    b.merge_copy(copy_of(&a), 3_000).unwrap();

    assert_eq!(status_of(&b, "ORDERS", "o1"), Some(Up));
    assert_eq!(b.status_overrides(3_000), vec![]);
}

#[test]
fn an_older_copy_with_an_override_does_not_bring_back_a_removed_one() {
    let (mut a, mut b) = registered_on_a();
    set_out_of_service(&mut a, 2_000);
    let stale = copy_of(&a);
    b.merge_copy(stale.clone(), 2_000).unwrap();
    assert!(b.delete_status_override("ORDERS", "o1", Some(Up), None, Origin::Client, 3_000));

    let merged = b.merge_copy(stale, 4_000).unwrap();

    assert!(!merged.changed);
    assert_eq!(status_of(&b, "ORDERS", "o1"), Some(Up));
}

#[test]
fn an_older_registration_does_not_bring_back_a_cancelled_instance() {
    let (a, mut b) = registered_on_a();
    let stale = copy_of(&a);
    b.merge_copy(stale.clone(), 1_000).unwrap();
    assert!(b.cancel("ORDERS", "o1", Origin::Client, 2_000));

    let merged = b.merge_copy(stale, 3_000).unwrap();

    assert_eq!((merged.changed, merged.leased), (false, false));
    assert_eq!(status_of(&b, "ORDERS", "o1"), None);
}

#[test]
fn a_cancel_copy_removes_the_instance_and_is_recorded_as_a_peer_write() {
    let (mut a, mut b) = copied_to_b();
    assert!(a.cancel("ORDERS", "o1", Origin::Client, 2_000));
    b.take_changes();

    b.merge_copy(copy_of(&a), 2_000).unwrap();

    assert_eq!(status_of(&b, "ORDERS", "o1"), None);
    let changes = b.take_changes();
    assert_eq!(changes.len(), 1);
    assert_eq!(
        (changes[0].kind, changes[0].origin),
        (ChangeKind::Cancelled, Origin::Peer)
    );
}

#[test]
fn a_registration_after_the_cancel_brings_the_instance_back() {
    let (mut a, mut b) = copied_to_b();
    assert!(b.cancel("ORDERS", "o1", Origin::Client, 2_000));
    a.merge_copy(copy_of(&b), 2_000).unwrap();
    register(&mut a, 3_000);

    b.merge_copy(copy_of(&a), 3_000).unwrap();

    assert_eq!(status_of(&b, "ORDERS", "o1"), Some(Up));
}

#[test]
fn merging_the_same_copy_twice_changes_nothing_the_second_time() {
    let (a, mut b) = overridden_and_copied();
    b.take_changes();

    let merged = b.merge_copy(copy_of(&a), 2_500).unwrap();

    assert!(!merged.changed);
    assert!(b.take_changes().is_empty());
}

#[test]
fn a_merged_copy_is_never_replicated_again() {
    let (_, mut b) = copied_to_b();
    assert!(b.take_changes().iter().all(|c| c.origin == Origin::Peer));
}

#[test]
fn a_copy_stamped_far_ahead_of_our_clock_is_refused() {
    let (a, mut b) = registered_on_a();
    let mut forged = copy_of(&a);
    forged.parts.stamps.registration = Stamp {
        ms: 1_000 + MAX_DRIFT_MS + 1,
        counter: 0,
        node: 9,
    };
    assert!(b.merge_copy(forged, 1_000).is_err());
    assert_eq!(status_of(&b, "ORDERS", "o1"), None);
}

#[test]
fn an_override_for_an_instance_unknown_here_is_kept_for_its_registration() {
    let (mut a, mut b, mut c) = servers();
    register(&mut a, 1_000);
    let before_override = copy_of(&a);
    set_out_of_service(&mut a, 2_000);
    // C hears of the override first, without the registration…
    let mut override_only = copy_of(&a);
    override_only.parts.registration = None;
    override_only.leased = false;
    c.merge_copy(override_only, 2_000).unwrap();
    assert!(!is_held(&c));
    // …then of an older registration, relayed by B, that knows no override.
    b.merge_copy(before_override, 2_000).unwrap();
    c.merge_copy(copy_of(&b), 2_500).unwrap();

    assert_eq!(status_of(&c, "ORDERS", "o1"), Some(OutOfService));
}

#[test]
fn an_evicted_instance_comes_back_with_a_peer_that_still_renews_it() {
    let (mut a, mut b) = copied_to_b();
    b.evict(1_000 + 200_000, 0, 7);
    assert!(!is_held(&b));
    // A kept hearing the instance's heartbeats.
    a.renew("ORDERS", "o1", None, None, Origin::Client, 200_000);

    let renewed = a.stamped_copy("ORDERS", "o1", 201_000).unwrap();
    let merged = b.merge_copy(renewed, 201_000).unwrap();

    assert!(merged.leased);
    assert_eq!(status_of(&b, "ORDERS", "o1"), Some(Up));
}

#[test]
fn an_expired_lease_kept_by_self_preservation_revives_nothing_elsewhere() {
    let (a, mut b) = registered_on_a();
    let expired = a.stamped_copy("ORDERS", "o1", 1_000 + 100_000).unwrap();
    assert!(!expired.leased);
    b.merge_copy(expired, 101_000).unwrap();
    assert!(!is_held(&b));
}

#[test]
fn a_synced_copy_takes_an_override_and_stays_registered() {
    let (mut a, mut b, _) = servers();
    assert!(a.register_synced(instance("ORDERS", "o1"), 1_000));
    assert!(b.register_synced(instance("ORDERS", "o1"), 1_000));
    set_out_of_service(&mut a, 2_000);
    b.merge_copy(copy_of(&a), 2_000).unwrap();
    assert_eq!(status_of(&b, "ORDERS", "o1"), Some(OutOfService));
}

#[test]
fn a_synced_copy_reaches_a_server_that_lacks_it() {
    let (mut a, mut b, _) = servers();
    assert!(a.register_synced(instance("ORDERS", "o1"), 1_000));
    let merged = b.merge_copy(copy_of(&a), 1_000).unwrap();
    assert!(merged.leased);
    assert_eq!(status_of(&b, "ORDERS", "o1"), Some(Up));
}

#[test]
fn an_evicted_instance_registering_again_keeps_its_override() {
    let (mut a, _) = registered_on_a();
    set_out_of_service(&mut a, 2_000);
    a.evict(2_000 + 200_000, 0, 7);

    register(&mut a, 203_000);

    assert_eq!(status_of(&a, "ORDERS", "o1"), Some(OutOfService));
}

#[test]
fn the_instance_reporting_down_after_a_merged_override_is_down_everywhere() {
    let (mut a, mut b) = copied_to_b();
    set_out_of_service(&mut b, 2_000);
    a.merge_copy(copy_of(&b), 2_000).unwrap();
    let down = Instance {
        status: Down,
        ..instance("ORDERS", "o1")
    };
    a.register(down, Origin::Client, 3_000);
    b.merge_copy(copy_of(&a), 3_000).unwrap();
    for server in [&a, &b] {
        assert_eq!(status_of(server, "ORDERS", "o1"), Some(Down));
        assert_eq!(override_of(server), Some(OutOfService));
    }
}

// === stamped heartbeats ===

#[test]
fn a_heartbeat_for_an_unknown_instance_asks_for_the_copy() {
    let (a, mut b) = registered_on_a();
    let stamps = copy_of(&a).parts.stamps;
    let answer = stamped_heartbeat(&mut b, &stamps, 1_000);
    assert_eq!(answer, StampedRenewal::SendYours);
}

#[test]
fn a_heartbeat_with_equal_stamps_renews() {
    let (a, mut b) = copied_to_b();
    let stamps = copy_of(&a).parts.stamps;
    assert_eq!(
        stamped_heartbeat(&mut b, &stamps, 2_000),
        StampedRenewal::Renewed
    );
    let renewed = b.instance("ORDERS", "o1", 2_000).unwrap();
    assert_eq!(renewed.lease_info.last_renewal_timestamp, 2_000);
}

#[test]
fn a_heartbeat_from_a_server_that_missed_a_write_gets_our_copy() {
    let (a, mut b) = registered_on_a();
    let stale = copy_of(&a).parts.stamps;
    b.merge_copy(copy_of(&a), 1_000).unwrap();
    set_out_of_service(&mut b, 2_000);
    match stamped_heartbeat(&mut b, &stale, 3_000) {
        StampedRenewal::TakeOurs(copy) => assert_eq!(copy.parts.overridden, Some(OutOfService)),
        other => panic!("expected our copy, got {other:?}"),
    }
}

#[test]
fn a_heartbeat_for_an_instance_cancelled_here_gets_the_cancel() {
    let (a, mut b) = registered_on_a();
    let stale = copy_of(&a).parts.stamps;
    b.merge_copy(copy_of(&a), 1_000).unwrap();
    assert!(b.cancel("ORDERS", "o1", Origin::Client, 2_000));
    match stamped_heartbeat(&mut b, &stale, 3_000) {
        StampedRenewal::TakeOurs(copy) => assert!(!copy.parts.is_live()),
        other => panic!("expected the cancel, got {other:?}"),
    }
    assert_eq!(status_of(&b, "ORDERS", "o1"), None);
}

#[test]
fn a_heartbeat_from_a_server_with_a_newer_write_asks_for_its_copy() {
    let (mut a, mut b) = copied_to_b();
    set_out_of_service(&mut a, 2_000);
    let newer = copy_of(&a).parts.stamps;
    assert_eq!(
        stamped_heartbeat(&mut b, &newer, 2_000),
        StampedRenewal::SendYours
    );
}

// === random histories over real registries ===

#[derive(Clone, Debug)]
enum Op {
    Register(usize, bool),
    SetOverride(usize),
    RemoveOverride(usize),
    Cancel(usize),
    Deliver { copy: usize, to: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..3usize, any::<bool>()).prop_map(|(n, down)| Op::Register(n, down)),
        (0..3usize).prop_map(Op::SetOverride),
        (0..3usize).prop_map(Op::RemoveOverride),
        (0..3usize).prop_map(Op::Cancel),
        (any::<usize>(), 0..3usize).prop_map(|(copy, to)| Op::Deliver { copy, to }),
    ]
}

/// What a reader of each server sees of the instance.
fn seen(registry: &Registry, now: Millis) -> Option<(InstanceStatus, InstanceStatus)> {
    let instance = registry.instance("ORDERS", "o1", now)?;
    Some((instance.status, instance.overridden_status))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Client writes on three servers, copies delivered late, lost or twice; after every
    /// server has merged every other's copy, all three show the same instance: the one the
    /// parts of every acknowledged write, merged (`merge.rs`), describe.
    #[test]
    fn registries_converge_whatever_the_delivery(ops in prop::collection::vec(op(), 1..30)) {
        let (a, b, c) = servers();
        let mut nodes = [a, b, c];
        let mut sent: Vec<StampedCopy> = Vec::new();
        let mut now = 1_000;
        for op in &ops {
            now += 10;
            let acknowledged_on = match *op {
                Op::Register(n, down) => {
                    let status = if down { Down } else { Up };
                    let registration = Instance { status, ..instance("ORDERS", "o1") };
                    nodes[n].register(registration, Origin::Client, now);
                    Some(n)
                }
                Op::SetOverride(n) => nodes[n]
                    .set_status_override("ORDERS", "o1", OutOfService, None, Origin::Client, now)
                    .then_some(n),
                Op::RemoveOverride(n) => nodes[n]
                    .delete_status_override("ORDERS", "o1", Some(Up), None, Origin::Client, now)
                    .then_some(n),
                Op::Cancel(n) => nodes[n].cancel("ORDERS", "o1", Origin::Client, now).then_some(n),
                Op::Deliver { copy, to } if !sent.is_empty() => {
                    let copy = sent[copy % sent.len()].clone();
                    nodes[to].merge_copy(copy, now).unwrap();
                    None
                }
                Op::Deliver { .. } => None,
            };
            if let Some(copy) = acknowledged_on.and_then(|n| nodes[n].stamped_copy("ORDERS", "o1", now)) {
                sent.push(copy);
            }
        }
        for _round in 0..2 {
            for from in 0..3 {
                for to in 0..3 {
                    if let Some(copy) = nodes[from].stamped_copy("ORDERS", "o1", now) {
                        nodes[to].merge_copy(copy, now).unwrap();
                    }
                }
            }
        }
        let views: Vec<_> = nodes.iter().map(|node| seen(node, now)).collect();
        prop_assert!(views.iter().all(|view| *view == views[0]), "{:?}", views);
        let mut all = Parts::default();
        for copy in &sent {
            all.merge(&copy.parts);
        }
        let expected = all.is_live().then(|| {
            (all.status(), all.overridden.unwrap_or(Unknown))
        });
        prop_assert_eq!(&views[0], &expected);
    }
}

#[test]
fn a_tombstone_is_kept_for_its_retention_then_forgotten() {
    let (mut a, _) = registered_on_a();
    assert!(a.cancel("ORDERS", "o1", Origin::Client, 2_000));
    let retention = a.policy.tombstone_retention_ms;
    a.purge_recently_changed(2_000 + retention);
    assert_eq!(a.tombstones.len(), 1);
    a.purge_recently_changed(2_001 + retention);
    assert_eq!(a.tombstones.len(), 0);
}

// === the start-up sync ===

#[test]
fn a_synced_copy_is_replaced_by_any_stamped_write() {
    let (mut a, mut b) = registered_on_a();
    set_out_of_service(&mut a, 2_000);
    let old = instance("ORDERS", "o1");
    assert!(b.register_synced(old, 3_000));
    assert_eq!(status_of(&b, "ORDERS", "o1"), Some(Up));

    b.merge_copy(copy_of(&a), 3_000).unwrap();

    assert_eq!(status_of(&b, "ORDERS", "o1"), Some(OutOfService));
}

#[test]
fn a_synced_copy_never_replaces_what_is_held() {
    let (mut a, _) = registered_on_a();
    assert!(a.cancel("ORDERS", "o1", Origin::Client, 2_000));
    assert!(!a.register_synced(instance("ORDERS", "o1"), 3_000));
    assert_eq!(status_of(&a, "ORDERS", "o1"), None);
}

#[test]
fn a_heartbeat_copy_carries_the_stamps_without_the_document() {
    let (mut a, _) = registered_on_a();
    let heartbeat = a.stamped_heartbeat("ORDERS", "o1").unwrap();
    assert_eq!(heartbeat.parts.stamps, copy_of(&a).parts.stamps);
    assert!(heartbeat.parts.registration.is_none());
    assert!(a.cancel("ORDERS", "o1", Origin::Client, 2_000));
    assert!(a.stamped_heartbeat("ORDERS", "o1").is_none());
}

#[test]
fn a_removal_where_no_override_was_seen_beats_an_earlier_set_made_elsewhere() {
    let (mut a, mut c, _) = servers();
    register(&mut a, 1_000);
    c.merge_copy(copy_of(&a), 1_000).unwrap();
    set_out_of_service(&mut c, 2_000);
    // A never heard of C's override: its removal changes nothing a reader sees…
    assert!(a.delete_status_override("ORDERS", "o1", None, None, Origin::Client, 3_000));
    assert_eq!(status_of(&a, "ORDERS", "o1"), Some(Up));
    // …but it is the later write, so it wins on both.
    a.merge_copy(copy_of(&c), 3_000).unwrap();
    c.merge_copy(copy_of(&a), 3_000).unwrap();
    for server in [&a, &c] {
        assert_eq!(status_of(server, "ORDERS", "o1"), Some(Up));
        assert_eq!(override_of(server), None);
    }
}

#[test]
fn setting_an_override_already_in_force_beats_an_earlier_removal_made_elsewhere() {
    let (mut a, mut b) = overridden_and_copied();
    assert!(b.delete_status_override("ORDERS", "o1", Some(Up), None, Origin::Client, 3_000));
    // A has not heard of the removal; the operator sets OUT_OF_SERVICE again there.
    set_out_of_service(&mut a, 4_000);
    a.merge_copy(copy_of(&b), 4_000).unwrap();
    b.merge_copy(copy_of(&a), 4_000).unwrap();
    for server in [&a, &b] {
        assert_eq!(status_of(server, "ORDERS", "o1"), Some(OutOfService));
    }
}

// === renewals seen by a peer ===

#[test]
fn a_later_renewal_seen_by_a_peer_keeps_the_lease_here() {
    let (mut a, _) = registered_on_a();
    // The instance heartbeats elsewhere until 80 s; our copies of those heartbeats were lost.
    a.adopt_renewal("ORDERS", "o1", 80_000, 85_000);
    assert!(a.evict(1_000 + 100_000, 0, 7).evicted.is_empty());
    assert_eq!(a.evict(80_000 + 91_000, 0, 7).evicted.len(), 1);
}

#[test]
fn a_peer_renewal_is_never_taken_beyond_now() {
    let (mut a, _) = registered_on_a();
    a.adopt_renewal("ORDERS", "o1", 10_000_000, 2_000);
    assert_eq!(a.evict(2_000 + 91_000, 0, 7).evicted.len(), 1);
}

#[test]
fn an_earlier_peer_renewal_changes_nothing() {
    let (mut a, _, _) = servers();
    register(&mut a, 50_000);
    a.adopt_renewal("ORDERS", "o1", 10_000, 60_000);
    assert!(a.evict(50_000 + 90_000, 0, 7).evicted.is_empty());
}
