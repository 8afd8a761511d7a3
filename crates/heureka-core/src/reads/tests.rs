//! What readers get: decorated instances, full and VIP documents, single lookups (§3.2–3.6,
//! §3.14, §6.1).

use crate::lease::LeaseExpiry;
use crate::model::InstanceStatus::{self, Down, Up};
use crate::model::{Instance, Millis};
use crate::origin::Origin;
use crate::policy::RegistryPolicy;
use crate::test_util::{
    expiring_registry, heartbeat, holding, holding_a1, instance, instance_with_status,
    register_all, registry, registry_with,
};
use proptest::prelude::*;

fn with_vips(app: &str, id: &str, vip: &str, secure_vip: &str) -> Instance {
    Instance {
        vip_address: Some(vip.to_owned()),
        secure_vip_address: Some(secure_vip.to_owned()),
        ..instance(app, id)
    }
}

/// A registry holding these instances, each registered by its client at time 0.
fn registered(instances: impl IntoIterator<Item = Instance>) -> crate::Registry {
    let mut registry = registry();
    for instance in instances {
        registry.register(instance, Origin::Client, 0);
    }
    registry
}

fn vip_ids(registry: &crate::Registry, vip: &str, secure: bool) -> Vec<String> {
    let apps = registry.vip(vip, secure).applications;
    apps.iter()
        .flat_map(|app| app.instances.iter().map(|i| i.id().to_owned()))
        .collect()
}

#[test]
fn full_registry_has_version_one_and_hash_of_all_instances() {
    let mut registry = holding(registry(), &[("b", "b1"), ("a", "a1")], 0);
    registry.register(instance_with_status("a", "a2", Down), Origin::Client, 0);
    let apps = registry.applications();
    assert_eq!(
        (apps.versions_delta, apps.apps_hashcode.as_str()),
        (1, "DOWN_1_UP_2_")
    );
    let names: Vec<&str> = apps
        .applications
        .iter()
        .map(|app| app.name.as_str())
        .collect();
    assert_eq!(names, ["A", "B"]);
}

#[test]
fn applications_omits_apps_with_no_instances() {
    let mut registry = holding(registry(), &[("a", "a1"), ("b", "b1")], 0);
    registry.cancel("a", "a1", Origin::Client, 1);
    let apps = registry.applications();
    assert_eq!(apps.applications.len(), 1);
    assert_eq!(apps.apps_hashcode, "UP_1_");
}

#[test]
fn full_registry_serves_expired_leases_not_yet_evicted() {
    let registry = holding_a1(expiring_registry());
    assert!(registry.instance("a", "a1", 200_000).is_none());
    assert_eq!(registry.applications().apps_hashcode, "UP_1_");
}

#[test]
fn reads_carry_lease_timestamps() {
    let policy = RegistryPolicy {
        lease_expiry: LeaseExpiry::LegacyDoubleDuration,
        ..RegistryPolicy::default()
    };
    let mut registry = registry_with(policy);
    register_all(&mut registry, &[("a", "a1")], 1_000);
    heartbeat(&mut registry, "a", "a1", 31_000);
    let lease_info = registry.applications().applications[0].instances[0].lease_info;
    assert_eq!(lease_info.registration_timestamp, 1_000);
    assert_eq!(lease_info.last_renewal_timestamp, 121_000);
    assert_eq!(
        (
            lease_info.renewal_interval_in_secs,
            lease_info.duration_in_secs
        ),
        (30, 90)
    );
}

#[test]
fn application_is_none_when_unknown_or_empty() {
    let mut registry = registry();
    assert!(registry.application("a").is_none());
    register_all(&mut registry, &[("a", "a1")], 0);
    registry.cancel("a", "a1", Origin::Client, 1);
    assert!(registry.application("a").is_none());
}

#[test]
fn application_lists_instances_by_id() {
    let registry = holding(registry(), &[("a", "a2"), ("a", "a1")], 0);
    let app = registry.application("a").unwrap();
    let ids: Vec<&str> = app.instances.iter().map(Instance::id).collect();
    assert_eq!(ids, ["a1", "a2"]);
}

#[test]
fn expired_instance_is_hidden_when_expiry_is_enabled() {
    let registry = holding_a1(expiring_registry());
    assert!(registry.instance("a", "a1", 90_000).is_some());
    assert!(registry.instance("a", "a1", 90_001).is_none());
    assert!(registry.instance_by_id("a1", 90_001).is_none());
}

#[test]
fn expired_instance_is_served_in_self_preservation() {
    let registry = holding_a1(registry());
    assert!(registry.instance("a", "a1", 500_000).is_some());
}

#[test]
fn instance_by_id_searches_every_app() {
    let registry = holding(
        registry(),
        &[("a", "a1"), ("b", "shared"), ("c", "shared")],
        0,
    );
    assert_eq!(registry.instance_by_id("shared", 0).unwrap().app, "B");
    assert!(registry.instance_by_id("nope", 0).is_none());
}

#[test]
fn own_instance_is_marked_coordinating_server() {
    let mut registry = registry();
    registry.set_own_instance_id(Some("me".to_owned()));
    let mut claims = instance("eureka", "other");
    claims.is_coordinating_discovery_server = true;
    registry.register(claims, Origin::Client, 0);
    register_all(&mut registry, &[("eureka", "me")], 0);
    assert!(
        registry
            .instance("eureka", "me", 0)
            .unwrap()
            .is_coordinating_discovery_server
    );
    assert!(
        !registry
            .instance("eureka", "other", 0)
            .unwrap()
            .is_coordinating_discovery_server
    );
}

#[test]
fn vip_matches_one_comma_separated_part_exactly() {
    let registry = registered([
        with_vips("a", "a1", "orders,billing", "s-orders"),
        with_vips("b", "b1", "orders-v2", "s-orders"),
    ]);
    assert_eq!(vip_ids(&registry, "billing", false), ["a1"]);
    assert_eq!(vip_ids(&registry, "orders", false), ["a1"]);
    assert!(
        vip_ids(&registry, "ORDERS", false).is_empty(),
        "case-sensitive"
    );
}

#[test]
fn vip_parts_are_not_trimmed() {
    let registry = registered([with_vips("a", "a1", "orders, billing", "")]);
    assert!(vip_ids(&registry, "billing", false).is_empty());
    assert_eq!(vip_ids(&registry, " billing", false), ["a1"]);
}

#[test]
fn secure_vip_uses_the_secure_address() {
    let registry = registered([with_vips("a", "a1", "orders", "s-orders")]);
    assert_eq!(vip_ids(&registry, "s-orders", true), ["a1"]);
    assert!(vip_ids(&registry, "orders", true).is_empty());
}

#[test]
fn vip_document_has_version_minus_one_and_hash_of_the_subset() {
    let registry = registered([with_vips("a", "a1", "orders", ""), instance("b", "b1")]);
    let selection = registry.vip("orders", false);
    assert_eq!(
        (selection.versions_delta, selection.apps_hashcode.as_str()),
        (-1, "UP_1_")
    );
    let empty = registry.vip("unknown", false);
    assert!(empty.applications.is_empty());
    assert_eq!(empty.apps_hashcode, "");
    assert_eq!(Up.as_str(), "UP");
}

fn app_version(registry: &crate::Registry, app: &str) -> u64 {
    registry
        .application_versions()
        .into_iter()
        .find(|entry| entry.name == app)
        .map(|entry| entry.version)
        .expect("app is listed")
}

#[test]
fn application_versions_list_non_empty_apps_by_name_with_instance_counts() {
    let mut registry = holding(registry(), &[("b", "b1"), ("a", "a1"), ("c", "c1")], 0);
    registry.cancel("c", "c1", Origin::Client, 1);
    registry.register(instance("b", "b2"), Origin::Client, 1);
    let listed: Vec<(&str, usize)> = registry
        .application_versions()
        .into_iter()
        .map(|entry| (entry.name, entry.instances))
        .collect();
    assert_eq!(listed, [("A", 1), ("B", 2)]);
}

#[test]
fn application_version_moves_only_for_the_application_that_changed() {
    let mut registry = holding(registry(), &[("a", "a1"), ("b", "b1")], 0);
    let (a_before, b_before) = (app_version(&registry, "A"), app_version(&registry, "B"));
    registry.set_status_override(
        "a",
        "a1",
        InstanceStatus::OutOfService,
        None,
        Origin::Client,
        1,
    );
    assert!(app_version(&registry, "A") > a_before);
    assert_eq!(app_version(&registry, "B"), b_before);
    assert_eq!(app_version(&registry, "A"), registry.version());
}

#[test]
fn heartbeats_move_no_application_version() {
    let mut registry = holding_a1(registry());
    let before = app_version(&registry, "A");
    heartbeat(&mut registry, "a", "a1", 30_000);
    assert_eq!(app_version(&registry, "A"), before);
}

#[test]
fn full_hashcode_counts_every_lease() {
    let mut registry = holding(registry(), &[("a", "a1"), ("a", "a2")], 0);
    registry.register(instance_with_status("b", "b1", Down), Origin::Client, 0);
    assert_eq!(registry.full_hashcode(), "DOWN_1_UP_2_");
}

#[test]
fn status_counts_group_instances_by_application_and_status() {
    let mut registry = holding(registry(), &[("b", "b1"), ("a", "a1"), ("a", "a2")], 0);
    registry.register(instance_with_status("a", "a3", Down), Origin::Client, 0);
    let counts: Vec<(&str, InstanceStatus, usize)> = registry
        .status_counts()
        .iter()
        .map(|count| (count.app, count.status, count.instances))
        .collect();
    assert_eq!(counts, [("A", Down, 1), ("A", Up, 2), ("B", Up, 1)]);
}

#[test]
fn delta_items_taken_by_number_show_what_the_delta_shows_for_them_now() {
    let registry = holding(registry(), &[("APP", "a"), ("APP", "b"), ("OTHER", "c")], 1);
    let numbers: Vec<(String, Vec<u64>)> = registry
        .delta_applications()
        .iter()
        .map(|app| (app.name.to_owned(), app.item_numbers()))
        .collect();
    for (entry, (name, numbers)) in registry.delta_applications().iter().zip(&numbers) {
        let items = registry.delta_application_items(name, numbers);
        assert_eq!(items.version, entry.version);
        assert_eq!(items.queued, entry.instances);
        assert_eq!(items.application, registry.delta_application(entry));
    }
}

#[test]
fn delta_items_replaced_since_are_not_shown_and_the_version_says_so() {
    let mut registry = holding(registry(), &[("APP", "a"), ("APP", "b")], 1);
    let before = &registry.delta_applications()[0];
    let (version, numbers) = (before.version, before.item_numbers());
    assert!(registry.cancel("APP", "a", Origin::Client, 2));
    let items = registry.delta_application_items("APP", &numbers);
    assert_eq!(items.queued, 1, "a's live item gave way to its DELETED one");
    assert_ne!(items.version, version);
    let shown: Vec<&str> = items
        .application
        .iter()
        .flat_map(|app| &app.instances)
        .filter_map(|i| i.instance_id.as_deref())
        .collect();
    assert_eq!(shown, ["b"]);
}

/// A write of the kinds that can add, remove or change the status of an instance, from a
/// client or a peer, for the property below.
#[derive(Clone, Debug)]
enum Write {
    Register(usize, InstanceStatus, InstanceStatus, Millis, bool),
    Renew(usize, Option<Millis>, Option<InstanceStatus>, bool),
    Cancel(usize),
    Override(usize, InstanceStatus),
    RemoveOverride(usize, Option<InstanceStatus>),
    Metadata(usize),
    AdoptPeerCopy(usize, InstanceStatus, InstanceStatus),
    Evict(u64),
    Purge,
}

/// Few instances over few applications, so writes keep hitting the same ones and
/// applications keep emptying and filling again.
fn key(n: usize) -> (String, String) {
    (format!("app{}", n % 3), format!("i{n}"))
}

fn any_status() -> impl Strategy<Value = InstanceStatus> {
    proptest::sample::select(InstanceStatus::BY_NAME.to_vec())
}

fn any_write() -> impl Strategy<Value = Write> {
    let id = 0..7usize;
    let origin = any::<bool>();
    prop_oneof![
        (id.clone(), any_status(), any_status(), 0..3i64, origin)
            .prop_map(|(n, s, o, d, p)| Write::Register(n, s, o, d, p)),
        (
            id.clone(),
            proptest::option::of(0..3i64),
            proptest::option::of(any_status()),
            origin
        )
            .prop_map(|(n, d, o, p)| Write::Renew(n, d, o, p)),
        id.clone().prop_map(Write::Cancel),
        (id.clone(), any_status()).prop_map(|(n, s)| Write::Override(n, s)),
        (id.clone(), proptest::option::of(any_status()))
            .prop_map(|(n, s)| Write::RemoveOverride(n, s)),
        id.clone().prop_map(Write::Metadata),
        (id, any_status(), any_status()).prop_map(|(n, s, o)| Write::AdoptPeerCopy(n, s, o)),
        any::<u64>().prop_map(Write::Evict),
        Just(Write::Purge),
    ]
}

fn origin(peer: bool) -> Origin {
    if peer {
        Origin::Peer
    } else {
        Origin::Client
    }
}

fn apply(registry: &mut crate::Registry, write: &Write, now: Millis) {
    match write.clone() {
        Write::Register(n, status, overridden, dirty, peer) => {
            let (app, id) = key(n);
            let instance = Instance {
                overridden_status: overridden,
                ..instance_with_status(&app, &id, status)
            };
            registry.register(
                Instance {
                    last_dirty_timestamp: dirty,
                    ..instance
                },
                origin(peer),
                now,
            );
        }
        Write::Renew(n, dirty, overridden, peer) => {
            let (app, id) = key(n);
            registry.renew(&app, &id, dirty, overridden, origin(peer), now);
        }
        Write::Cancel(n) => {
            let (app, id) = key(n);
            registry.cancel(&app, &id, Origin::Client, now);
        }
        Write::Override(n, status) => {
            let (app, id) = key(n);
            registry.set_status_override(&app, &id, status, None, Origin::Client, now);
        }
        Write::RemoveOverride(n, status) => {
            let (app, id) = key(n);
            registry.delete_status_override(&app, &id, status, None, Origin::Client, now);
        }
        Write::Metadata(n) => {
            let (app, id) = key(n);
            let _ = registry.update_metadata(&app, &id, vec![("k".into(), now.to_string())], now);
        }
        Write::AdoptPeerCopy(n, status, overridden) => {
            let (app, id) = key(n);
            let instance = Instance {
                overridden_status: overridden,
                ..instance_with_status(&app, &id, status)
            };
            registry.adopt_peer_copy(instance, now);
        }
        // Far enough ahead that every lease has expired; the limit spares some.
        Write::Evict(seed) => {
            registry.evict(now + 10_000_000, 0, seed);
        }
        Write::Purge => registry.purge_recently_changed(now),
    }
}

proptest! {
    #[test]
    fn maintained_hashcode_and_application_list_always_equal_the_walk(
        writes in proptest::collection::vec(any_write(), 1..60),
    ) {
        let mut registry = expiring_registry();
        let mut now = 1_000;
        for write in &writes {
            apply(&mut registry, write, now);
            now += 1_000;
            prop_assert_eq!(registry.full_hashcode(), registry.walked_hashcode());
            prop_assert_eq!(
                registry.application_versions(),
                registry.walked_application_versions()
            );
        }
    }
}

#[test]
fn a_changed_instance_is_the_live_lease_with_its_last_action() {
    let mut registry = holding(registry(), &[("a", "a1")], 0);
    let added = registry.changed_instance("a", "a1").unwrap();
    assert_eq!(added.action_type, Some(crate::ActionType::Added));
    registry.set_status_override(
        "a",
        "a1",
        InstanceStatus::OutOfService,
        None,
        Origin::Client,
        1,
    );
    let modified = registry.changed_instance("A", "a1").unwrap();
    assert_eq!(
        (modified.action_type, modified.status),
        (
            Some(crate::ActionType::Modified),
            InstanceStatus::OutOfService
        )
    );
}

#[test]
fn a_cancelled_instance_is_the_copy_kept_for_the_delta() {
    let mut registry = holding(registry(), &[("a", "a1")], 0);
    registry.cancel("a", "a1", Origin::Client, 1);
    let deleted = registry.changed_instance("a", "a1").unwrap();
    assert_eq!(deleted.action_type, Some(crate::ActionType::Deleted));
    assert_eq!(registry.changed_instance("a", "never"), None);
}
