//! Whatever was registered, every document written parses with a strict parser (issue 7,
//! defects 1 and 7): one registration holding U+FFFE, a control character or a metadata key that
//! is no XML name must not cost every XML client the registry.

use std::collections::BTreeMap;

use heureka_core::{DataCenterClass, DataCenterInfo, Instance};
use heureka_wire::{decode_instance, encode_instance, Format};

use crate::documents::{assert_strict_json, assert_strict_xml, every_document};
use crate::fixtures::{orders, registry, NOW};

/// Characters XML 1.0 forbids, markup characters and a character beyond the Basic Plane.
const HOSTILE: &str = "\u{FFFE}\u{FFFF}\u{0}\u{1}\u{8}\u{B}\u{C}\u{1F}&<>\"'\r\n\t]]>😀";

fn hostile_instance() -> Instance {
    let hostile = |field: &str| format!("{field}{HOSTILE}");
    let mut i = orders();
    i.instance_id = Some(hostile("id"));
    i.host_name = hostile("host");
    i.app = hostile("APP");
    i.ip_addr = hostile("ip");
    i.sid = hostile("sid");
    i.data_center_info = Some(DataCenterInfo {
        class: DataCenterClass::Amazon,
        name: hostile("Amazon"),
        metadata: BTreeMap::from([(hostile("dc key"), hostile("dc value"))]),
    });
    i.metadata = BTreeMap::from([
        (hostile("key"), hostile("value")),
        ("prometheus.io/scrape".to_owned(), "true".to_owned()),
        ("1abc".to_owned(), "x".to_owned()),
        ("ns:key".to_owned(), "x".to_owned()),
        (":".to_owned(), "x".to_owned()),
        ("xmlns".to_owned(), "x".to_owned()),
        ("xml:lang".to_owned(), "x".to_owned()),
        (String::new(), "the empty key".to_owned()),
    ]);
    i.app_group_name = Some(hostile("GROUP"));
    i.home_page_url = Some(hostile("home"));
    i.status_page_url = Some(hostile("status"));
    i.health_check_url = Some(hostile("health"));
    i.secure_health_check_url = Some(hostile("secure health"));
    i.vip_address = Some(hostile("vip"));
    i.secure_vip_address = Some(hostile("secure vip"));
    i.asg_name = Some(hostile("asg"));
    i
}

#[test]
fn the_strict_xml_parser_rejects_what_xml_forbids() {
    // Otherwise the tests below could not fail.
    for bad in [
        "<a>\u{FFFE}</a>",
        "<a>\u{FFFF}</a>",
        "<a>\u{1}</a>",
        "<a>&#xfffe;</a>",
        "<a>&#x1;</a>",
        "<a><ns:k/></a>",
        "<a><1abc/></a>",
    ] {
        assert!(roxmltree::Document::parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn every_xml_document_parses_whatever_was_registered() {
    let apps = registry(3, &format!("UP_1_{HOSTILE}"), vec![hostile_instance()]);
    for (name, document) in every_document(&apps, Format::Xml) {
        assert_strict_xml(&name, &document);
    }
}

#[test]
fn every_json_document_parses_whatever_was_registered() {
    let apps = registry(3, &format!("UP_1_{HOSTILE}"), vec![hostile_instance()]);
    for (name, document) in every_document(&apps, Format::Json) {
        assert_strict_json(&name, &document);
    }
}

#[test]
fn a_strict_parser_reads_forbidden_characters_as_the_replacement_character() {
    let mut i = orders();
    i.host_name = "a\u{FFFE}b\u{1}c".to_owned();
    let xml = String::from_utf8(encode_instance(&i, Format::Xml)).unwrap();
    let document = roxmltree::Document::parse(&xml).unwrap();
    let host = document
        .descendants()
        .find(|n| n.has_tag_name("hostName"))
        .unwrap();
    assert_eq!(host.text(), Some("a\u{FFFD}b\u{FFFD}c"));
}

#[test]
fn a_strict_parser_sees_xstreams_names_for_metadata_keys() {
    let xml = String::from_utf8(encode_instance(&hostile_instance(), Format::Xml)).unwrap();
    let document = roxmltree::Document::parse(&xml).unwrap();
    let metadata = document
        .root_element()
        .children()
        .find(|n| n.has_tag_name("metadata"))
        .unwrap();
    let names: Vec<&str> = metadata
        .children()
        .filter(|n| n.is_element())
        .map(|n| n.tag_name().name())
        .collect();
    assert_eq!(
        names,
        [
            "_.0031abc",
            "_.003a",
            "key_.fffe_.ffff_.0000_.0001_.0008_.000b_.000c_.001f_.0026_.003c_.003e_.0022_.0027_.000d_.000a_.0009_.005d_.005d_.003e_.d83d_.de00",
            "ns_.003akey",
            "prometheus.io_.002fscrape",
            "xml_.003alang",
            "xmlns",
        ]
    );
}

#[test]
fn the_json_of_a_hostile_instance_reads_back_equal() {
    let mut instance = hostile_instance();
    // The one field whose values the reader restricts.
    instance.data_center_info.as_mut().unwrap().name = "Amazon".to_owned();
    let json = encode_instance(&instance, Format::Json);
    assert_eq!(decode_instance(&json, Format::Json, NOW).unwrap(), instance);
}
