//! Exact JSON output, compared byte for byte with what the Java server writes.

use heureka_core::Application;
use heureka_wire::{encode_application, encode_applications, encode_instance, Format};

use crate::fixtures::{amazon, orders, orders_deleted, port, registry, text};

/// The instance of spec §4.5, compact, as `EurekaJacksonCodec` writes it.
const ORDERS_JSON: &str = concat!(
    r#"{"instanceId":"10.0.0.5:orders:8080","hostName":"10.0.0.5","app":"ORDERS","ipAddr":"10.0.0.5","#,
    r#""status":"UP","overriddenStatus":"UNKNOWN","port":{"$":8080,"@enabled":"true"},"#,
    r#""securePort":{"$":443,"@enabled":"false"},"countryId":1,"#,
    r#""dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},"#,
    r#""leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":90,"registrationTimestamp":1714550400000,"#,
    r#""lastRenewalTimestamp":1714550580000,"evictionTimestamp":0,"serviceUpTimestamp":1714550400000},"#,
    r#""metadata":{"management.port":"8080"},"homePageUrl":"http://10.0.0.5:8080/","#,
    r#""statusPageUrl":"http://10.0.0.5:8080/actuator/info","#,
    r#""healthCheckUrl":"http://10.0.0.5:8080/actuator/health","vipAddress":"orders","#,
    r#""secureVipAddress":"orders","isCoordinatingDiscoveryServer":"false","#,
    r#""lastUpdatedTimestamp":"1714550400012","lastDirtyTimestamp":"1714550399000","actionType":"ADDED"}"#
);

fn instance_json(i: &heureka_core::Instance) -> String {
    text(encode_instance(i, Format::Json))
}

#[test]
fn full_registry_matches_the_canonical_example() {
    let apps = registry(1, "UP_1_", vec![orders()]);
    let expected = format!(
        r#"{{"applications":{{"versions__delta":"1","apps__hashcode":"UP_1_","application":[{{"name":"ORDERS","instance":[{ORDERS_JSON}]}}]}}}}"#
    );
    assert_eq!(text(encode_applications(&apps, Format::Json)), expected);
}

#[test]
fn empty_registry_has_an_empty_application_array() {
    let json = text(encode_applications(&registry(1, "", vec![]), Format::Json));
    assert_eq!(
        json,
        r#"{"applications":{"versions__delta":"1","apps__hashcode":"","application":[]}}"#
    );
}

#[test]
fn delta_carries_the_deleted_action_type() {
    let json = text(encode_applications(&orders_deleted(), Format::Json));
    assert!(json.starts_with(r#"{"applications":{"versions__delta":"42","apps__hashcode":"UP_3_","application":[{"name":"ORDERS","instance":[{"#));
    assert!(json.ends_with(r#""status":"UP","overriddenStatus":"UNKNOWN","port":{"$":8080,"@enabled":"true"},"securePort":{"$":443,"@enabled":"false"},"countryId":1,"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},"leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":90,"registrationTimestamp":1714550400000,"lastRenewalTimestamp":1714550580000,"evictionTimestamp":0,"serviceUpTimestamp":1714550400000},"metadata":{"management.port":"8080"},"homePageUrl":"http://10.0.0.5:8080/","statusPageUrl":"http://10.0.0.5:8080/actuator/info","healthCheckUrl":"http://10.0.0.5:8080/actuator/health","vipAddress":"orders","secureVipAddress":"orders","isCoordinatingDiscoveryServer":"false","lastUpdatedTimestamp":"1714550400012","lastDirtyTimestamp":"1714550399000","actionType":"DELETED"}]}]}}"#), "{json}");
}

#[test]
fn single_instance_is_wrapped_in_instance() {
    assert_eq!(
        instance_json(&orders()),
        format!(r#"{{"instance":{ORDERS_JSON}}}"#)
    );
}

#[test]
fn single_application_is_wrapped_and_its_instances_are_an_array() {
    let app = Application {
        name: "ORDERS".to_owned(),
        instances: vec![orders()],
    };
    assert_eq!(
        text(encode_application(&app, Format::Json)),
        format!(r#"{{"application":{{"name":"ORDERS","instance":[{ORDERS_JSON}]}}}}"#)
    );
}

#[test]
fn application_without_instances_still_has_an_instance_array() {
    let app = Application {
        name: "EMPTY".to_owned(),
        instances: vec![],
    };
    assert_eq!(
        text(encode_application(&app, Format::Json)),
        r#"{"application":{"name":"EMPTY","instance":[]}}"#
    );
}

#[test]
fn missing_instance_id_is_omitted() {
    let mut i = orders();
    i.instance_id = None;
    assert!(instance_json(&i).starts_with(r#"{"instance":{"hostName":"10.0.0.5","app":"ORDERS""#));
}

#[test]
fn sid_is_written_only_when_not_na_or_unknown() {
    let mut i = orders();
    for sid in ["na", "unknown"] {
        i.sid = sid.to_owned();
        assert!(!instance_json(&i).contains(r#""sid""#), "{sid}");
    }
    i.sid = "7".to_owned();
    assert!(instance_json(&i).contains(r#""ipAddr":"10.0.0.5","sid":"7","status":"UP""#));
}

#[test]
fn empty_metadata_is_the_java_empty_map() {
    let mut i = orders();
    i.metadata.clear();
    assert!(
        instance_json(&i).contains(r#""metadata":{"@class":"java.util.Collections$EmptyMap"},"#)
    );
}

#[test]
fn port_flags_are_strings_and_numbers_are_numbers() {
    let mut i = orders();
    i.port = port(80, false);
    i.secure_port = port(8443, true);
    let json = instance_json(&i);
    assert!(json.contains(r#""port":{"$":80,"@enabled":"false"},"securePort":{"$":8443,"@enabled":"true"},"countryId":1,"#));
}

#[test]
fn amazon_data_center_carries_its_class_and_metadata() {
    let mut i = orders();
    i.data_center_info = Some(amazon(&[
        ("availability-zone", "us-east-1c"),
        ("instance-id", "i-1"),
    ]));
    assert!(instance_json(&i).contains(
        r#""dataCenterInfo":{"@class":"com.netflix.appinfo.AmazonInfo","name":"Amazon","metadata":{"availability-zone":"us-east-1c","instance-id":"i-1"}},"#
    ));
}

#[test]
fn missing_data_center_info_is_omitted() {
    let mut i = orders();
    i.data_center_info = None;
    assert!(instance_json(&i).contains(r#""countryId":1,"leaseInfo":{"#));
}

#[test]
fn optional_fields_appear_in_declaration_order_when_set() {
    let mut i = orders();
    i.app_group_name = Some("G".to_owned());
    i.secure_health_check_url = Some("https://h/".to_owned());
    i.is_coordinating_discovery_server = true;
    i.asg_name = Some("asg".to_owned());
    assert!(instance_json(&i).ends_with(concat!(
        r#""metadata":{"management.port":"8080"},"appGroupName":"G","homePageUrl":"http://10.0.0.5:8080/","#,
        r#""statusPageUrl":"http://10.0.0.5:8080/actuator/info","healthCheckUrl":"http://10.0.0.5:8080/actuator/health","#,
        r#""secureHealthCheckUrl":"https://h/","vipAddress":"orders","secureVipAddress":"orders","#,
        r#""isCoordinatingDiscoveryServer":"true","lastUpdatedTimestamp":"1714550400012","#,
        r#""lastDirtyTimestamp":"1714550399000","actionType":"ADDED","asgName":"asg"}}"#
    )));
}

#[test]
fn unset_optional_fields_are_left_out() {
    let mut i = orders();
    i.home_page_url = None;
    i.status_page_url = None;
    i.health_check_url = None;
    i.vip_address = None;
    i.secure_vip_address = None;
    i.action_type = None;
    assert!(instance_json(&i).ends_with(
        r#""metadata":{"management.port":"8080"},"isCoordinatingDiscoveryServer":"false","lastUpdatedTimestamp":"1714550400012","lastDirtyTimestamp":"1714550399000"}}"#
    ));
}

#[test]
fn strings_are_escaped() {
    let mut i = orders();
    i.metadata.insert(
        "k\"ey".to_owned(),
        "back\\slash \n\t\r\u{1}\u{8}\u{c} é €".to_owned(),
    );
    assert!(instance_json(&i).contains(r#""k\"ey":"back\\slash \n\t\r\u0001\b\f é €""#));
}
