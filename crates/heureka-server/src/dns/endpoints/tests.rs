//! Which instances DNS answers and the zone each is in.

use std::collections::BTreeMap;

use heureka_core::{DataCenterClass, DataCenterInfo, Port};

use super::*;

fn instance(id: &str, ip: &str, status: InstanceStatus) -> Instance {
    let mut instance = Instance::new("ORDERS", id, id, ip, 0);
    instance.status = status;
    instance.port = Port {
        number: 8080,
        enabled: true,
    };
    instance.secure_port = Port {
        number: 8443,
        enabled: false,
    };
    instance
}

fn orders(instances: Vec<Instance>) -> Application {
    Application {
        name: "ORDERS".to_owned(),
        instances,
    }
}

#[test]
fn only_up_instances_are_answered() {
    let application = orders(vec![
        instance("a", "10.0.0.1", InstanceStatus::Up),
        instance("b", "10.0.0.2", InstanceStatus::Down),
        instance("c", "10.0.0.3", InstanceStatus::OutOfService),
        instance("d", "10.0.0.4", InstanceStatus::Starting),
        instance("e", "10.0.0.5", InstanceStatus::Unknown),
    ]);
    let addresses: Vec<IpAddr> = up_endpoints(&application)
        .iter()
        .map(|e| e.address)
        .collect();
    assert_eq!(addresses, vec!["10.0.0.1".parse::<IpAddr>().unwrap()]);
}

#[test]
fn an_instance_whose_ip_addr_is_not_an_address_is_left_out() {
    let application = orders(vec![
        instance("a", "host-a.internal", InstanceStatus::Up),
        instance("b", "fd00::2", InstanceStatus::Up),
    ]);
    let endpoints = up_endpoints(&application);
    assert_eq!(endpoints.len(), 1);
    assert_eq!(endpoints[0].address, "fd00::2".parse::<IpAddr>().unwrap());
}

#[test]
fn disabled_ports_are_absent() {
    let endpoints = up_endpoints(&orders(vec![instance("a", "10.0.0.1", InstanceStatus::Up)]));
    assert_eq!(endpoints[0].port, Some(8080));
    assert_eq!(endpoints[0].secure_port, None);
}

#[test]
fn the_zone_is_metadata_zone_else_the_availability_zone() {
    let mut spring = instance("a", "10.0.0.1", InstanceStatus::Up);
    spring
        .metadata
        .insert("zone".to_owned(), "zone-1".to_owned());
    let mut aws = instance("b", "10.0.0.2", InstanceStatus::Up);
    aws.data_center_info = Some(DataCenterInfo {
        class: DataCenterClass::Amazon,
        name: "Amazon".to_owned(),
        metadata: BTreeMap::from([("availability-zone".to_owned(), "us-east-1a".to_owned())]),
    });
    let plain = instance("c", "10.0.0.3", InstanceStatus::Up);
    assert_eq!(zone_of(&spring), Some("zone-1"));
    assert_eq!(zone_of(&aws), Some("us-east-1a"));
    assert_eq!(zone_of(&plain), None);
}
