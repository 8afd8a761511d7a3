//! Register bodies recorded from real clients (`tests/data/`, clients.md §1–§4), decoded.

use std::collections::BTreeMap;

use heureka_core::{DataCenterClass, DataCenterInfo, Instance, InstanceStatus, LeaseInfo, Port};
use heureka_wire::{decode_instance, Format};

use crate::fixtures::{data, port, NOW};

fn json(name: &str) -> Instance {
    decode_instance(&data(name), Format::Json, NOW).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn metadata(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn spring_rest_client_body_is_read_with_nulls_and_numeric_timestamps() {
    let i = json("spring_restclient.json");
    let mut expected = Instance::new(
        "DEMO-CLIENT",
        "host-a:demo-client:8080",
        "host-a",
        "10.0.0.5",
        1_796_008_391_555,
    );
    expected.port = port(8080, true);
    expected.secure_port = port(443, false);
    expected.metadata = metadata(&[("management.port", "8080")]);
    expected.home_page_url = Some("http://host-a:8080/".to_owned());
    expected.status_page_url = Some("http://host-a:8080/actuator/info".to_owned());
    expected.health_check_url = Some("http://host-a:8080/actuator/health".to_owned());
    expected.vip_address = Some("demo-client".to_owned());
    expected.secure_vip_address = Some("demo-client".to_owned());
    assert_eq!(i, expected);
}

#[test]
fn jersey_legacy_body_is_read_with_string_timestamps() {
    let i = json("jersey3.json");
    assert_eq!(i.instance_id.as_deref(), Some("host-a:demo-client:8080"));
    assert_eq!(i.app, "DEMO-CLIENT");
    assert_eq!(i.status, InstanceStatus::Up);
    assert_eq!(i.overridden_status, InstanceStatus::Unknown);
    assert_eq!(
        i.port,
        Port {
            number: 8080,
            enabled: true
        }
    );
    assert_eq!(i.data_center_info, Some(DataCenterInfo::my_own()));
    assert!(!i.is_coordinating_discovery_server);
    assert_eq!(i.last_updated_timestamp, 1_796_008_392_009);
    assert_eq!(i.last_dirty_timestamp, 1_796_008_392_009);
    assert_eq!(i.app_group_name, None);
}

#[test]
fn python_body_is_read_with_lower_case_overriddenstatus_and_its_lease() {
    let i = json("python.json");
    assert_eq!(i.instance_id.as_deref(), Some("127.0.0.1:py-probe:9090"));
    assert_eq!(i.app, "PY-PROBE");
    assert_eq!(
        i.port,
        Port {
            number: 9090,
            enabled: true
        }
    );
    assert_eq!(
        i.secure_port,
        Port {
            number: 9443,
            enabled: false
        }
    );
    assert_eq!(
        i.lease_info,
        LeaseInfo {
            renewal_interval_in_secs: 2,
            duration_in_secs: 6,
            ..LeaseInfo::default()
        }
    );
    assert_eq!(
        i.metadata,
        metadata(&[
            ("management.port", "9090"),
            ("team", "probe"),
            ("zone", "default")
        ])
    );
    assert_eq!(i.secure_health_check_url.as_deref(), Some(""));
    assert_eq!(i.overridden_status, InstanceStatus::Unknown);
    assert_eq!(i.last_dirty_timestamp, 1_796_007_824_248);
}

#[test]
fn js_body_gets_defaults_and_an_upper_cased_app() {
    let i = json("js.json");
    assert_eq!(i.app, "JS-PROBE");
    assert_eq!(i.instance_id.as_deref(), Some("js-probe-1"));
    assert_eq!(
        i.port,
        Port {
            number: 8080,
            enabled: true
        }
    );
    assert_eq!(i.secure_port, Port::DEFAULT_SECURE);
    assert_eq!(i.lease_info, LeaseInfo::default());
    assert_eq!(i.country_id, 1);
    assert_eq!(i.last_updated_timestamp, NOW);
    assert_eq!(i.last_dirty_timestamp, NOW);
    assert_eq!(i.metadata, metadata(&[("team", "probe")]));
    assert_eq!(i.home_page_url, None);
}

#[test]
fn fargo_json_body_is_read_with_string_ports_and_empty_overriddenstatus() {
    let i = json("fargo_json.json");
    assert_eq!(
        i.port,
        Port {
            number: 8090,
            enabled: true
        }
    );
    assert_eq!(
        i.secure_port,
        Port {
            number: 8443,
            enabled: false
        }
    );
    assert_eq!(i.overridden_status, InstanceStatus::Unknown);
    assert_eq!(i.country_id, 0);
    assert_eq!(i.data_center_info, Some(DataCenterInfo::my_own()));
}

#[test]
fn fargo_xml_body_is_read_without_a_data_center_class() {
    let i = decode_instance(&data("fargo_xml.xml"), Format::Xml, NOW).unwrap();
    let mut expected = Instance::new("GO-PROBE", "go-probe-1", "127.0.0.1", "127.0.0.1", NOW);
    expected.vip_address = Some("go-probe".to_owned());
    expected.secure_vip_address = Some("go-probe".to_owned());
    expected.home_page_url = Some("http://127.0.0.1:8090/".to_owned());
    expected.status_page_url = Some("http://127.0.0.1:8090/info".to_owned());
    expected.health_check_url = Some("http://127.0.0.1:8090/health".to_owned());
    expected.country_id = 0;
    expected.metadata = metadata(&[("team", "probe")]);
    expected.port = port(8090, true);
    expected.secure_port = port(8443, false);
    assert_eq!(i, expected);
}

#[test]
fn netflix_java_client_body_of_the_spec_is_read() {
    let body = concat!(
        r#"{"instance":{"instanceId":"myhost:orders:8080","hostName":"myhost","app":"ORDERS","#,
        r#""ipAddr":"10.0.0.5","status":"STARTING","overriddenStatus":"UNKNOWN","#,
        r#""port":{"$":8080,"@enabled":"true"},"securePort":{"$":443,"@enabled":"false"},"countryId":1,"#,
        r#""dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},"#,
        r#""leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":90,"registrationTimestamp":0,"#,
        r#""lastRenewalTimestamp":0,"evictionTimestamp":0,"serviceUpTimestamp":0},"#,
        r#""metadata":{"@class":"java.util.Collections$EmptyMap"},"#,
        r#""homePageUrl":"http://myhost:8080/","statusPageUrl":"http://myhost:8080/Status","#,
        r#""healthCheckUrl":"http://myhost:8080/healthcheck","vipAddress":"orders","#,
        r#""isCoordinatingDiscoveryServer":"false","lastUpdatedTimestamp":"1714550399000","#,
        r#""lastDirtyTimestamp":"1714550399000"}}"#
    );
    let i = decode_instance(body.as_bytes(), Format::Json, NOW).unwrap();
    assert_eq!(i.status, InstanceStatus::Starting);
    assert!(i.metadata.is_empty());
    assert_eq!(i.last_dirty_timestamp, 1_714_550_399_000);
    assert_eq!(i.secure_vip_address, None);
}

#[test]
fn amazon_data_center_body_is_read_with_its_metadata() {
    let body = br#"{"instance":{"hostName":"h","app":"a","ipAddr":"1.2.3.4",
        "dataCenterInfo":{"@class":"com.netflix.appinfo.AmazonInfo","name":"Amazon",
        "metadata":{"instance-id":"i-9","availability-zone":"eu-west-1a"}}}}"#;
    let i = decode_instance(body, Format::Json, NOW).unwrap();
    let dc = i.data_center_info.as_ref().unwrap();
    assert_eq!(dc.class, DataCenterClass::Amazon);
    assert_eq!(
        dc.metadata,
        metadata(&[("availability-zone", "eu-west-1a"), ("instance-id", "i-9")])
    );
    assert_eq!(i.id(), "i-9");
}
