//! The cache answers what the registry holds now: an application is read again when its
//! version moves and only then, and one the registry no longer holds is absent.

use heureka_core::{Instance, InstanceStatus, Origin, RegistryPolicy};

use super::*;

fn instance(app: &str, id: &str, ip: &str) -> Instance {
    let mut instance = Instance::new(app, id, id, ip, 0);
    instance.port.number = 8080;
    instance.vip_address = Some("orders-vip".to_owned());
    instance
}

fn registry(instances: Vec<Instance>) -> Registry {
    let mut registry = Registry::new(RegistryPolicy::default(), 0);
    for (n, instance) in instances.into_iter().enumerate() {
        registry.register(instance, Origin::Client, n as i64 + 1);
    }
    registry
}

fn addresses(endpoints: &[Endpoint]) -> Vec<&str> {
    endpoints.iter().map(|e| e.address.as_str()).collect()
}

#[test]
fn an_unchanged_application_is_not_read_again() {
    let registry = registry(vec![instance("ORDERS", "o-1", "10.0.0.1")]);
    let mut cache = EndpointCache::default();
    let first = cache.endpoints(&registry, "orders").unwrap();
    let second = cache.endpoints(&registry, "ORDERS").unwrap();
    assert!(Arc::ptr_eq(&first, &second));
}

#[test]
fn a_change_to_another_application_does_not_read_this_one_again() {
    let mut registry = registry(vec![instance("ORDERS", "o-1", "10.0.0.1")]);
    let mut cache = EndpointCache::default();
    let first = cache.endpoints(&registry, "orders").unwrap();
    registry.register(instance("BILLING", "b-1", "10.0.1.1"), Origin::Client, 10);
    let second = cache.endpoints(&registry, "orders").unwrap();
    assert!(Arc::ptr_eq(&first, &second));
}

#[test]
fn an_application_whose_version_moved_is_read_again() {
    let mut registry = registry(vec![instance("ORDERS", "o-1", "10.0.0.1")]);
    let mut cache = EndpointCache::default();
    cache.endpoints(&registry, "orders").unwrap();
    registry.register(instance("ORDERS", "o-2", "10.0.0.2"), Origin::Client, 10);
    let read = cache.endpoints(&registry, "orders").unwrap();
    assert_eq!(addresses(&read), ["10.0.0.1", "10.0.0.2"]);
}

#[test]
fn a_status_override_is_seen_by_the_next_read() {
    let mut registry = registry(vec![
        instance("ORDERS", "o-1", "10.0.0.1"),
        instance("ORDERS", "o-2", "10.0.0.2"),
    ]);
    let mut cache = EndpointCache::default();
    cache.endpoints(&registry, "orders").unwrap();
    let overridden = registry.set_status_override(
        "ORDERS",
        "o-2",
        InstanceStatus::OutOfService,
        None,
        Origin::Client,
        10,
    );
    assert!(overridden);
    let read = cache.endpoints(&registry, "orders").unwrap();
    assert_eq!(addresses(&read), ["10.0.0.1"]);
}

#[test]
fn an_application_whose_last_instance_went_is_absent() {
    let mut registry = registry(vec![instance("ORDERS", "o-1", "10.0.0.1")]);
    let mut cache = EndpointCache::default();
    cache.endpoints(&registry, "orders").unwrap();
    assert!(registry.cancel("ORDERS", "o-1", Origin::Client, 10));
    assert_eq!(cache.endpoints(&registry, "orders"), None);
    assert!(cache.applications_held().is_empty());
}

#[test]
fn a_name_that_is_no_application_stands_for_its_vip_address() {
    let registry = registry(vec![
        instance("ORDERS", "o-1", "10.0.0.1"),
        instance("INVOICES", "i-1", "10.0.2.1"),
    ]);
    let mut cache = EndpointCache::default();
    let read = cache.endpoints(&registry, "orders-vip").unwrap();
    assert_eq!(addresses(&read), ["10.0.2.1", "10.0.0.1"]);
}

#[test]
fn a_vip_answer_follows_the_registry_version() {
    let mut registry = registry(vec![instance("ORDERS", "o-1", "10.0.0.1")]);
    let mut cache = EndpointCache::default();
    cache.endpoints(&registry, "orders-vip").unwrap();
    registry.register(instance("BILLING", "b-1", "10.0.1.1"), Origin::Client, 10);
    assert_eq!(cache.endpoints(&registry, "orders-vip").unwrap().len(), 2);
}

#[test]
fn pruning_drops_applications_gone_from_the_registry_at_most_once_a_period() {
    let mut registry = registry(vec![
        instance("ORDERS", "o-1", "10.0.0.1"),
        instance("BILLING", "b-1", "10.0.1.1"),
    ]);
    let mut cache = EndpointCache::default();
    let start = crate::clock::instant();
    cache.endpoints(&registry, "orders").unwrap();
    cache.endpoints(&registry, "billing").unwrap();
    cache.prune(&registry, start);
    assert!(registry.cancel("BILLING", "b-1", Origin::Client, 10));
    cache.prune(&registry, start);
    assert_eq!(cache.applications_held(), ["BILLING", "ORDERS"]);
    cache.prune(&registry, start + PRUNE_EVERY);
    assert_eq!(cache.applications_held(), ["ORDERS"]);
}
