//! What the readers tolerate (protocol spec §4.6, §4.8; clients.md §7 "Request parsing").

use heureka_core::{
    ActionType, DataCenterClass, DataCenterInfo, Instance, InstanceStatus, LeaseInfo, Port,
};
use heureka_wire::{decode_applications, decode_instance, Format};

use crate::fixtures::NOW;

/// Decodes `{"instance":{<fields>}}`.
fn json(fields: &str) -> Instance {
    let body = format!(r#"{{"instance":{{{fields}}}}}"#);
    decode_instance(body.as_bytes(), Format::Json, NOW).unwrap_or_else(|e| panic!("{body}: {e}"))
}

/// Decodes `<instance><fields></instance>`.
fn xml(fields: &str) -> Instance {
    let body = format!("<instance>{fields}</instance>");
    decode_instance(body.as_bytes(), Format::Xml, NOW).unwrap_or_else(|e| panic!("{body}: {e}"))
}

#[test]
fn missing_fields_get_java_defaults() {
    let i = json("");
    let mut expected = Instance::new("", "", "", "", NOW);
    expected.data_center_info = None;
    assert_eq!(i, expected);
    assert_eq!(i.port, Port::DEFAULT_PLAIN);
    assert_eq!(i.secure_port, Port::DEFAULT_SECURE);
    assert_eq!(
        (i.status, i.overridden_status),
        (InstanceStatus::Up, InstanceStatus::Unknown)
    );
    assert_eq!((i.country_id, i.sid.as_str()), (1, "na"));
    assert_eq!(i.lease_info, LeaseInfo::default());
}

#[test]
fn empty_xml_instance_gets_the_same_defaults_as_json() {
    assert_eq!(xml(""), json(""));
}

#[test]
fn absent_data_center_info_stays_absent_for_the_server_to_reject() {
    assert_eq!(json(r#""hostName":"h""#).data_center_info, None);
}

#[test]
fn null_means_absent() {
    let i = json(
        r#""instanceId":null,"status":null,"port":null,"securePort":{"$":null,"@enabled":null},
        "countryId":null,"leaseInfo":null,"metadata":null,"dataCenterInfo":null,"appGroupName":null,
        "lastDirtyTimestamp":null,"isCoordinatingDiscoveryServer":null"#,
    );
    let mut expected = Instance::new("", "", "", "", NOW);
    expected.data_center_info = None;
    assert_eq!(i, expected);
}

#[test]
fn numbers_may_be_strings_and_strings_numbers() {
    let i = json(
        r#""countryId":"3","port":{"$":"81"},"lastDirtyTimestamp":"17","lastUpdatedTimestamp":18,
        "leaseInfo":{"durationInSecs":"45","renewalIntervalInSecs":10.0},"hostName":1234"#,
    );
    assert_eq!(i.country_id, 3);
    assert_eq!(i.port.number, 81);
    assert_eq!((i.last_dirty_timestamp, i.last_updated_timestamp), (17, 18));
    assert_eq!(
        (
            i.lease_info.duration_in_secs,
            i.lease_info.renewal_interval_in_secs
        ),
        (45, 10)
    );
    assert_eq!(i.host_name, "1234");
}

#[test]
fn enabled_flags_may_be_booleans_strings_or_numbers() {
    for (flag, expected) in [
        ("true", true),
        ("\"true\"", true),
        ("1", true),
        ("false", false),
        ("\"false\"", false),
        ("0", false),
    ] {
        let i = json(&format!(
            r#""securePort":{{"$":443,"@enabled":{flag}}},"port":{{"$":80,"@enabled":{flag}}}"#
        ));
        assert_eq!(
            (i.port.enabled, i.secure_port.enabled),
            (expected, expected),
            "{flag}"
        );
    }
}

#[test]
fn missing_enabled_flag_keeps_each_ports_default() {
    let i = json(r#""port":{"$":80},"securePort":{"$":443}"#);
    assert_eq!(
        i.port,
        Port {
            number: 80,
            enabled: true
        }
    );
    assert_eq!(
        i.secure_port,
        Port {
            number: 443,
            enabled: false
        }
    );
}

#[test]
fn a_bare_port_number_is_the_port() {
    assert_eq!(
        json(r#""port":8081"#).port,
        Port {
            number: 8081,
            enabled: true
        }
    );
}

#[test]
fn coordinating_flag_may_be_a_boolean_or_a_string() {
    assert!(json(r#""isCoordinatingDiscoveryServer":true"#).is_coordinating_discovery_server);
    assert!(json(r#""isCoordinatingDiscoveryServer":"true""#).is_coordinating_discovery_server);
    assert!(!json(r#""isCoordinatingDiscoveryServer":"yes""#).is_coordinating_discovery_server);
}

#[test]
fn the_last_overridden_status_spelling_wins() {
    assert_eq!(
        json(r#""overriddenStatus":"DOWN","overriddenstatus":"UP""#).overridden_status,
        InstanceStatus::Up
    );
    assert_eq!(
        json(r#""overriddenstatus":"UP","overriddenStatus":"DOWN""#).overridden_status,
        InstanceStatus::Down
    );
    assert_eq!(
        xml("<overriddenStatus>OUT_OF_SERVICE</overriddenStatus>").overridden_status,
        InstanceStatus::OutOfService
    );
}

#[test]
fn unknown_or_empty_status_becomes_unknown() {
    assert_eq!(
        json(r#""status":"SLEEPING""#).status,
        InstanceStatus::Unknown
    );
    assert_eq!(json(r#""status":"""#).status, InstanceStatus::Unknown);
    assert_eq!(json(r#""status":"up""#).status, InstanceStatus::Unknown);
}

#[test]
fn unknown_action_type_is_absent() {
    assert_eq!(json(r#""actionType":"RENAMED""#).action_type, None);
    assert_eq!(
        json(r#""actionType":"DELETED""#).action_type,
        Some(ActionType::Deleted)
    );
}

#[test]
fn app_and_app_group_name_are_upper_cased() {
    let i = json(r#""app":"orders-svc","appGroupName":"team-a""#);
    assert_eq!(
        (i.app.as_str(), i.app_group_name.as_deref()),
        ("ORDERS-SVC", Some("TEAM-A"))
    );
}

#[test]
fn metadata_values_are_read_as_text_and_the_class_marker_is_skipped() {
    let i = json(
        r#""metadata":{"@class":"java.util.HashMap","port":8080,"ratio":0.5,"on":true,"gone":null}"#,
    );
    assert_eq!(i.metadata.len(), 3);
    assert_eq!(
        (
            i.metadata["port"].as_str(),
            i.metadata["ratio"].as_str(),
            i.metadata["on"].as_str()
        ),
        ("8080", "0.5", "true")
    );
}

#[test]
fn java_empty_map_is_empty_metadata() {
    assert!(
        json(r#""metadata":{"@class":"java.util.Collections$EmptyMap"}"#)
            .metadata
            .is_empty()
    );
}

#[test]
fn data_center_class_may_be_either_default_name_or_absent() {
    for dc in [
        r#"{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}"#,
        r#"{"@class":"com.netflix.appinfo.MyDataCenterInfo","name":"MyOwn"}"#,
        r#"{"name":"MyOwn"}"#,
        r#"{"name":"MyOwn","@class":"com.example.Unknown","metadata":{"x":"y"}}"#,
    ] {
        assert_eq!(
            json(&format!(r#""dataCenterInfo":{dc}"#)).data_center_info,
            Some(DataCenterInfo::my_own()),
            "{dc}"
        );
    }
}

#[test]
fn amazon_without_class_is_recognised_by_its_name() {
    let dc = json(r#""dataCenterInfo":{"name":"Amazon","metadata":{"instance-id":"i-1"}}"#)
        .data_center_info
        .unwrap();
    assert_eq!(dc.class, DataCenterClass::Amazon);
    assert_eq!(dc.metadata["instance-id"], "i-1");
}

#[test]
fn data_center_without_name_has_an_empty_name_for_the_server_to_reject() {
    let dc = json(r#""dataCenterInfo":{"@class":"com.netflix.appinfo.MyDataCenterInfo"}"#)
        .data_center_info
        .unwrap();
    assert_eq!(dc.name, "");
}

#[test]
fn unknown_fields_are_ignored_at_any_depth() {
    let i = json(
        r#""extra":"x","nested":{"a":[1,{"b":2}]},"list":[1,2],"port":{"$":80,"@enabled":"true","weird":1},
        "dataCenterInfo":{"@class":"com.netflix.appinfo.MyDataCenterInfo","name":"MyOwn","extra":{"x":1}},
        "leaseInfo":{"durationInSecs":60,"extra":"x","more":{}}"#,
    );
    assert_eq!(
        i.port,
        Port {
            number: 80,
            enabled: true
        }
    );
    assert_eq!(i.lease_info.duration_in_secs, 60);
    assert_eq!(i.data_center_info, Some(DataCenterInfo::my_own()));
}

#[test]
fn unknown_root_keys_beside_the_wrapper_are_ignored() {
    let body = br#"{"meta":1,"instance":{"hostName":"h"}}"#;
    assert_eq!(
        decode_instance(body, Format::Json, NOW).unwrap().host_name,
        "h"
    );
}

#[test]
fn non_positive_lease_durations_mean_the_defaults() {
    let lease = json(r#""leaseInfo":{"renewalIntervalInSecs":0,"durationInSecs":-5}"#).lease_info;
    assert_eq!(lease, LeaseInfo::default());
}

#[test]
fn bean_alias_renewal_timestamp_is_accepted() {
    assert_eq!(
        json(r#""leaseInfo":{"renewalTimestamp":5}"#)
            .lease_info
            .last_renewal_timestamp,
        5
    );
}

#[test]
fn spring_angel_instance_id_is_taken_from_metadata() {
    let i = json(r#""hostName":"h","metadata":{"instanceId":"orders:1"}"#);
    assert_eq!(i.instance_id.as_deref(), Some("h:orders:1"));
    let i = json(r#""hostName":"h","metadata":{"instanceId":"h:orders:1"}"#);
    assert_eq!(i.instance_id.as_deref(), Some("h:orders:1"));
    let i = json(r#""instanceId":"own","hostName":"h","metadata":{"instanceId":"x"}"#);
    assert_eq!(i.instance_id.as_deref(), Some("own"));
}

#[test]
fn xml_empty_elements_are_empty_values_or_defaults() {
    let i = xml("<overriddenstatus></overriddenstatus><countryId/><metadata></metadata><appGroupName/><lastDirtyTimestamp></lastDirtyTimestamp>");
    assert_eq!(i.overridden_status, InstanceStatus::Unknown);
    assert_eq!(i.country_id, 1);
    assert!(i.metadata.is_empty());
    assert_eq!(i.app_group_name.as_deref(), Some(""));
    assert_eq!(i.last_dirty_timestamp, NOW);
}

#[test]
fn xml_port_flags_follow_xstream() {
    let i = xml(r#"<port enabled="yes">80</port><securePort enabled="yes">443</securePort>"#);
    assert_eq!((i.port.enabled, i.secure_port.enabled), (true, false));
    let i = xml(r#"<port enabled="false">80</port><securePort enabled="true">443</securePort>"#);
    assert_eq!((i.port.enabled, i.secure_port.enabled), (false, true));
    let i = xml("<port>80</port><securePort>443</securePort>");
    assert_eq!(
        (i.port, i.secure_port),
        (
            Port {
                number: 80,
                enabled: true
            },
            Port {
                number: 443,
                enabled: false
            }
        )
    );
}

#[test]
fn xml_metadata_names_are_decoded_and_the_class_attribute_ignored() {
    let i =
        xml(r#"<metadata class="java.util.HashMap"><my__key>1</my__key><a_-b>2</a_-b></metadata>"#);
    assert_eq!(
        (i.metadata["my_key"].as_str(), i.metadata["a$b"].as_str()),
        ("1", "2")
    );
    assert!(xml(r#"<metadata class="java.util.Collections$EmptyMap"/>"#)
        .metadata
        .is_empty());
}

#[test]
fn xml_metadata_names_with_hex_escapes_are_decoded_like_xstream() {
    let i = xml(concat!(
        "<metadata>",
        "<a_.0020b>1</a_.0020b>",
        "<prometheus.io_.002fscrape>true</prometheus.io_.002fscrape>",
        "<_.0031abc>2</_.0031abc>",
        "<x_.D83D_.DE00>3</x_.D83D_.DE00>",
        "</metadata>"
    ));
    let keys: Vec<&str> = i.metadata.keys().map(String::as_str).collect();
    assert_eq!(keys, ["1abc", "a b", "prometheus.io/scrape", "x😀"]);
}

#[test]
fn xml_metadata_names_with_underscores_that_are_no_escape_are_kept() {
    // fargo and hand-written bodies do not code their names.
    let i = xml("<metadata><a_b>1</a_b><a_.z>2</a_.z><a_.d800>3</a_.d800></metadata>");
    let keys: Vec<&str> = i.metadata.keys().map(String::as_str).collect();
    assert_eq!(keys, ["a_.d800", "a_.z", "a_b"]);
}

#[test]
fn xml_amazon_metadata_names_are_decoded_too() {
    let i = xml(concat!(
        r#"<dataCenterInfo class="com.netflix.appinfo.AmazonInfo"><name>Amazon</name>"#,
        "<metadata><instance_.002did>i-1</instance_.002did></metadata></dataCenterInfo>"
    ));
    assert_eq!(i.data_center_info.unwrap().metadata["instance-id"], "i-1");
}

#[test]
fn xml_registry_element_names_are_decoded_once() {
    let body = "<applications><versions__delta>4</versions__delta><apps__hashcode>UP_1_</apps__hashcode>\
        <application><name>A</name><instance><hostName>h</hostName><metadata><k____x>1</k____x></metadata></instance></application></applications>";
    let apps = decode_applications(body.as_bytes(), Format::Xml).unwrap();
    assert_eq!(
        (apps.versions_delta, apps.apps_hashcode.as_str()),
        (4, "UP_1_")
    );
    let metadata = &apps.applications[0].instances[0].metadata;
    assert_eq!(metadata.keys().collect::<Vec<_>>(), ["k__x"]);
}

#[test]
fn xml_data_center_class_is_read_from_its_attribute() {
    let i = xml(
        r#"<dataCenterInfo class="com.netflix.appinfo.AmazonInfo"><name>Amazon</name><metadata><instance-id>i-7</instance-id></metadata></dataCenterInfo>"#,
    );
    let dc = i.data_center_info.unwrap();
    assert_eq!(
        (dc.class, dc.metadata["instance-id"].as_str()),
        (DataCenterClass::Amazon, "i-7")
    );
}

#[test]
fn xml_declaration_comments_cdata_and_entities_are_fine() {
    let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- hi -->\n<instance>\n  <hostName><![CDATA[a<b]]></hostName>\n  <app>x&amp;y&#65;</app>\n</instance>\n";
    let i = decode_instance(body.as_bytes(), Format::Xml, NOW).unwrap();
    assert_eq!((i.host_name.as_str(), i.app.as_str()), ("a<b", "X&YA"));
}

#[test]
fn xml_unknown_elements_are_ignored() {
    let i = xml("<hostName>h</hostName><surprise><deep>1</deep></surprise><version>3</version>");
    assert_eq!(i.host_name, "h");
}

#[test]
fn registry_may_hold_single_objects_instead_of_arrays() {
    let body = br#"{"applications":{"versions__delta":7,"apps__hashcode":"UP_1_",
        "application":{"name":"a","instance":{"hostName":"h","app":"A","lastDirtyTimestamp":"5"}}}}"#;
    let apps = decode_applications(body, Format::Json).unwrap();
    assert_eq!(
        (apps.versions_delta, apps.apps_hashcode.as_str()),
        (7, "UP_1_")
    );
    assert_eq!(apps.applications[0].name, "A");
    assert_eq!(apps.applications[0].instances[0].last_dirty_timestamp, 5);
}

#[test]
fn registry_without_application_key_or_version_is_empty() {
    let apps = decode_applications(br#"{"applications":{}}"#, Format::Json).unwrap();
    assert_eq!(
        (
            apps.versions_delta,
            apps.apps_hashcode.as_str(),
            apps.applications.len()
        ),
        (-1, "", 0)
    );
    let apps = decode_applications(
        br#"{"applications":{"application":[{"name":"X"}]}}"#,
        Format::Json,
    )
    .unwrap();
    assert!(apps.applications[0].instances.is_empty());
}

#[test]
fn xml_registry_with_several_applications_is_read() {
    let body = "<applications><versions__delta>3</versions__delta><apps__hashcode>UP_2_</apps__hashcode>\
        <application><name>A</name><instance><hostName>a1</hostName></instance><instance><hostName>a2</hostName></instance></application>\
        <application><name>B</name></application></applications>";
    let apps = decode_applications(body.as_bytes(), Format::Xml).unwrap();
    assert_eq!(
        (apps.versions_delta, apps.apps_hashcode.as_str()),
        (3, "UP_2_")
    );
    assert_eq!(apps.applications.len(), 2);
    assert_eq!(apps.applications[0].instances[1].host_name, "a2");
    assert!(apps.applications[1].instances.is_empty());
}

#[test]
fn a_utf8_byte_order_mark_is_skipped() {
    let json = b"\xEF\xBB\xBF{\"instance\":{\"hostName\":\"h\"}}";
    assert_eq!(
        decode_instance(json, Format::Json, NOW).unwrap().host_name,
        "h"
    );
    let xml = b"\xEF\xBB\xBF<instance><hostName>h</hostName></instance>";
    assert_eq!(
        decode_instance(xml, Format::Xml, NOW).unwrap().host_name,
        "h"
    );
}
