//! The region of an instance (zone to region, as Eureka's `InstanceRegionChecker` maps it), the
//! preference between regions, and the `?regions=` query.

use std::collections::BTreeMap;

use heureka_core::{DataCenterInfo, Instance, InstanceStatus};

use super::{instance_zone, regions_query, InstanceRegionChecker};
use crate::config::ClientConfig;

/// A client in `us-east-1` (zones `us-east-1a`, `us-east-1b`) fetching `remote`, with these
/// zones configured for its regions.
fn checker(remote: &[&str], zones: &[(&str, &[&str])]) -> InstanceRegionChecker {
    let mut config = ClientConfig::new(Vec::new(), "billing", "b1", "h", "10.0.0.1", 8080);
    config.fetch_remote_regions_registry = remote.iter().map(|r| r.to_string()).collect();
    config.availability_zones = BTreeMap::from([(
        "us-east-1".to_owned(),
        vec!["us-east-1a".to_owned(), "us-east-1b".to_owned()],
    )]);
    for (region, zones) in zones {
        let zones = zones.iter().map(|z| z.to_string()).collect();
        config.availability_zones.insert(region.to_string(), zones);
    }
    InstanceRegionChecker::new(&config)
}

/// A Spring instance: its zone in metadata `zone`.
fn in_zone(id: &str, zone: Option<&str>, status: InstanceStatus) -> Instance {
    let mut instance = Instance::new("ORDERS", id, id, "10.0.0.2", 8080);
    instance.status = status;
    if let Some(zone) = zone {
        instance.metadata.insert("zone".to_owned(), zone.to_owned());
    }
    instance
}

fn up(id: &str, zone: &str) -> Instance {
    in_zone(id, Some(zone), InstanceStatus::Up)
}

/// An AWS instance: its zone in the AmazonInfo metadata.
fn on_aws(id: &str, availability_zone: &str) -> Instance {
    let mut instance = in_zone(id, None, InstanceStatus::Up);
    instance.data_center_info = Some(DataCenterInfo {
        name: "Amazon".to_owned(),
        metadata: BTreeMap::from([("availability-zone".to_owned(), availability_zone.to_owned())]),
        ..DataCenterInfo::my_own()
    });
    instance
}

fn ids(instances: &[Instance]) -> Vec<&str> {
    instances.iter().map(Instance::id).collect()
}

#[test]
fn a_zone_listed_for_a_remote_region_is_in_that_region() {
    let regions = checker(&["eu-west"], &[("eu-west", &["dublin-1", "dublin-2"])]);
    assert_eq!(regions.instance_region(&up("o1", "dublin-2")), "eu-west");
    assert!(!regions.is_local(&up("o1", "dublin-2")));
}

#[test]
fn a_zone_of_no_remote_region_and_no_zone_at_all_are_local() {
    let regions = checker(&["eu-west"], &[("eu-west", &["dublin-1"])]);
    assert_eq!(
        regions.instance_region(&up("o1", "us-east-1a")),
        "us-east-1"
    );
    assert_eq!(regions.instance_region(&up("o2", "somewhere")), "us-east-1");
    let no_zone = in_zone("o3", None, InstanceStatus::Up);
    assert_eq!(regions.instance_region(&no_zone), "us-east-1");
}

#[test]
fn an_aws_zone_is_the_region_name_and_one_letter_without_configuration() {
    let regions = checker(&["us-west-2"], &[]);
    assert_eq!(
        regions.instance_region(&up("o1", "us-west-2c")),
        "us-west-2"
    );
    // Only a remote region fetched counts: us-west-1 is not one.
    assert_eq!(
        regions.instance_region(&up("o2", "us-west-1a")),
        "us-east-1"
    );
}

#[test]
fn the_amazon_availability_zone_wins_over_the_metadata_zone() {
    let mut instance = on_aws("o1", "us-west-2a");
    instance
        .metadata
        .insert("zone".to_owned(), "us-east-1a".to_owned());
    assert_eq!(instance_zone(&instance), Some("us-west-2a"));
    assert_eq!(
        checker(&["us-west-2"], &[]).instance_region(&instance),
        "us-west-2"
    );
}

#[test]
fn without_remote_regions_every_instance_is_local() {
    let regions = checker(&[], &[("eu-west", &["dublin-1"])]);
    assert_eq!(regions.instance_region(&up("o1", "dublin-1")), "us-east-1");
}

#[test]
fn the_local_region_listed_as_remote_stays_local() {
    let regions = checker(&["us-east-1", "eu-west"], &[]);
    assert_eq!(regions.remote_regions(), ["eu-west"]);
    assert_eq!(
        regions.instance_region(&up("o1", "us-east-1a")),
        "us-east-1"
    );
}

#[test]
fn the_local_region_is_preferred_while_it_has_an_up_instance() {
    let regions = checker(&["eu-west"], &[("eu-west", &["dublin-1"])]);
    let instances = vec![up("far", "dublin-1"), up("near", "us-east-1b")];
    let preferred = regions.prefer(instances, |i| i.status == InstanceStatus::Up);
    assert_eq!(ids(&preferred), ["near"]);
}

#[test]
fn a_remote_region_is_used_when_the_local_one_has_no_up_instance() {
    let regions = checker(&["eu-west"], &[("eu-west", &["dublin-1"])]);
    let instances = vec![
        up("far", "dublin-1"),
        in_zone("near", Some("us-east-1a"), InstanceStatus::Down),
    ];
    let preferred = regions.prefer(instances, |i| i.status == InstanceStatus::Up);
    assert_eq!(ids(&preferred), ["far"]);
}

#[test]
fn remote_regions_are_preferred_in_configuration_order() {
    let regions = checker(
        &["ap-south", "eu-west"],
        &[("eu-west", &["dublin-1"]), ("ap-south", &["mumbai-1"])],
    );
    let instances = vec![up("dublin", "dublin-1"), up("mumbai", "mumbai-1")];
    let preferred = regions.prefer(instances, |i| i.status == InstanceStatus::Up);
    assert_eq!(ids(&preferred), ["mumbai"]);
}

#[test]
fn with_no_up_instance_anywhere_the_local_regions_are_kept() {
    let regions = checker(&["eu-west"], &[("eu-west", &["dublin-1"])]);
    let instances = vec![
        in_zone("far", Some("dublin-1"), InstanceStatus::Down),
        in_zone("near", Some("us-east-1a"), InstanceStatus::Down),
    ];
    let preferred = regions.prefer(instances, |i| i.status == InstanceStatus::Up);
    assert_eq!(ids(&preferred), ["near"]);
}

#[test]
fn the_query_names_the_regions_as_configured_and_is_absent_without_them() {
    let regions = vec!["us-west-2".to_owned(), "EU-West".to_owned()];
    assert_eq!(regions_query(&regions), "?regions=us-west-2,EU-West");
    assert_eq!(regions_query(&[]), "");
}
