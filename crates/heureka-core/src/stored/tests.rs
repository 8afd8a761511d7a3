//! The stored form of an instance: the same data as the instance, shared strings stored once.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::{ActionType, DataCenterClass, DataCenterInfo, Instance, InstanceStatus, Port};
use crate::origin::Origin;
use crate::stored::{Interner, StoredInstance};
use crate::test_util::{instance, registry};

/// An instance with every optional field set, Amazon data-centre metadata included.
fn everything_set() -> Instance {
    Instance {
        instance_id: Some("i-1".to_owned()),
        sid: "sid-7".to_owned(),
        status: InstanceStatus::OutOfService,
        overridden_status: InstanceStatus::OutOfService,
        port: Port {
            number: 8080,
            enabled: true,
        },
        secure_port: Port {
            number: 8443,
            enabled: true,
        },
        country_id: 3,
        data_center_info: Some(DataCenterInfo {
            class: DataCenterClass::Amazon,
            name: "Amazon".to_owned(),
            metadata: BTreeMap::from([
                ("instance-id".to_owned(), "i-0abc".to_owned()),
                ("availability-zone".to_owned(), "eu-west-1a".to_owned()),
            ]),
        }),
        metadata: BTreeMap::from([
            ("zone".to_owned(), "a".to_owned()),
            ("management.port".to_owned(), "8081".to_owned()),
        ]),
        app_group_name: Some("GROUP".to_owned()),
        home_page_url: Some("http://h/".to_owned()),
        status_page_url: Some("http://h/info".to_owned()),
        health_check_url: Some("http://h/health".to_owned()),
        secure_health_check_url: Some("https://h/health".to_owned()),
        vip_address: Some("orders".to_owned()),
        secure_vip_address: Some("orders-secure".to_owned()),
        is_coordinating_discovery_server: true,
        last_updated_timestamp: 11,
        last_dirty_timestamp: 12,
        action_type: Some(ActionType::Modified),
        asg_name: Some("asg".to_owned()),
        ..Instance::new("ORDERS", "i-1", "h", "10.0.0.9", 0)
    }
}

#[test]
fn stored_instance_gives_back_every_field_it_was_given() {
    let mut names = Interner::default();
    for original in [everything_set(), instance("app", "a1")] {
        let stored = StoredInstance::new(original.clone(), &mut names);
        assert_eq!(stored.to_instance(), original);
    }
}

#[test]
fn stored_instance_id_follows_the_instance_id_rules() {
    let mut names = Interner::default();
    let with_id = everything_set();
    let amazon_without_id = Instance {
        instance_id: None,
        ..everything_set()
    };
    let only_host = Instance {
        instance_id: Some(String::new()),
        data_center_info: Some(DataCenterInfo::my_own()),
        ..everything_set()
    };
    for original in [with_id, amazon_without_id, only_host] {
        let stored = StoredInstance::new(original.clone(), &mut names);
        assert_eq!(stored.id(), original.id());
    }
}

#[test]
fn instances_of_one_application_share_one_copy_of_its_names() {
    let mut names = Interner::default();
    let first = StoredInstance::new(everything_set(), &mut names);
    let second = StoredInstance::new(
        Instance {
            instance_id: Some("i-2".to_owned()),
            ..everything_set()
        },
        &mut names,
    );
    assert!(Arc::ptr_eq(&first.app, &second.app));
    assert!(Arc::ptr_eq(
        first.vip_address.as_ref().unwrap(),
        second.vip_address.as_ref().unwrap()
    ));
}

#[test]
fn interner_forgets_names_no_instance_carries_any_more() {
    let mut names = Interner::default();
    let kept = StoredInstance::new(instance("kept", "k1"), &mut names);
    let dropped = StoredInstance::new(
        Instance {
            metadata: BTreeMap::from([("only-here".to_owned(), "x".to_owned())]),
            ..instance("dropped", "d1")
        },
        &mut names,
    );
    let before = names.len();
    drop(dropped);
    names.purge_unused(|_| false);
    // `DROPPED` and `only-here` go; `KEPT`, `na` and `MyOwn` stay for the instance kept.
    assert_eq!(names.len(), before - 2);
    assert_eq!(kept.to_instance(), instance("kept", "k1"));
}

#[test]
fn names_of_cancelled_instances_go_once_the_delta_queue_forgets_them() {
    let mut registry = registry();
    for n in 0..50 {
        let app = format!("app-{n}");
        registry.register(instance(&app, "i"), Origin::Client, 1_000);
        registry.cancel(&app, "i", Origin::Client, 1_000);
    }
    // As the server takes them after every write: the changes share the names too.
    drop(registry.take_changes());
    registry.purge_recently_changed(1_000 + registry.policy.delta_retention_ms + 1);
    assert_eq!(registry.names.len(), 0);
}

/// A heartbeat reads a holder's name, dirty timestamp, statuses and verdict: they share the
/// first cache line of the holder, which takes the allocator's 384-byte class, whose blocks
/// start on a line boundary (`StoredInstance`'s comment).
#[test]
fn a_renewal_reads_the_first_line_of_its_holder() {
    use std::mem::{offset_of, size_of};
    let ends = [
        offset_of!(StoredInstance, app) + size_of::<crate::stored::Name>(),
        offset_of!(StoredInstance, last_dirty_timestamp) + 8,
        offset_of!(StoredInstance, status) + 1,
        offset_of!(StoredInstance, overridden_status) + 1,
        offset_of!(StoredInstance, health) + 1,
    ];
    assert!(ends.iter().all(|end| *end <= 64), "{ends:?}");
    assert!((321..=384).contains(&size_of::<StoredInstance>()));
}

/// The registry's map keys an application by its holders' own copy of the name, so that a
/// heartbeat reading both reads one allocation (`Registry::leases_of`), and it keeps the key
/// when the application's first holder goes.
#[test]
fn an_applications_key_is_its_holders_copy_of_the_name() {
    let mut registry = registry();
    registry.register(instance("orders", "o1"), Origin::Client, 1_000);
    registry.register(instance("orders", "o2"), Origin::Client, 1_000);
    registry.cancel("ORDERS", "o1", Origin::Client, 1_000);
    let (key, leases) = registry.apps.get_key_value("ORDERS").expect("registered");
    let holder = &leases.get("o2").expect("registered").holder;
    assert!(Arc::ptr_eq(key, &holder.app));
}

/// An application whose last lease went keeps its place in the map, as in Eureka; its name
/// goes from the shared set with the purge, and a holder registered after that shares a new
/// copy, while the map keeps its old key.
#[test]
fn an_empty_applications_name_goes_from_the_shared_set() {
    let mut registry = registry();
    registry.register(instance("orders", "o1"), Origin::Client, 1_000);
    registry.cancel("ORDERS", "o1", Origin::Client, 1_000);
    drop(registry.take_changes());
    registry.purge_recently_changed(1_000 + registry.policy.delta_retention_ms + 1);
    assert!(registry.apps.contains_key("ORDERS"));
    assert_eq!(registry.names.len(), 0);
    registry.register(instance("orders", "o2"), Origin::Client, 90_000_000);
    let leases = registry.apps.get("ORDERS").expect("kept");
    assert_eq!(&*leases.get("o2").expect("registered").holder.app, "ORDERS");
}
