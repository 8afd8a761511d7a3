//! The HTTP SD document, and the labels named as Prometheus' `eureka_sd_configs` names them.

use std::collections::BTreeMap;

use heureka_core::{DataCenterInfo, Port};
use serde_json::Value;

use super::*;

/// The labels of `instance`'s group, as a reader of the document sees them.
fn eureka_sd_labels(app: &str, instance: &Instance) -> BTreeMap<String, String> {
    let target = Target {
        app,
        instance,
        address: "h:1".to_owned(),
        metrics_path: None,
        scheme: None,
    };
    let document: Value = serde_json::from_slice(&encode_target_groups(&[target])).unwrap();
    let labels = document[0]["labels"].as_object().unwrap();
    labels
        .iter()
        .map(|(name, value)| (name.clone(), value.as_str().unwrap().to_owned()))
        .collect()
}

fn orders_1() -> Instance {
    let mut instance = Instance::new("ORDERS", "orders-1", "orders.local", "10.0.0.7", 0);
    instance.port = Port {
        number: 8080,
        enabled: true,
    };
    instance.vip_address = Some("orders".to_owned());
    instance.home_page_url = Some("http://orders.local:8080/".to_owned());
    instance
}

fn label<'a>(labels: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    labels.get(name).map(String::as_str)
}

#[test]
fn an_instance_has_the_labels_eureka_sd_gives_it() {
    let labels = eureka_sd_labels("ORDERS", &orders_1());
    let expected = [
        ("instance", "orders-1"),
        ("__meta_eureka_app_name", "ORDERS"),
        ("__meta_eureka_app_instance_id", "orders-1"),
        ("__meta_eureka_app_instance_hostname", "orders.local"),
        ("__meta_eureka_app_instance_ip_addr", "10.0.0.7"),
        ("__meta_eureka_app_instance_status", "UP"),
        (
            "__meta_eureka_app_instance_homepage_url",
            "http://orders.local:8080/",
        ),
        ("__meta_eureka_app_instance_vip_address", "orders"),
        ("__meta_eureka_app_instance_country_id", "1"),
        ("__meta_eureka_app_instance_port", "8080"),
        ("__meta_eureka_app_instance_port_enabled", "true"),
        ("__meta_eureka_app_instance_secure_port", "7002"),
        ("__meta_eureka_app_instance_secure_port_enabled", "false"),
        ("__meta_eureka_app_instance_datacenterinfo_name", "MyOwn"),
    ];
    let expected: BTreeMap<String, String> = expected
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    assert_eq!(labels, expected, "absent URLs and VIPs have no label");
}

#[test]
fn a_metadata_key_is_named_as_its_xml_element_then_sanitised() {
    let mut instance = orders_1();
    for (key, value) in [
        ("management.port", "9090"),
        ("prometheus.io/scrape", "true"),
        ("my_key", "x"),
        ("zoné", "z"),
        ("", "dropped"),
    ] {
        instance.metadata.insert(key.to_owned(), value.to_owned());
    }
    let labels = eureka_sd_labels("ORDERS", &instance);
    let metadata = "__meta_eureka_app_instance_metadata_";
    let named = |key: &str| label(&labels, &format!("{metadata}{key}"));
    assert_eq!(named("management_port"), Some("9090"));
    // XStream writes `/` as `_.002f` and `_` as `__`.
    assert_eq!(named("prometheus_io__002fscrape"), Some("true"));
    assert_eq!(named("my__key"), Some("x"));
    // One character, one underscore.
    assert_eq!(named("zon_"), Some("z"));
    let metadata_labels = labels.keys().filter(|k| k.starts_with(metadata)).count();
    assert_eq!(
        metadata_labels, 4,
        "the empty key has no element, so no label"
    );
}

#[test]
fn keys_sanitised_alike_keep_the_last_in_document_order() {
    let mut instance = orders_1();
    instance
        .metadata
        .insert("a-b".to_owned(), "first".to_owned());
    instance
        .metadata
        .insert("a.b".to_owned(), "last".to_owned());
    let labels = eureka_sd_labels("ORDERS", &instance);
    assert_eq!(
        label(&labels, "__meta_eureka_app_instance_metadata_a_b"),
        Some("last")
    );
}

#[test]
fn a_data_centres_metadata_is_labelled_for_amazon_only_as_xml_carries_it() {
    let mut instance = orders_1();
    let mut amazon = DataCenterInfo {
        class: DataCenterClass::Amazon,
        name: "Amazon".to_owned(),
        metadata: BTreeMap::new(),
    };
    amazon
        .metadata
        .insert("availability-zone".to_owned(), "eu-west-1a".to_owned());
    instance.data_center_info = Some(amazon.clone());
    let labels = eureka_sd_labels("ORDERS", &instance);
    let zone = "__meta_eureka_app_instance_datacenterinfo_metadata_availability_zone";
    assert_eq!(label(&labels, zone), Some("eu-west-1a"));

    instance.data_center_info = Some(DataCenterInfo {
        class: DataCenterClass::Default,
        ..amazon
    });
    assert_eq!(label(&eureka_sd_labels("ORDERS", &instance), zone), None);
}

#[test]
fn an_instance_without_an_id_has_no_instance_label() {
    let mut instance = orders_1();
    instance.instance_id = None;
    let labels = eureka_sd_labels("ORDERS", &instance);
    assert_eq!(label(&labels, "instance"), None);
    assert_eq!(label(&labels, "__meta_eureka_app_instance_id"), None);
}

#[test]
fn the_document_is_a_json_list_of_groups_with_escaped_strings() {
    let mut instance = orders_1();
    instance
        .metadata
        .insert("say".to_owned(), "\"hi\"\n".to_owned());
    let targets = [
        Target {
            app: "ORDERS",
            instance: &instance,
            address: "a:1".to_owned(),
            metrics_path: Some("/metrics"),
            scheme: Some("https"),
        },
        Target {
            app: "ORDERS",
            instance: &instance,
            address: "[::1]:2".to_owned(),
            metrics_path: None,
            scheme: None,
        },
    ];
    let body = encode_target_groups(&targets);
    let document: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(document[0]["targets"], serde_json::json!(["a:1"]));
    assert_eq!(document[1]["targets"], serde_json::json!(["[::1]:2"]));
    let labels = &document[0]["labels"];
    assert_eq!(
        labels["__meta_eureka_app_instance_metadata_say"],
        "\"hi\"\n"
    );
    assert_eq!(labels["__metrics_path__"], "/metrics");
    assert_eq!(labels["__scheme__"], "https");
    assert!(document[1]["labels"].get("__scheme__").is_none());
    assert_eq!(encode_target_groups(&[]), b"[]");
}
