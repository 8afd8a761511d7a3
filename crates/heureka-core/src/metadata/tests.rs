//! Metadata updates (§3.13): merged in place, then registered again.

use crate::origin::Origin;
use crate::test_util::{instance, registry};

#[test]
fn metadata_update_merges_and_reregisters() {
    let mut registry = registry();
    let mut with_metadata = instance("a", "a1");
    with_metadata
        .metadata
        .insert("zone".to_owned(), "z1".to_owned());
    registry.register(with_metadata, Origin::Client, 0);
    let before = registry.version();
    let entries = vec![
        ("team".to_owned(), "core".to_owned()),
        ("team".to_owned(), "ignored".to_owned()),
    ];
    assert_eq!(registry.update_metadata("a", "a1", entries, 50), Ok(true));
    let stored = registry.instance("a", "a1", 50).unwrap();
    assert_eq!(stored.metadata.get("zone").map(String::as_str), Some("z1"));
    assert_eq!(
        stored.metadata.get("team").map(String::as_str),
        Some("core")
    );
    assert_eq!(
        (
            stored.last_dirty_timestamp,
            stored.lease_info.registration_timestamp
        ),
        (0, 50)
    );
    assert!(registry.version() > before);
    assert_eq!(
        registry.self_preservation().expected_clients,
        2,
        "not a new registration"
    );
}

#[test]
fn metadata_update_of_unknown_instance_is_false() {
    let mut registry = registry();
    assert_eq!(
        registry.update_metadata("a", "a1", vec![("k".to_owned(), "v".to_owned())], 0),
        Ok(false)
    );
}
