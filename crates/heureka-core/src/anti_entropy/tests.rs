//! What anti-entropy repairs, decided from two digests.

use super::PeerWrite::{self, Cancel, DeleteStatusOverride, Heartbeat, Register, StatusUpdate};
use super::{compare_digests as compare, PeerView, Repairs, RENEWAL_LAG_MS};
use crate::hlc::Stamp;
use crate::instance_digest::InstanceDigest;
use crate::merge::PartStamps;
use crate::model::InstanceStatus::{self, OutOfService};
use crate::test_util::live_digest;

/// Every change in these tests is older than the settling window.
const SETTLED: i64 = i64::MAX;

fn live(id: &str, dirty: i64, updated: i64, renewed: i64) -> InstanceDigest {
    live_digest("ORDERS", id, dirty, updated, renewed)
}

/// The repairs of a digest comparison in which every change has settled.
fn settled(ours: &[InstanceDigest], theirs: &[InstanceDigest]) -> Repairs {
    compare(ours, theirs, PeerView::Digest, SETTLED, RENEWAL_LAG_MS)
}

fn removed(id: &str, dirty: i64, at: i64) -> InstanceDigest {
    InstanceDigest {
        removed: true,
        ..live(id, dirty, at, at)
    }
}

fn overridden(mut entry: InstanceDigest, status: InstanceStatus) -> InstanceDigest {
    entry.status = status;
    entry.overridden_status = status;
    entry
}

fn push(id: &str, action: PeerWrite) -> (String, String, PeerWrite) {
    ("ORDERS".into(), id.into(), action)
}

fn pull(id: &str) -> (String, String) {
    ("ORDERS".into(), id.into())
}

#[test]
fn equal_registries_need_no_repair() {
    let ours = vec![live("o1", 1, 10, 100)];
    let theirs = vec![live("o1", 1, 12, 101)];
    assert!(settled(&ours, &theirs).is_empty());
}

#[test]
fn an_instance_the_peer_lacks_is_registered_there() {
    let repairs = settled(&[live("o1", 1, 10, 10)], &[]);
    assert_eq!(repairs.push, vec![push("o1", Register)]);
}

#[test]
fn an_instance_only_the_peer_has_is_fetched() {
    let repairs = settled(&[], &[live("o1", 1, 10, 10)]);
    assert_eq!(repairs.pull, vec![pull("o1")]);
}

#[test]
fn a_status_override_set_here_later_is_pushed_with_a_status_update() {
    let repairs = settled(
        &[overridden(live("o1", 1, 50, 50), OutOfService)],
        &[live("o1", 1, 10, 50)],
    );
    assert_eq!(
        repairs.push,
        vec![push("o1", Register), push("o1", StatusUpdate)]
    );
}

#[test]
fn an_override_removed_here_later_is_pushed_as_a_removal() {
    let theirs = overridden(live("o1", 1, 50, 60), OutOfService);
    let repairs = settled(&[live("o1", 1, 60, 60)], &[theirs]);
    assert_eq!(
        repairs.push,
        vec![push("o1", Register), push("o1", DeleteStatusOverride)]
    );
}

#[test]
fn the_peers_later_change_is_adopted_here() {
    let ours = vec![live("o1", 1, 10, 10)];
    let theirs = vec![overridden(live("o1", 1, 50, 50), OutOfService)];
    assert_eq!(settled(&ours, &theirs).pull, vec![pull("o1")]);
}

#[test]
fn a_newer_dirty_timestamp_wins_over_a_later_change() {
    let ours = vec![live("o1", 5, 10, 10)];
    let theirs = vec![overridden(live("o1", 1, 50, 50), OutOfService)];
    let repairs = settled(&ours, &theirs);
    assert_eq!(repairs.push[0], push("o1", Register));
}

#[test]
fn a_removal_there_after_our_last_news_removes_it_here() {
    let ours = vec![live("o1", 1, 10, 20)];
    let theirs = vec![removed("o1", 1, 30)];
    assert_eq!(
        settled(&ours, &theirs),
        Repairs {
            remove_here: vec![pull("o1")],
            ..Repairs::default()
        }
    );
}

#[test]
fn an_instance_still_renewed_here_after_the_peer_evicted_it_is_registered_there() {
    // The peer was cut off, stopped hearing heartbeats and evicted the instance.
    let ours = vec![live("o1", 1, 10, 40)];
    let theirs = vec![removed("o1", 1, 30)];
    assert_eq!(settled(&ours, &theirs).push, vec![push("o1", Register)]);
}

#[test]
fn a_removal_here_after_the_peers_last_news_is_pushed_as_a_cancel() {
    let ours = vec![removed("o1", 1, 30)];
    let theirs = vec![live("o1", 1, 10, 20)];
    assert_eq!(settled(&ours, &theirs).push, vec![push("o1", Cancel)]);
}

#[test]
fn a_copy_renewed_there_after_our_removal_is_fetched() {
    let ours = vec![removed("o1", 1, 30)];
    let theirs = vec![live("o1", 1, 10, 40)];
    assert_eq!(settled(&ours, &theirs).pull, vec![pull("o1")]);
}

#[test]
fn stale_renewals_of_a_full_registry_do_not_override_a_removal() {
    let ours = vec![removed("o1", 1, 30)];
    let theirs = vec![live("o1", 1, 10, 40)];
    assert_eq!(
        compare(
            &ours,
            &theirs,
            PeerView::FullRegistry,
            SETTLED,
            RENEWAL_LAG_MS
        )
        .push,
        vec![push("o1", Cancel)]
    );
}

#[test]
fn a_peer_that_hears_no_heartbeats_of_an_instance_gets_one() {
    // A chain: the peer learnt of the instance from us only, and renewals do not travel on.
    let ours = vec![live("o1", 1, 10, 100_000)];
    let theirs = vec![live("o1", 1, 10, 60_000)];
    assert_eq!(settled(&ours, &theirs).push, vec![push("o1", Heartbeat)]);
}

#[test]
fn renewals_of_a_full_registry_are_not_compared() {
    let ours = vec![live("o1", 1, 10, 100_000)];
    let theirs = vec![live("o1", 1, 10, 60_000)];
    assert!(compare(
        &ours,
        &theirs,
        PeerView::FullRegistry,
        SETTLED,
        RENEWAL_LAG_MS
    )
    .is_empty());
}

#[test]
fn removals_on_both_sides_need_nothing() {
    assert!(settled(&[removed("o1", 1, 5)], &[removed("o1", 1, 7)]).is_empty());
}

#[test]
fn a_change_still_settling_is_left_to_replication() {
    // Registered here 500 ms ago: the register may be in a batch to the peer right now.
    let ours = vec![live("o1", 1, 9_500, 9_500)];
    assert!(compare(&ours, &[], PeerView::Digest, 8_000, RENEWAL_LAG_MS).is_empty());
    assert_eq!(
        compare(&ours, &[], PeerView::Digest, 10_000, RENEWAL_LAG_MS).push,
        vec![push("o1", Register)]
    );
}

// === between Heureka peers: by stamps ===

fn at(ms: i64) -> Stamp {
    Stamp {
        ms,
        counter: 0,
        node: 1,
    }
}

/// `entry` with stamps: registration and own status at `registered`, override at
/// `overridden`, cancel at `cancelled` (0: none).
fn stamped(
    mut entry: InstanceDigest,
    registered: i64,
    overridden: i64,
    cancelled: i64,
) -> InstanceDigest {
    entry.stamps = Some(PartStamps {
        registration: at(registered),
        status: at(registered),
        overridden: at(overridden),
        removed: at(cancelled),
        health: Stamp::ZERO,
    });
    entry
}

#[test]
fn equal_stamps_need_no_repair_whatever_the_timestamps_say() {
    let ours = vec![stamped(live("o1", 1, 10, 100), 5, 0, 0)];
    let theirs = vec![stamped(live("o1", 9, 90, 101), 5, 0, 0)];
    assert!(settled(&ours, &theirs).is_empty());
}

#[test]
fn the_copy_with_a_later_part_is_sent_whatever_the_timestamps_say() {
    // Our override is the later write, although the peer's copy was changed later by its clock.
    let ours = vec![stamped(live("o1", 1, 10, 100), 5, 7, 0)];
    let theirs = vec![stamped(live("o1", 1, 90, 100), 5, 6, 0)];
    let repairs = settled(&ours, &theirs);
    assert_eq!(repairs.push, vec![push("o1", Register)]);
    assert!(repairs.pull.is_empty());
}

#[test]
fn a_peer_holding_a_later_part_is_asked_for_its_copy() {
    let ours = vec![stamped(live("o1", 1, 90, 100), 5, 6, 0)];
    let theirs = vec![stamped(live("o1", 1, 10, 100), 5, 7, 0)];
    let repairs = settled(&ours, &theirs);
    assert_eq!(repairs.pull, vec![pull("o1")]);
    assert!(repairs.push.is_empty() && repairs.remove_here.is_empty());
}

#[test]
fn a_cancel_later_than_the_peers_registration_is_sent_as_a_cancel() {
    let ours = vec![stamped(removed("o1", 1, 50), 5, 8, 8)];
    let theirs = vec![stamped(live("o1", 1, 90, 100), 5, 0, 0)];
    let repairs = settled(&ours, &theirs);
    assert_eq!(repairs.push, vec![push("o1", Cancel)]);
}

#[test]
fn a_registration_older_than_our_cancel_is_not_fetched_however_recently_renewed() {
    let ours = vec![stamped(removed("o1", 1, 50), 5, 8, 8)];
    let theirs = vec![stamped(live("o1", 1, 90, 1_000), 5, 0, 0)];
    assert!(settled(&ours, &theirs).pull.is_empty());
}

#[test]
fn an_instance_evicted_here_but_renewed_there_since_is_fetched() {
    let ours = vec![stamped(removed("o1", 1, 50), 5, 0, 0)];
    let theirs = vec![stamped(live("o1", 1, 10, 60), 5, 0, 0)];
    assert_eq!(settled(&ours, &theirs).pull, vec![pull("o1")]);
}

#[test]
fn an_eviction_is_not_pushed_to_a_peer_that_never_had_the_instance() {
    let ours = vec![stamped(removed("o1", 1, 50), 5, 0, 0)];
    let theirs = vec![stamped(live("o2", 1, 10, 60), 5, 0, 0)];
    let repairs = settled(&ours, &theirs);
    assert!(repairs.push.is_empty());
    assert_eq!(repairs.pull, vec![pull("o2")]);
}

#[test]
fn a_lagging_renewal_with_equal_stamps_gets_a_heartbeat() {
    let ours = vec![stamped(live("o1", 1, 10, 100_000), 5, 0, 0)];
    let theirs = vec![stamped(live("o1", 1, 10, 1_000), 5, 0, 0)];
    assert_eq!(settled(&ours, &theirs).push, vec![push("o1", Heartbeat)]);
}

#[test]
fn a_renewal_the_peer_saw_later_keeps_our_lease() {
    let ours = vec![stamped(live("o1", 1, 10, 1_000), 5, 0, 0)];
    let theirs = vec![stamped(live("o1", 1, 10, 100_000), 5, 0, 0)];
    let repairs = settled(&ours, &theirs);
    assert_eq!(
        repairs.renew_here,
        vec![("ORDERS".to_owned(), "o1".to_owned(), 100_000)]
    );
    assert!(repairs.push.is_empty() && repairs.pull.is_empty());
}

#[test]
fn renewals_within_the_lag_need_nothing() {
    let ours = vec![stamped(live("o1", 1, 10, 1_000), 5, 0, 0)];
    let theirs = vec![stamped(live("o1", 1, 10, 2_000), 5, 0, 0)];
    assert!(compare(&ours, &theirs, PeerView::Digest, SETTLED, 5_000).is_empty());
    assert!(!compare(&ours, &theirs, PeerView::Digest, SETTLED, 500).is_empty());
}
