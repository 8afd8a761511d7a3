//! Properties of the registry under random sequences of writes: a client that fetches the
//! full registry once and then applies every delta holds exactly the full registry, and the
//! `apps__hashcode` of every document agrees with what it lists.
//!
//! Eviction here is "every lease expired" (time jumps far ahead), so sequences exercise both
//! explicit removals and the eviction path.

use std::collections::BTreeMap;

use heureka_core::{
    apps_hashcode, ActionType, Instance, InstanceStatus, Origin, Registry, RegistryPolicy,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Write {
    Register(usize, InstanceStatus),
    Renew(usize),
    Cancel(usize),
    Override(usize, InstanceStatus),
    RemoveOverride(usize),
    Metadata(usize, u8),
    Evict,
}

const IDS: usize = 6;

fn key(n: usize) -> (String, String) {
    (format!("APP{}", n % 3), format!("i{n}"))
}

fn status() -> impl Strategy<Value = InstanceStatus> {
    prop_oneof![
        Just(InstanceStatus::Up),
        Just(InstanceStatus::Down),
        Just(InstanceStatus::Starting),
        Just(InstanceStatus::OutOfService),
    ]
}

fn write() -> impl Strategy<Value = Write> {
    let id = 0..IDS;
    prop_oneof![
        (id.clone(), status()).prop_map(|(n, s)| Write::Register(n, s)),
        id.clone().prop_map(Write::Renew),
        id.clone().prop_map(Write::Cancel),
        (id.clone(), status()).prop_map(|(n, s)| Write::Override(n, s)),
        id.clone().prop_map(Write::RemoveOverride),
        (id, any::<u8>()).prop_map(|(n, v)| Write::Metadata(n, v)),
        Just(Write::Evict),
    ]
}

fn apply(registry: &mut Registry, write: &Write, now: i64) {
    match write {
        Write::Register(n, status) => {
            let (app, id) = key(*n);
            let mut instance = Instance::new(&app, &id, "host", "10.0.0.1", now);
            instance.status = *status;
            registry.register(instance, Origin::Client, now);
        }
        Write::Renew(n) => {
            let (app, id) = key(*n);
            registry.renew(&app, &id, None, None, Origin::Client, now);
        }
        Write::Cancel(n) => {
            let (app, id) = key(*n);
            registry.cancel(&app, &id, Origin::Client, now);
        }
        Write::Override(n, status) => {
            let (app, id) = key(*n);
            registry.set_status_override(&app, &id, *status, None, Origin::Client, now);
        }
        Write::RemoveOverride(n) => {
            let (app, id) = key(*n);
            registry.delete_status_override(&app, &id, None, None, Origin::Client, now);
        }
        Write::Metadata(n, value) => {
            let (app, id) = key(*n);
            let _ = registry.update_metadata(&app, &id, vec![("v".into(), value.to_string())], now);
        }
        // Far enough ahead that every lease has expired.
        Write::Evict => {
            registry.evict(now + 10_000_000, 0, now as u64);
        }
    }
}

type View = BTreeMap<(String, String), (InstanceStatus, BTreeMap<String, String>)>;

fn full_view(registry: &Registry) -> View {
    registry
        .applications()
        .applications
        .into_iter()
        .flat_map(|app| app.instances)
        .map(|i| ((i.app.clone(), i.id().to_owned()), (i.status, i.metadata)))
        .collect()
}

proptest! {
    #[test]
    fn full_fetch_then_deltas_reproduces_the_registry(
        before in proptest::collection::vec(write(), 0..20),
        after in proptest::collection::vec(write(), 1..40),
    ) {
        // A retention of one step and a half: each delta holds only the last write or two, so a
        // write that left no delta item cannot hide behind an earlier item of its instance.
        let policy = RegistryPolicy {
            enable_self_preservation: false,
            delta_retention_ms: 15,
            ..RegistryPolicy::default()
        };
        let mut registry = Registry::new(policy, 0);
        registry.open_for_traffic(1, 0);
        let mut now = 1_000;
        for write in &before {
            apply(&mut registry, write, now);
            now += 10;
        }
        let mut client = full_view(&registry);
        for write in &after {
            apply(&mut registry, write, now);
            registry.purge_recently_changed(now);
            now += 10;
            let delta = registry.delta();
            for instance in delta.applications.iter().flat_map(|app| &app.instances) {
                let key = (instance.app.clone(), instance.id().to_owned());
                match instance.action_type {
                    Some(ActionType::Deleted) => { client.remove(&key); }
                    _ => { client.insert(key, (instance.status, instance.metadata.clone())); }
                }
            }
            let full = registry.applications();
            prop_assert_eq!(&client, &full_view(&registry));
            let client_hash = apps_hashcode(client.values().map(|(status, _)| status));
            prop_assert_eq!(&client_hash, &delta.apps_hashcode);
            prop_assert_eq!(&full.apps_hashcode, &delta.apps_hashcode);
            let listed = apps_hashcode(full.applications.iter().flat_map(|a| &a.instances).map(|i| &i.status));
            prop_assert_eq!(&full.apps_hashcode, &listed);
        }
    }
}
