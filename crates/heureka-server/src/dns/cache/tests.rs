//! The cache answers what the registry holds now: read again when an application's version
//! moves, and never for an application the registry does not hold.

use heureka_core::{Instance, InstanceStatus, Origin, RegistryPolicy};

use super::*;

fn instance(app: &str, id: &str, ip: &str, zone: Option<&str>) -> Instance {
    let mut instance = Instance::new(app, id, id, ip, 0);
    if let Some(zone) = zone {
        instance.metadata.insert("zone".to_owned(), zone.to_owned());
    }
    instance
}

fn registry(instances: Vec<Instance>) -> Registry {
    let mut registry = Registry::new(RegistryPolicy::default(), 0);
    for (n, instance) in instances.into_iter().enumerate() {
        registry.register(instance, Origin::Client, n as i64 + 1);
    }
    registry
}

fn addresses(endpoints: &[Endpoint]) -> Vec<String> {
    endpoints.iter().map(|e| e.address.to_string()).collect()
}

#[test]
fn an_override_is_seen_by_the_next_read_of_the_application() {
    let mut registry = registry(vec![
        instance("ORDERS", "o-1", "10.0.0.1", None),
        instance("ORDERS", "o-2", "10.0.0.2", None),
    ]);
    let mut cache = EndpointCache::default();
    let before = cache.up(&registry, "ORDERS").unwrap();
    assert_eq!(addresses(&before), ["10.0.0.1", "10.0.0.2"]);
    let overridden = registry.set_status_override(
        "ORDERS",
        "o-2",
        InstanceStatus::OutOfService,
        None,
        Origin::Client,
        10,
    );
    assert!(overridden);
    assert_eq!(
        addresses(&cache.up(&registry, "ORDERS").unwrap()),
        ["10.0.0.1"]
    );
}

#[test]
fn an_unchanged_application_is_not_read_again() {
    let registry = registry(vec![instance("ORDERS", "o-1", "10.0.0.1", None)]);
    let mut cache = EndpointCache::default();
    let first = cache.up(&registry, "ORDERS").unwrap();
    let second = cache.up(&registry, "ORDERS").unwrap();
    assert!(Arc::ptr_eq(&first, &second));
}

#[test]
fn an_application_gone_from_the_registry_is_unknown() {
    let mut registry = registry(vec![instance("ORDERS", "o-1", "10.0.0.1", None)]);
    let mut cache = EndpointCache::default();
    assert!(cache.up(&registry, "ORDERS").is_some());
    assert!(registry.cancel("ORDERS", "o-1", Origin::Client, 10));
    assert!(cache.up(&registry, "ORDERS").is_none());
    assert!(cache.up(&registry, "NOBODY").is_none());
}

#[test]
fn the_askers_zone_is_found_by_its_address_whatever_its_status() {
    let mut registry = registry(vec![
        instance("GATEWAY", "g-1", "10.9.0.1", Some("zone-b")),
        instance("ORDERS", "o-1", "10.0.0.1", Some("zone-a")),
    ]);
    registry.set_status_override(
        "GATEWAY",
        "g-1",
        InstanceStatus::Down,
        None,
        Origin::Client,
        10,
    );
    let mut cache = EndpointCache::default();
    let now = crate::clock::instant();
    assert_eq!(
        cache.zone_of(&registry, "10.9.0.1".parse().unwrap(), now),
        Some("zone-b")
    );
    assert_eq!(
        cache.zone_of(&registry, "10.9.0.9".parse().unwrap(), now),
        None
    );
}

#[test]
fn the_zone_index_follows_a_change_once_a_second_has_passed() {
    let mut registry = registry(vec![instance("ORDERS", "o-1", "10.0.0.1", Some("zone-a"))]);
    let mut cache = EndpointCache::default();
    let start = crate::clock::instant();
    let asker: IpAddr = "10.9.0.1".parse().unwrap();
    assert_eq!(cache.zone_of(&registry, asker, start), None);
    registry.register(
        instance("GATEWAY", "g-1", "10.9.0.1", Some("zone-b")),
        Origin::Client,
        10,
    );
    assert_eq!(
        cache.zone_of(&registry, asker, start),
        None,
        "rebuilt at most once a second"
    );
    assert_eq!(
        cache.zone_of(&registry, asker, start + REBUILD_EVERY),
        Some("zone-b")
    );
}
