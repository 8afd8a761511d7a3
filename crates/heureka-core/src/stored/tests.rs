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
    names.purge_unused();
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
