//! The rules two servers' copies of an instance are compared and adopted by.

use super::*;
use crate::model::InstanceStatus::{Down, OutOfService, Unknown};
use crate::test_util::live_digest;

fn copy(dirty: Millis, updated: Millis, renewed: Millis) -> InstanceDigest {
    live_digest("ORDERS", "o1", dirty, updated, renewed)
}

// === which copy is newer ===

#[test]
fn the_greater_dirty_timestamp_is_newer() {
    assert!(is_newer(&copy(20, 0, 0), &copy(10, 0, 0)));
    assert!(!is_newer(&copy(10, 0, 0), &copy(20, 0, 0)));
}

#[test]
fn a_greater_dirty_timestamp_beats_a_later_change() {
    assert!(is_newer(&copy(20, 100, 0), &copy(10, 900, 0)));
}

#[test]
fn on_equal_dirty_timestamps_the_later_change_is_newer() {
    assert!(is_newer(&copy(10, 200, 0), &copy(10, 100, 0)));
}

#[test]
fn a_copy_is_not_newer_than_an_equal_one() {
    let equal = copy(10, 100, 0);
    assert!(!is_newer(&equal, &equal.clone()));
}

#[test]
fn copies_differing_only_in_renewals_and_change_times_are_the_same_state() {
    assert!(same_state(&copy(10, 100, 100), &copy(10, 900, 950)));
}

#[test]
fn copies_differing_in_override_are_not_the_same_state() {
    let mut overridden = copy(10, 100, 100);
    overridden.overridden_status = OutOfService;
    assert!(!same_state(&overridden, &copy(10, 100, 100)));
}

#[test]
fn a_change_after_a_removal_outlives_it() {
    assert!(touched_since(&copy(10, 500, 0), 400, false));
    assert!(!touched_since(&copy(10, 400, 0), 400, false));
}

#[test]
fn a_renewal_after_a_removal_outlives_it_only_where_renewals_count() {
    assert!(touched_since(&copy(10, 100, 500), 400, true));
    assert!(!touched_since(&copy(10, 100, 500), 400, false));
}

// === adopting the peer's override ===

#[test]
fn the_peers_override_is_taken_over_ours() {
    for absence in [
        PeerOverrideAbsence::KeepsOurs,
        PeerOverrideAbsence::RemovesOurs,
    ] {
        assert_eq!(
            adopted_override(OutOfService, Down, absence),
            OverrideAdoption::Take(OutOfService)
        );
    }
}

#[test]
fn a_heartbeat_conflicts_copy_without_override_keeps_ours() {
    assert_eq!(
        adopted_override(Unknown, Down, PeerOverrideAbsence::KeepsOurs),
        OverrideAdoption::Keep
    );
}

#[test]
fn a_repairs_copy_without_override_removes_ours() {
    assert_eq!(
        adopted_override(Unknown, Down, PeerOverrideAbsence::RemovesOurs),
        OverrideAdoption::Remove
    );
}

#[test]
fn no_override_on_either_side_changes_nothing() {
    assert_eq!(
        adopted_override(Unknown, Unknown, PeerOverrideAbsence::RemovesOurs),
        OverrideAdoption::Keep
    );
}
