//! Single-application and VIP reads: kept while their version holds, renewed after.

use std::time::Duration;

use heureka_wire::Format;

use super::*;
use crate::cache::fixtures::{register, registry_with};

#[test]
fn a_single_application_read_is_kept_across_other_applications_changes_only() {
    let registry = registry_with(40, 3);
    let cache = SelectionCache::new(Duration::from_secs(180));
    let app = Selection::App("APP-1".to_owned());
    let first = cache.get(&registry, &app, Format::Json).unwrap();
    register(&registry, "APP-2", "APP-2-new");
    let kept = cache.get(&registry, &app, Format::Json).unwrap();
    assert_eq!(kept.as_ptr(), first.as_ptr(), "another application changed");
    register(&registry, "APP-1", "APP-1-new");
    let renewed = cache.get(&registry, &app, Format::Json).unwrap();
    let expected = heureka_wire::encode_application(
        &registry.read().application("APP-1").unwrap(),
        Format::Json,
    );
    assert_eq!(renewed, expected);
}

#[test]
fn a_vip_read_after_any_registration_shows_it() {
    let registry = registry_with(40, 3);
    let cache = SelectionCache::new(Duration::from_secs(180));
    let vip = Selection::Vip("orders".to_owned());
    let before = cache.get(&registry, &vip, Format::Xml).unwrap();
    let mut instance = heureka_core::Instance::new("ORDERS", "orders-1", "host", "10.0.0.2", 0);
    instance.vip_address = Some("orders".to_owned());
    registry.write(|registry, _| registry.register(instance, heureka_core::Origin::Client, 1));
    let after = cache.get(&registry, &vip, Format::Xml).unwrap();
    assert_ne!(before, after);
    let expected =
        heureka_wire::encode_applications(&registry.read().vip("orders", false), Format::Xml);
    assert_eq!(after, expected);
}

#[test]
fn an_application_with_no_instances_is_not_found_in_the_selection_cache() {
    let registry = registry_with(2, 1);
    let cache = SelectionCache::new(Duration::from_secs(180));
    assert!(cache
        .get(&registry, &Selection::App("NOPE".to_owned()), Format::Json)
        .is_none());
}
