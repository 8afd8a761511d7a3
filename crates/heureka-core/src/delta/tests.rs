//! `apps__hashcode` and the delta document (§5, §6.9).

use crate::delta::apps_hashcode;
use crate::model::ActionType::{self, Added, Deleted, Modified};
use crate::model::InstanceStatus::{self, Down, OutOfService, Starting, Up};
use crate::model::Millis;
use crate::origin::Origin;
use crate::registry::Registry;
use crate::test_util::{
    holding, holding_a1, instance, out_of_service_by_operator, register_all, registry,
};

fn delta_entries(registry: &crate::Registry) -> Vec<(String, String, Option<ActionType>)> {
    registry
        .delta()
        .applications
        .into_iter()
        .flat_map(|app| {
            app.instances
                .into_iter()
                .map(move |i| (app.name.clone(), i.id().to_owned(), i.action_type))
        })
        .collect()
}

fn entry(app: &str, id: &str, action: ActionType) -> (String, String, Option<ActionType>) {
    (app.to_owned(), id.to_owned(), Some(action))
}

/// The delta lists exactly these `(app, id, action)` entries, in this order.
fn assert_delta(registry: &crate::Registry, expected: &[(&str, &str, ActionType)]) {
    let expected: Vec<_> = expected
        .iter()
        .map(|&(app, id, action)| entry(app, id, action))
        .collect();
    assert_eq!(delta_entries(registry), expected);
}

/// `orders/o1` registered and cancelled `rounds` times, a millisecond apart.
fn registered_and_cancelled(rounds: Millis) -> Registry {
    let mut registry = registry();
    for round in 0..rounds {
        registry.register(instance("orders", "o1"), Origin::Client, round * 2);
        registry.cancel("orders", "o1", Origin::Client, round * 2 + 1);
    }
    registry
}

/// `a/a1` registered at 0, cancelled at 10 and registered again at 20.
fn registered_again_after_a_cancel() -> Registry {
    let mut registry = holding_a1(registry());
    registry.cancel("a", "a1", Origin::Client, 10);
    register_all(&mut registry, &[("a", "a1")], 20);
    registry
}

#[test]
fn hashcode_counts_statuses_sorted_by_name() {
    assert_eq!(apps_hashcode(&[Up, Down, Up, Up]), "DOWN_1_UP_3_");
}

#[test]
fn hashcode_orders_out_of_service_before_starting() {
    let statuses = [Up, OutOfService, Up, Starting, Up, OutOfService, Up, Up];
    assert_eq!(
        apps_hashcode(&statuses),
        "OUT_OF_SERVICE_2_STARTING_1_UP_5_"
    );
}

#[test]
fn hashcode_of_nothing_is_empty() {
    assert_eq!(apps_hashcode(&[] as &[InstanceStatus]), "");
}

#[test]
fn delta_lists_registrations_as_added() {
    let registry = holding(registry(), &[("a", "a1"), ("b", "b1")], 0);
    assert_delta(&registry, &[("A", "a1", Added), ("B", "b1", Added)]);
}

#[test]
fn delta_shows_cancelled_instance_as_deleted() {
    let mut registry = holding_a1(registry());
    registry.cancel("a", "a1", Origin::Client, 10);
    let delta = registry.delta();
    let deleted = &delta.applications[0].instances[0];
    assert_eq!(deleted.action_type, Some(Deleted));
    assert_eq!(deleted.lease_info.eviction_timestamp, 10);
    assert_eq!(delta.applications[0].instances.len(), 1);
}

#[test]
fn delta_shows_reregistration_after_cancel_as_added() {
    let registry = registered_again_after_a_cancel();
    assert_delta(&registry, &[("A", "a1", Added)]);
}

#[test]
fn delta_shows_register_then_status_update_as_one_modified_entry() {
    let registry = out_of_service_by_operator();
    assert_delta(&registry, &[("A", "a1", Modified)]);
}

#[test]
fn later_change_moves_an_instance_to_the_end_of_its_app() {
    let mut registry = holding(registry(), &[("a", "a1"), ("a", "a2")], 0);
    registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 10);
    let ids: Vec<String> = registry.delta().applications[0]
        .instances
        .iter()
        .map(|i| i.id().to_owned())
        .collect();
    assert_eq!(ids, ["a2", "a1"]);
}

#[test]
fn delta_shows_the_instance_as_it_is_now() {
    let mut registry = holding_a1(registry());
    let mut newer = instance("a", "a1");
    newer.ip_addr = "10.9.9.9".to_owned();
    registry.register(newer, Origin::Client, 10);
    let delta = registry.delta();
    assert_eq!(delta.applications[0].instances.len(), 1);
    assert_eq!(delta.applications[0].instances[0].ip_addr, "10.9.9.9");
}

#[test]
fn delta_hash_covers_the_full_registry() {
    let mut registry = holding(registry(), &[("a", "a1"), ("a", "a2"), ("b", "b1")], 0);
    registry.purge_recently_changed(1_000_000);
    register_all(&mut registry, &[("c", "c1")], 1_000_000);
    let delta = registry.delta();
    assert_eq!(delta.applications.len(), 1);
    assert_eq!(delta.apps_hashcode, "UP_4_");
}

#[test]
fn delta_entries_older_than_retention_are_purged() {
    let mut registry = holding_a1(registry());
    register_all(&mut registry, &[("b", "b1")], 100_000);
    registry.purge_recently_changed(180_001);
    assert_delta(&registry, &[("B", "b1", Added)]);
}

#[test]
fn delta_entries_exactly_at_retention_are_kept() {
    let mut registry = holding_a1(registry());
    registry.purge_recently_changed(180_000);
    assert_eq!(registry.recently_changed_len(), 1);
}

#[test]
fn purge_that_drops_items_bumps_the_version() {
    let mut registry = holding_a1(registry());
    let before = registry.version();
    registry.purge_recently_changed(100_000);
    assert_eq!(registry.version(), before);
    registry.purge_recently_changed(200_000);
    assert!(registry.version() > before);
}

#[test]
fn empty_delta_still_has_version_and_hash() {
    let registry = registry();
    let delta = registry.delta();
    assert!(delta.applications.is_empty());
    assert!(delta.versions_delta >= 1);
    assert_eq!(delta.apps_hashcode, "");
}

#[test]
fn delta_version_increases_with_changes() {
    let mut registry = registry();
    let first = registry.delta().versions_delta;
    register_all(&mut registry, &[("a", "a1")], 0);
    assert!(registry.delta().versions_delta > first);
}

#[test]
fn register_cancel_loop_keeps_one_delta_item_per_instance() {
    // Issue 7, defect 4: each cancel kept a full copy of the instance for the retention window.
    let registry = registered_and_cancelled(1_000);
    assert_eq!(registry.recently_changed_len(), 1);
    assert_delta(&registry, &[("ORDERS", "o1", Deleted)]);
}

#[test]
fn reregister_after_cancel_leaves_one_delta_item() {
    let registry = registered_again_after_a_cancel();
    assert_eq!(registry.recently_changed_len(), 1);
}

#[test]
fn reregister_after_cancel_forgets_the_tombstone_index_entry() {
    let registry = registered_again_after_a_cancel();
    assert!(registry.recently_changed.deleted.is_empty());
}

#[test]
fn change_after_its_earlier_item_was_purged_queues_one_item() {
    // The lease still holds the purged item's number; replacing it must drop nothing else.
    let mut registry = holding_a1(registry());
    registry.purge_recently_changed(200_000);
    register_all(&mut registry, &[("b", "b1")], 200_000);
    registry.set_status_override("a", "a1", OutOfService, None, Origin::Client, 200_001);
    assert_delta(&registry, &[("B", "b1", Added), ("A", "a1", Modified)]);
}

#[test]
fn cancel_after_its_earlier_item_was_purged_queues_one_deleted_item() {
    let mut registry = holding_a1(registry());
    registry.purge_recently_changed(200_000);
    registry.cancel("a", "a1", Origin::Client, 200_001);
    assert_delta(&registry, &[("A", "a1", Deleted)]);
}

#[test]
fn purge_of_a_deleted_item_forgets_its_tombstone_index_entry() {
    let mut registry = holding_a1(registry());
    registry.cancel("a", "a1", Origin::Client, 10);
    registry.purge_recently_changed(200_000);
    assert_eq!(registry.recently_changed_len(), 0);
    assert!(registry.recently_changed.deleted.is_empty());
}

#[test]
fn reregister_after_its_deleted_item_was_purged_queues_one_added_item() {
    let mut registry = holding_a1(registry());
    registry.cancel("a", "a1", Origin::Client, 10);
    registry.purge_recently_changed(200_000);
    register_all(&mut registry, &[("a", "a1")], 200_001);
    assert_delta(&registry, &[("A", "a1", Added)]);
}

#[test]
fn register_cancel_loop_keeps_one_tombstone_index_entry() {
    let registry = registered_and_cancelled(100);
    assert_eq!(registry.recently_changed.deleted.len(), 1);
}
