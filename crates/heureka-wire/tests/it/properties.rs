//! Properties over generated instances (proptest): every instance survives encoding and decoding
//! in both formats, every stamped copy survives a stamped batch and its answer, and every
//! document written parses with a strict parser, whatever strings it holds.

use std::collections::BTreeMap;

use heureka_core::{
    ActionType, Applications, DataCenterClass, DataCenterInfo, Health, Instance, InstanceStatus,
    Kept, KeptInstance, LeaseInfo, PartStamps, Parts, Port, Removal, Stamp, StampedCopy,
};
use heureka_wire::{
    decode_applications, decode_instance, decode_kept, decode_stamped_batch,
    decode_stamped_response, encode_instance, encode_kept, encode_stamped_batch,
    encode_stamped_response, Format, ReplicationAction, StampedItem, StampedResult,
};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;

use crate::documents::{assert_strict_json, assert_strict_xml, every_document};
use crate::fixtures::{registry, NOW};

/// Characters that have broken, or could break, an encoder: markup, XML-forbidden characters,
/// XStream's escape characters, line ends, a surrogate pair's worth of emoji.
const AWKWARD: &[char] = &[
    '\u{FFFE}', '\u{FFFF}', '\u{0}', '\u{1}', '\u{1F}', '\u{7F}', '\u{85}', '\u{FFFD}', '\u{FEFF}',
    '\r', '\n', '\t', ' ', '&', '<', '>', '"', '\'', '\\', '/', ':', '_', '$', '.', '-', '@', ']',
    '😀', 'é', 'ß', 'ǅ', '中', '0', '9',
];

/// Short strings, mostly of awkward characters.
fn any_text() -> BoxedStrategy<String> {
    let c =
        prop_oneof![3 => select(AWKWARD), 1 => any::<char>(), 1 => proptest::char::range('a', 'z')];
    vec(c, 0..10)
        .prop_map(|cs| cs.into_iter().collect())
        .boxed()
}

/// Strings XML 1.0 can hold exactly (no character the XML encoder has to replace).
fn xml_text() -> BoxedStrategy<String> {
    any_text()
        .prop_map(|s| s.chars().filter(|&c| xml_allows(c)).collect())
        .boxed()
}

fn xml_allows(c: char) -> bool {
    !matches!(c, '\0'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}')
}

fn status() -> impl Strategy<Value = InstanceStatus> {
    select(vec![
        InstanceStatus::Up,
        InstanceStatus::Down,
        InstanceStatus::Starting,
        InstanceStatus::OutOfService,
        InstanceStatus::Unknown,
    ])
}

fn port() -> impl Strategy<Value = Port> {
    (any::<u32>(), any::<bool>()).prop_map(|(number, enabled)| Port { number, enabled })
}

/// The readers upper-case application and group names; generated ones already are.
fn upper(text: BoxedStrategy<String>) -> impl Strategy<Value = String> {
    text.prop_map(|s| s.to_uppercase())
        .prop_filter("upper-casing is idempotent", |s| s.to_uppercase() == *s)
}

/// Any instance the readers can give back: metadata keys are never the empty key (no element
/// name spells it) nor `@class` (Jackson's type marker); only Amazon data centres carry
/// metadata; `sid` is never `unknown` (written as absent, read back as `na`); an instance without
/// `instanceId` has no `metadata.instanceId` (Spring's legacy rule would fill it in).
fn instance(text: fn() -> BoxedStrategy<String>) -> impl Strategy<Value = Instance> {
    let key = text().prop_filter("a writable key", |k| !k.is_empty() && k != "@class");
    let metadata = || btree_map(key.clone(), text(), 0..4);
    let data_center = option::of(
        (
            any::<bool>(),
            select(vec!["", "MyOwn", "Amazon", "Netflix"]),
            metadata(),
        )
            .prop_map(|(amazon, name, metadata)| DataCenterInfo {
                class: if amazon {
                    DataCenterClass::Amazon
                } else {
                    DataCenterClass::Default
                },
                name: name.to_owned(),
                metadata: if amazon { metadata } else { BTreeMap::new() },
            }),
    );
    let lease =
        (1..=u32::MAX, 1..=u32::MAX, any::<[i64; 4]>()).prop_map(|(interval, duration, t)| {
            LeaseInfo {
                renewal_interval_in_secs: interval,
                duration_in_secs: duration,
                registration_timestamp: t[0],
                last_renewal_timestamp: t[1],
                eviction_timestamp: t[2],
                service_up_timestamp: t[3],
            }
        });
    let names = (option::of(text()), text(), upper(text()), text(), text());
    let state = (
        status(),
        status(),
        port(),
        port(),
        any::<i32>(),
        data_center,
        lease,
    );
    let urls = (
        option::of(upper(text())),
        vec(option::of(text()), 7),
        metadata(),
    );
    let flags = (
        any::<bool>(),
        any::<[i64; 2]>(),
        option::of(select(vec![
            ActionType::Added,
            ActionType::Modified,
            ActionType::Deleted,
        ])),
    );
    (names, state, urls, flags)
        .prop_map(|((id, host, app, ip, sid), state, urls, flags)| {
            let (status, overridden, port, secure_port, country_id, dc, lease) = state;
            let (group, optional, metadata) = urls;
            let (coordinating, [updated, dirty], action) = flags;
            Instance {
                instance_id: id,
                host_name: host,
                app,
                ip_addr: ip,
                sid: if sid == "unknown" {
                    "na".to_owned()
                } else {
                    sid
                },
                status,
                overridden_status: overridden,
                port,
                secure_port,
                country_id,
                data_center_info: dc,
                lease_info: lease,
                metadata,
                app_group_name: group,
                home_page_url: optional[0].clone(),
                status_page_url: optional[1].clone(),
                health_check_url: optional[2].clone(),
                secure_health_check_url: optional[3].clone(),
                vip_address: optional[4].clone(),
                secure_vip_address: optional[5].clone(),
                is_coordinating_discovery_server: coordinating,
                last_updated_timestamp: updated,
                last_dirty_timestamp: dirty,
                action_type: action,
                asg_name: optional[6].clone(),
            }
        })
        .prop_filter("no legacy instance id", |i| {
            i.instance_id.is_some() || !i.metadata.contains_key("instanceId")
        })
}

fn registry_of(text: fn() -> BoxedStrategy<String>) -> impl Strategy<Value = Applications> {
    (vec(instance(text), 0..4), any::<i64>(), text())
        .prop_map(|(instances, version, hash)| registry(version, &hash, instances))
}

fn stamp() -> impl Strategy<Value = Stamp> {
    prop_oneof![
        Just(Stamp::ZERO),
        (0..=i64::MAX, any::<u32>(), any::<u32>()).prop_map(|(ms, counter, node)| Stamp {
            ms,
            counter,
            node
        }),
    ]
}

fn part_stamps() -> impl Strategy<Value = PartStamps> {
    (stamp(), stamp(), stamp(), stamp(), stamp()).prop_map(
        |(registration, status, overridden, removed, health)| PartStamps {
            registration,
            status,
            overridden,
            removed,
            health,
        },
    )
}

/// Any copy a peer can send: names as the registry keys them (non-empty, the app upper-case),
/// with or without a registration, an override and a lease.
fn stamped_copy() -> impl Strategy<Value = StampedCopy> {
    let name = |text: BoxedStrategy<String>| text.prop_filter("a name", |s| !s.is_empty()).boxed();
    (
        upper(name(any_text())),
        name(any_text()),
        option::of(instance(any_text)),
        status(),
        option::of(status()),
        part_stamps(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(app, id, registration, own_status, overridden, stamps, leased, failing)| {
                let health = if failing {
                    Health::Failing
                } else {
                    Health::Passing
                };
                let parts = Parts {
                    registration,
                    own_status,
                    overridden,
                    health,
                    stamps,
                };
                StampedCopy {
                    app,
                    id,
                    parts,
                    leased,
                }
            },
        )
}

/// Any instance a node can keep on disk: a lease or a removal, with its copy.
fn kept_instance() -> impl Strategy<Value = KeptInstance> {
    (stamped_copy(), 0..3u8, 0..i64::MAX / 2, 0..i64::MAX / 2).prop_map(|(mut copy, kind, a, b)| {
        let kept = match kind {
            0 => Kept::Lease {
                registration_timestamp: a,
                service_up_timestamp: b,
            },
            1 => Kept::Removed {
                removal: Removal::Cancelled,
                at: a,
            },
            _ => Kept::Removed {
                removal: Removal::Evicted { last_renewal: b },
                at: a,
            },
        };
        copy.leased = kind == 0;
        KeptInstance { copy, kept }
    })
}

proptest! {
    #[test]
    fn any_kept_instance_survives_its_record(kept in kept_instance()) {
        prop_assert_eq!(decode_kept(&encode_kept(&kept)).unwrap(), kept);
    }

    #[test]
    fn any_stamped_copy_survives_a_batch_and_an_answer(
        copies in vec(stamped_copy(), 0..4),
        actions in vec(select(ReplicationAction::ALL.to_vec()), 4),
        codes in vec(any::<u16>(), 4),
    ) {
        // A register without its instance is refused by design; make it a heartbeat.
        let batch: Vec<StampedItem> = copies
            .iter()
            .zip(&actions)
            .map(|(copy, &action)| {
                let action = match action {
                    ReplicationAction::Register if copy.parts.registration.is_none() => {
                        ReplicationAction::Heartbeat
                    }
                    action => action,
                };
                StampedItem { action, copy: copy.clone() }
            })
            .collect();
        let body = encode_stamped_batch(&batch);
        let read: Vec<_> = decode_stamped_batch(&body, NOW).unwrap().into_iter().collect();
        prop_assert_eq!(read, batch.into_iter().map(Ok).collect::<Vec<_>>());

        let results: Vec<StampedResult> = copies
            .into_iter()
            .zip(codes)
            .enumerate()
            .map(|(n, (copy, status_code))| StampedResult {
                status_code,
                copy: (n % 2 == 0).then_some(copy),
            })
            .collect();
        let body = encode_stamped_response(&results);
        prop_assert_eq!(decode_stamped_response(&body).unwrap(), results);
    }

    #[test]
    fn any_instance_survives_json(instance in instance(any_text)) {
        let json = encode_instance(&instance, Format::Json);
        prop_assert_eq!(decode_instance(&json, Format::Json, NOW).unwrap(), instance);
    }

    #[test]
    fn any_instance_xml_can_hold_survives_xml(instance in instance(xml_text)) {
        let xml = encode_instance(&instance, Format::Xml);
        prop_assert_eq!(decode_instance(&xml, Format::Xml, NOW).unwrap(), instance);
    }

    #[test]
    fn any_registry_survives_both_formats(apps in registry_of(xml_text)) {
        for format in [Format::Json, Format::Xml] {
            let document = heureka_wire::encode_applications(&apps, format);
            prop_assert_eq!(&decode_applications(&document, format).unwrap(), &apps);
        }
    }

    #[test]
    fn every_document_parses_strictly_whatever_it_holds(apps in registry_of(any_text)) {
        for (name, document) in every_document(&apps, Format::Xml) {
            assert_strict_xml(&name, &document);
        }
        for (name, document) in every_document(&apps, Format::Json) {
            assert_strict_json(&name, &document);
        }
    }

    #[test]
    fn a_strict_parser_reads_back_the_text_written(instance in instance(xml_text)) {
        // Our reader could share a mistake with our writer; a third-party parser cannot.
        let xml = String::from_utf8(encode_instance(&instance, Format::Xml)).unwrap();
        let document = roxmltree::Document::parse(&xml).unwrap();
        let child = |name: &str| {
            document.root_element().children().find(|n| n.has_tag_name(name)).unwrap()
        };
        prop_assert_eq!(child("hostName").text().unwrap_or(""), instance.host_name.as_str());
        let values: Vec<&str> = child("metadata")
            .children()
            .filter(|n| n.is_element())
            .map(|n| n.text().unwrap_or(""))
            .collect();
        let expected: Vec<&str> = instance.metadata.values().map(String::as_str).collect();
        prop_assert_eq!(values, expected);
    }
}
