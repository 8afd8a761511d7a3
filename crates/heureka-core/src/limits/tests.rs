//! Each limit at, below and above its bound, on the registration checks and in the registry.

use super::*;
use crate::model::InstanceStatus;
use crate::origin::Origin;
use crate::policy::RegistryPolicy;
use crate::registration::validate_registration;
use crate::registry::Registry;
use crate::test_util::{instance, registry_with};

fn small() -> Limits {
    Limits {
        max_name_length: 8,
        max_metadata_entries: 2,
        max_metadata_bytes: 10,
        max_lease_duration_secs: 120,
        max_instances: 2,
    }
}

fn validated(mut instance: Instance) -> Result<Option<ClampedLease>, InvalidRegistration> {
    let app = instance.app.clone();
    validate_registration(&mut instance, &app, &small())
}

fn named(app: &str, id: &str) -> Instance {
    instance(app, id)
}

// === names ===

#[test]
fn an_app_name_at_the_length_limit_registers() {
    assert!(validated(named("ABCDEFGH", "i")).is_ok());
}

#[test]
fn an_app_name_over_the_length_limit_is_refused_naming_the_field() {
    let refused = validated(named("ABCDEFGHI", "i")).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "appName is 9 bytes long, over the limit of 8 bytes"
    );
}

#[test]
fn an_instance_id_below_and_at_the_limit_registers_and_over_it_is_refused() {
    assert!(validated(named("A", "1234567")).is_ok());
    assert!(validated(named("A", "12345678")).is_ok());
    assert!(matches!(
        validated(named("A", "123456789")),
        Err(InvalidRegistration::NameTooLong {
            field: "instanceId",
            length: 9,
            max: 8
        })
    ));
}

#[test]
fn names_are_measured_in_bytes_not_characters() {
    // Four two-byte characters: 8 bytes pass, a fifth makes 10.
    assert!(validated(named("A", "éééé")).is_ok());
    assert!(validated(named("A", "ééééé")).is_err());
}

#[test]
fn vip_addresses_have_the_same_limit() {
    let mut at = named("A", "i");
    at.vip_address = Some("vvvvvvvv".to_owned());
    at.secure_vip_address = Some("ssssssss".to_owned());
    assert!(validated(at).is_ok());
    let refusal = |over: Instance| validated(over).unwrap_err().to_string();
    let mut over = named("A", "i");
    over.vip_address = Some("vvvvvvvvv".to_owned());
    assert!(refusal(over).starts_with("vipAddress is 9 bytes"));
    let mut over = named("A", "i");
    over.secure_vip_address = Some("sssssssss".to_owned());
    assert!(refusal(over).starts_with("secureVipAddress is 9 bytes"));
}

#[test]
fn eurekas_own_checks_come_before_the_limits() {
    let mut instance = named("A", "123456789");
    instance.host_name.clear();
    assert_eq!(
        validated(instance).unwrap_err(),
        InvalidRegistration::MissingHostname
    );
}

#[test]
fn check_names_covers_writes_that_name_an_instance() {
    let limits = small();
    assert!(limits.check_names("ABCDEFGH", "12345678").is_ok());
    assert!(limits.check_names("ABCDEFGHI", "1").is_err());
    assert!(limits.check_names("A", "123456789").is_err());
}

// === the relation to the header limit ===

#[test]
fn the_default_name_length_is_heartbeatable_within_the_default_header_size() {
    let longest = longest_heartbeatable_name(8 * 1024, "/eureka".len());
    assert!(Limits::DEFAULT_MAX_NAME_LENGTH <= longest, "{longest}");
}

#[test]
fn a_heartbeat_of_the_longest_names_fits_the_header_limit() {
    let (header, base) = (8 * 1024, "/eureka");
    let longest = longest_heartbeatable_name(header, base.len());
    // Every byte percent-encoded, both names, plus the allowance for the rest of the head.
    let url = base.len() + "/apps/".len() + 3 * longest + 1 + 3 * longest;
    assert!(url + HEARTBEAT_HEAD_ALLOWANCE - "/apps/".len() - 1 <= header);
    let over = longest + 1;
    assert!(base.len() + 6 * over + HEARTBEAT_HEAD_ALLOWANCE > header);
}

#[test]
fn a_header_limit_smaller_than_the_allowance_leaves_no_name() {
    assert_eq!(longest_heartbeatable_name(1024, 7), 0);
}

// === metadata ===

fn with_metadata(entries: &[(&str, &str)]) -> Instance {
    let mut instance = named("A", "i");
    for (key, value) in entries {
        instance
            .metadata
            .insert((*key).to_owned(), (*value).to_owned());
    }
    instance
}

#[test]
fn metadata_at_the_entry_limit_registers_and_over_it_is_refused() {
    assert!(validated(with_metadata(&[("a", "1")])).is_ok());
    assert!(validated(with_metadata(&[("a", "1"), ("b", "2")])).is_ok());
    assert_eq!(
        validated(with_metadata(&[("a", "1"), ("b", "2"), ("c", "3")])).unwrap_err(),
        InvalidRegistration::TooManyMetadataEntries {
            field: "metadata",
            entries: 3,
            max: 2
        }
    );
}

#[test]
fn metadata_bytes_count_keys_and_values_at_below_and_over_the_limit() {
    assert!(validated(with_metadata(&[("key", "12345")])).is_ok());
    assert!(validated(with_metadata(&[("key", "1234567")])).is_ok());
    assert_eq!(
        validated(with_metadata(&[("key", "12345678")])).unwrap_err(),
        InvalidRegistration::MetadataTooLarge {
            field: "metadata",
            bytes: 11,
            max: 10
        }
    );
}

#[test]
fn a_metadata_update_is_checked_after_merging_and_refused_unchanged() {
    let mut registry = registry_with(RegistryPolicy {
        limits: small(),
        ..RegistryPolicy::default()
    });
    registry.register(with_metadata(&[("a", "1")]), Origin::Client, 0);
    // One new entry makes two: at the limit.
    let entries = vec![("b".to_owned(), "2".to_owned())];
    assert_eq!(registry.update_metadata("A", "i", entries, 1), Ok(true));
    // Replacing a value keeps two entries: passes.
    let entries = vec![("a".to_owned(), "9".to_owned())];
    assert_eq!(registry.update_metadata("A", "i", entries, 2), Ok(true));
    let version = registry.version();
    let entries = vec![("c".to_owned(), "3".to_owned())];
    assert_eq!(
        registry.update_metadata("A", "i", entries, 3),
        Err(InvalidRegistration::TooManyMetadataEntries {
            field: "metadata",
            entries: 3,
            max: 2
        })
    );
    let stored = registry.instance("A", "i", 3).unwrap();
    assert_eq!(stored.metadata.len(), 2);
    assert_eq!(registry.version(), version, "nothing changed");
}

fn in_amazon(entries: &[(&str, &str)]) -> Instance {
    let mut instance = named("A", "i");
    instance.data_center_info = Some(crate::model::DataCenterInfo {
        class: crate::model::DataCenterClass::Amazon,
        name: "Amazon".to_owned(),
        metadata: entries
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect(),
    });
    instance
}

#[test]
fn data_center_metadata_has_the_metadata_bounds_of_its_own_and_is_refused_naming_it() {
    assert!(
        validated(in_amazon(&[("instance-id", "i")])).is_err_and(|refused| refused
            == InvalidRegistration::MetadataTooLarge {
                field: "dataCenterInfo.metadata",
                bytes: 12,
                max: 10
            })
    );
    let limits = Limits {
        max_metadata_bytes: 100,
        ..small()
    };
    let within = in_amazon(&[("instance-id", "i"), ("zone", "a")]);
    assert_eq!(limits.check_instance(&within), Ok(()));
    let over = in_amazon(&[("instance-id", "i"), ("zone", "a"), ("ami-id", "x")]);
    let refused = limits.check_instance(&over).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "dataCenterInfo.metadata has 3 entries, over the limit of 2"
    );
    // Counted apart from the instance's own metadata, which stays within its bounds.
    let mut both = within.clone();
    both.metadata.insert("a".to_owned(), "1".to_owned());
    both.metadata.insert("b".to_owned(), "2".to_owned());
    assert_eq!(limits.check_instance(&both), Ok(()));
}

#[test]
fn a_peer_copy_with_data_center_metadata_over_the_limit_is_refused() {
    let copy = crate::stamped_copy::StampedCopy {
        app: "A".to_owned(),
        id: "i".to_owned(),
        parts: crate::merge::Parts {
            registration: Some(in_amazon(&[("instance-id", "i"), ("b", "2"), ("c", "3")])),
            ..Default::default()
        },
        leased: true,
    };
    assert!(matches!(
        small().check_copy(&copy),
        Err(InvalidRegistration::TooManyMetadataEntries {
            field: "dataCenterInfo.metadata",
            ..
        })
    ));
}

// === lease duration ===

fn with_duration(secs: u32) -> Instance {
    let mut instance = named("A", "i");
    instance.lease_info.duration_in_secs = secs;
    instance
}

#[test]
fn a_lease_at_or_below_the_limit_is_kept() {
    assert_eq!(validated(with_duration(119)), Ok(None));
    assert_eq!(validated(with_duration(120)), Ok(None));
}

#[test]
fn a_lease_over_the_limit_is_shortened_to_it_and_said_so() {
    let mut instance = with_duration(i32::MAX as u32);
    let clamped = validate_registration(&mut instance, "A", &small()).unwrap();
    assert_eq!(
        clamped,
        Some(ClampedLease {
            requested_secs: i32::MAX as u32,
            stored_secs: 120
        })
    );
    assert_eq!(instance.lease_info.duration_in_secs, 120);
}

#[test]
fn a_zero_lease_is_eurekas_90_s_default_the_floor() {
    let mut registry = registry_with(RegistryPolicy::default());
    registry.register(with_duration(0), Origin::Client, 0);
    let served = registry.instance("A", "i", 0).unwrap();
    assert_eq!(served.lease_info.duration_in_secs, 90);
}

#[test]
fn a_zero_lease_under_a_limit_below_90_s_gets_the_limit() {
    let limits = Limits {
        max_lease_duration_secs: 30,
        ..small()
    };
    let mut terms = with_duration(0).lease_info;
    assert!(limits.lease_terms(&mut terms).is_some());
    assert_eq!(terms.duration_in_secs, 30);
}

#[test]
fn the_registry_stores_and_serves_the_shortened_lease_on_any_path() {
    let mut registry = registry_with(RegistryPolicy {
        limits: small(),
        enable_self_preservation: false,
        ..RegistryPolicy::default()
    });
    // A peer's copy that skipped validation still gets the limit.
    registry.adopt_peer_copy(with_duration(i32::MAX as u32), 0);
    let served = registry.instance("A", "i", 0).unwrap();
    assert_eq!(served.lease_info.duration_in_secs, 120);
    // And it expires by it.
    assert!(registry.instance("A", "i", 121_000).is_none());
}

// === instances in all ===

#[test]
fn new_instances_register_below_and_up_to_the_limit_then_are_refused() {
    let mut registry = registry_with(RegistryPolicy {
        limits: small(),
        ..RegistryPolicy::default()
    });
    assert_eq!(registry.check_room("A", "1"), Ok(()));
    registry.register(named("A", "1"), Origin::Client, 0);
    assert_eq!(registry.check_room("B", "2"), Ok(()));
    registry.register(named("B", "2"), Origin::Client, 0);
    assert_eq!(
        registry.check_room("C", "3"),
        Err(InvalidRegistration::RegistryFull { max: 2 })
    );
}

#[test]
fn re_registering_an_instance_always_has_room() {
    let mut registry = registry_with(RegistryPolicy {
        limits: small(),
        ..RegistryPolicy::default()
    });
    registry.register(named("A", "1"), Origin::Client, 0);
    registry.register(named("A", "2"), Origin::Client, 0);
    assert_eq!(registry.check_room("a", "1"), Ok(()));
}

#[test]
fn the_default_instance_limit_is_above_the_million_one_node_is_tested_with() {
    assert!(Limits::default().max_instances > 1_000_000);
}

/// A registry holding its limit of two instances (`A/1`, `B/2`), and a peer with the same
/// two and a third, `C/3`, which the full one has no room for.
fn full_and_peer() -> (Registry, Registry) {
    let policy = RegistryPolicy {
        limits: small(),
        ..RegistryPolicy::default()
    };
    let mut full = registry_with(policy);
    full.set_node_tag(1);
    full.register(named("A", "1"), Origin::Client, 1_000);
    full.register(named("B", "2"), Origin::Client, 1_000);
    let mut peer = registry_with(RegistryPolicy::default());
    peer.set_node_tag(2);
    for (app, id) in [("A", "1"), ("B", "2")] {
        let copy = full.stamped_copy(app, id, 1_000).unwrap();
        peer.merge_copy(copy, 1_000).unwrap();
    }
    peer.register(named("C", "3"), Origin::Client, 2_000);
    (full, peer)
}

#[test]
fn a_peers_copy_of_a_new_instance_beyond_max_instances_is_refused_on_every_path_and_counted() {
    let (mut full, peer) = full_and_peer();
    let version = full.version();
    full.take_changes();

    let stamped = peer.stamped_copy("C", "3", 3_000).unwrap();
    assert!(stamped.leased);
    let merged = full.merge_copy(stamped, 3_000).unwrap();
    assert!(!merged.changed && !merged.leased);
    full.repair_from_peer(named("C", "3"), 3_000);
    full.adopt_peer_copy(named("C", "3"), 3_000);
    assert!(!full.register_synced(named("C", "3"), 3_000));

    assert_eq!(full.registry_size(), 2);
    assert_eq!(full.instance("C", "3", 3_000), None);
    assert_eq!(full.version(), version, "nothing changed");
    assert!(full.take_changes().is_empty());
    assert_eq!(full.take_copies_refused_for_room(), 4);
    assert_eq!(full.take_copies_refused_for_room(), 0, "taken once");
}

#[test]
fn at_max_instances_a_peers_updates_and_removals_of_held_instances_are_still_merged() {
    let (mut full, mut peer) = full_and_peer();
    assert!(peer.set_status_override(
        "A",
        "1",
        InstanceStatus::OutOfService,
        None,
        Origin::Client,
        3_000
    ));
    let overridden = peer.stamped_copy("A", "1", 3_000).unwrap();
    assert!(full.merge_copy(overridden, 3_000).unwrap().changed);
    assert_eq!(
        full.instance("A", "1", 3_000).unwrap().status,
        InstanceStatus::OutOfService
    );
    // A Java peer's newer copy of a held instance is adopted too.
    let mut newer = named("B", "2");
    newer.metadata.insert("v".to_owned(), "2".to_owned());
    full.repair_from_peer(newer, 3_500);
    assert_eq!(full.instance("B", "2", 3_500).unwrap().metadata["v"], "2");

    assert!(peer.cancel("A", "1", Origin::Client, 4_000));
    let tombstone = peer.stamped_copy("A", "1", 4_000).unwrap();
    assert!(full.merge_copy(tombstone, 4_000).unwrap().changed);
    assert_eq!(full.instance("A", "1", 4_000), None);
    assert_eq!(full.take_copies_refused_for_room(), 0);

    // The removal made room: the copy refused before is taken now.
    let stamped = peer.stamped_copy("C", "3", 5_000).unwrap();
    assert!(full.merge_copy(stamped, 5_000).unwrap().leased);
    assert_eq!(full.registry_size(), 2);
}

#[test]
fn a_peer_copy_over_the_limits_is_not_adopted() {
    let mut registry = registry_with(RegistryPolicy {
        limits: small(),
        ..RegistryPolicy::default()
    });
    registry.adopt_peer_copy(named("A", "123456789"), 0);
    assert_eq!(registry.registry_size(), 0);
}

#[test]
fn limit_refusals_are_told_apart_from_eurekas_checks() {
    assert!(InvalidRegistration::RegistryFull { max: 1 }.is_limit());
    assert!(!InvalidRegistration::MissingHostname.is_limit());
}

// === peers' stamped copies ===

fn stamped_registry(limits: Limits) -> crate::Registry {
    registry_with(RegistryPolicy {
        limits,
        enable_self_preservation: false,
        ..RegistryPolicy::default()
    })
}

#[test]
fn a_stamped_copy_over_the_limits_is_not_merged() {
    let mut sender = stamped_registry(Limits::default());
    let mut metadata = named("ORDERS", "o1");
    metadata.metadata.insert("k".to_owned(), "v".repeat(100));
    sender.register(metadata, Origin::Client, 0);
    let copy = sender.stamped_copy("ORDERS", "o1", 1).unwrap();
    let mut receiver = stamped_registry(small());
    let merged = receiver.merge_copy(copy, 1).unwrap();
    assert!(!merged.changed && !merged.leased);
    assert_eq!(receiver.registry_size(), 0);
}

#[test]
fn a_stamped_copy_with_a_longer_lease_is_merged_with_the_limit() {
    let mut sender = stamped_registry(Limits::default());
    sender.register(with_duration(290), Origin::Client, 0);
    let copy = sender.stamped_copy("A", "i", 1).unwrap();
    let mut receiver = stamped_registry(small());
    assert!(receiver.merge_copy(copy, 1).unwrap().leased);
    let served = receiver.instance("A", "i", 1).unwrap();
    assert_eq!(served.lease_info.duration_in_secs, 120);
}
