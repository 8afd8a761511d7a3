//! The eviction run of §6.12: what expires, how many go per run, and who is picked.

use std::collections::BTreeSet;

use crate::eviction::{choose_randomly, eviction_limit};
use crate::model::ActionType;
use crate::origin::Origin;
use crate::registry::Registry;
use crate::test_util::{expiring_registry, heartbeat, holding, holding_a1, register_all, registry};

/// Past the 90 s lease of anything registered at 0 and never renewed.
const LATER: i64 = 90_001;

fn register_apps(registry: &mut Registry, count: usize) {
    for n in 0..count {
        let app = format!("app{n}");
        register_all(registry, &[(&app, "i1")], 0);
    }
}

#[test]
fn eviction_limit_examples() {
    assert_eq!(eviction_limit(0, 0.85), 0);
    assert_eq!(eviction_limit(1, 0.85), 1);
    assert_eq!(eviction_limit(10, 0.85), 2);
    assert_eq!(eviction_limit(20, 0.85), 3);
    assert_eq!(eviction_limit(100, 0.85), 15);
}

#[test]
fn eviction_is_capped_at_15_percent_of_registry() {
    let mut registry = expiring_registry();
    register_apps(&mut registry, 20);
    let report = registry.evict(LATER, 0, 7);
    assert_eq!(
        (report.registry_size, report.expired, report.eviction_limit),
        (20, 20, 3)
    );
    assert_eq!(report.evicted.len(), 3);
    assert_eq!(registry.registry_size(), 17);
}

#[test]
fn only_expired_leases_are_evicted() {
    let mut registry = holding(expiring_registry(), &[("a", "a1"), ("b", "b1")], 0);
    heartbeat(&mut registry, "b", "b1", 60_000);
    let report = registry.evict(LATER, 0, 1);
    assert_eq!(report.evicted, vec![("A".to_owned(), "a1".to_owned())]);
}

#[test]
fn compensation_time_holds_eviction_back() {
    let mut registry = holding_a1(expiring_registry());
    assert_eq!(registry.evict(LATER, 10_000, 1).expired, 0);
    assert_eq!(registry.evict(LATER + 10_000, 10_000, 1).expired, 1);
}

#[test]
fn eviction_does_nothing_in_self_preservation() {
    let mut registry = holding_a1(registry());
    let report = registry.evict(LATER, 0, 1);
    assert!(!report.lease_expiration_enabled);
    assert_eq!(report.expired, 1);
    assert!(report.evicted.is_empty());
    assert_eq!(registry.registry_size(), 1);
}

#[test]
fn evicted_lease_appears_in_delta_as_deleted() {
    let mut registry = holding_a1(expiring_registry());
    registry.evict(LATER, 0, 1);
    let delta = registry.delta();
    assert_eq!(
        delta.applications[0].instances[0].action_type,
        Some(ActionType::Deleted)
    );
    assert!(registry.application("a").is_none());
}

#[test]
fn eviction_decrements_expected_clients_like_a_cancel() {
    let mut registry = holding_a1(expiring_registry());
    assert_eq!(registry.self_preservation().expected_clients, 2);
    registry.evict(LATER, 0, 1);
    assert_eq!(registry.self_preservation().expected_clients, 1);
}

#[test]
fn eviction_bumps_the_version() {
    let mut registry = holding_a1(expiring_registry());
    let before = registry.version();
    registry.evict(LATER, 0, 1);
    assert!(registry.version() > before);
}

#[test]
fn same_seed_evicts_the_same_leases() {
    let run = |seed| {
        let mut registry = expiring_registry();
        register_apps(&mut registry, 20);
        registry.evict(LATER, 0, seed).evicted
    };
    assert_eq!(run(42), run(42));
}

#[test]
fn random_choice_covers_different_apps_with_different_seeds() {
    let mut evicted_apps = BTreeSet::new();
    for seed in 0..50 {
        let mut registry = expiring_registry();
        register_apps(&mut registry, 10);
        for (app, _) in registry.evict(LATER, 0, seed).evicted {
            evicted_apps.insert(app);
        }
    }
    assert!(
        evicted_apps.len() >= 8,
        "only {evicted_apps:?} were ever picked"
    );
}

#[test]
fn random_choice_picks_distinct_items() {
    let chosen = choose_randomly((0..100).collect::<Vec<_>>(), 30, 9);
    let distinct: BTreeSet<_> = chosen.iter().collect();
    assert_eq!((chosen.len(), distinct.len()), (30, 30));
}

#[test]
fn random_choice_of_more_than_available_takes_all() {
    assert_eq!(choose_randomly(vec![1, 2], 5, 0).len(), 2);
}

#[test]
fn cancelled_then_evicted_nothing_left_to_evict() {
    let mut registry = holding_a1(expiring_registry());
    registry.cancel("a", "a1", Origin::Client, 10);
    assert_eq!(registry.evict(LATER, 0, 1).expired, 0);
}
