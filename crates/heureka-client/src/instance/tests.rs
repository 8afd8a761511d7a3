//! The registered instance, compared with what a Spring Cloud client registers
//! (`../shared/spec/clients.md` §3.2).

use std::collections::BTreeMap;

use heureka_core::InstanceStatus;
use heureka_wire::{encode_instance, Format};

use super::*;

fn demo_client() -> ClientConfig {
    ClientConfig::from_properties([
        ("spring.application.name", "demo-client"),
        ("server.port", "8080"),
        ("eureka.instance.hostname", "host-a"),
        ("eureka.instance.ip-address", "10.0.0.5"),
        ("spring.cloud.client.hostname", "host-a"),
    ])
    .unwrap()
}

#[test]
fn registers_what_a_spring_client_registers() {
    let instance = own_instance(&demo_client(), 1_796_008_270_217);
    let json: serde_json::Value =
        serde_json::from_slice(&encode_instance(&instance, Format::Json)).unwrap();
    let instance = &json["instance"];
    for (field, expected) in [
        ("instanceId", "host-a:demo-client:8080"),
        ("app", "DEMO-CLIENT"),
        ("hostName", "host-a"),
        ("ipAddr", "10.0.0.5"),
        ("status", "UP"),
        ("homePageUrl", "http://host-a:8080/"),
        ("statusPageUrl", "http://host-a:8080/actuator/info"),
        ("healthCheckUrl", "http://host-a:8080/actuator/health"),
        ("vipAddress", "demo-client"),
        ("secureVipAddress", "demo-client"),
    ] {
        assert_eq!(instance[field], expected, "{field}");
    }
    assert_eq!(instance["port"]["$"], 8080);
    assert_eq!(instance["port"]["@enabled"], "true");
    assert_eq!(instance["securePort"]["$"], 443);
    assert_eq!(instance["securePort"]["@enabled"], "false");
    assert_eq!(instance["dataCenterInfo"]["name"], "MyOwn");
    assert_eq!(instance["leaseInfo"]["renewalIntervalInSecs"], 30);
    assert_eq!(instance["leaseInfo"]["durationInSecs"], 90);
    assert_eq!(instance["metadata"]["management.port"], "8080");
    assert!(instance
        .get("secureHealthCheckUrl")
        .is_none_or(|url| url.is_null()));
}

#[test]
fn explicit_urls_win_and_name_the_host() {
    let mut config = demo_client();
    config.urls.status_page = Some("https://${eureka.hostname}/status".to_owned());
    config.urls.home_page = Some("https://front.example/".to_owned());
    let instance = own_instance(&config, 0);
    assert_eq!(
        instance.status_page_url.as_deref(),
        Some("https://host-a/status")
    );
    assert_eq!(
        instance.home_page_url.as_deref(),
        Some("https://front.example/")
    );
}

#[test]
fn the_management_port_serves_status_and_health() {
    let mut config = demo_client();
    config.urls.management_port = Some(9090);
    let instance = own_instance(&config, 0);
    assert_eq!(
        instance.home_page_url.as_deref(),
        Some("http://host-a:8080/")
    );
    assert_eq!(
        instance.status_page_url.as_deref(),
        Some("http://host-a:9090/actuator/info")
    );
    assert_eq!(
        instance.health_check_url.as_deref(),
        Some("http://host-a:9090/actuator/health")
    );
}

#[test]
fn a_secure_port_gets_a_secure_health_check_url() {
    let mut config = demo_client();
    config.secure_port_enabled = true;
    config.secure_port = 8443;
    let instance = own_instance(&config, 0);
    assert!(instance.secure_port.enabled);
    assert_eq!(instance.secure_port.number, 8443);
    assert_eq!(
        instance.secure_health_check_url.as_deref(),
        Some("https://host-a:8443/actuator/health")
    );
}

#[test]
fn status_ports_metadata_and_lease_come_from_the_config() {
    let mut config = demo_client();
    config.initial_status = InstanceStatus::OutOfService;
    config.port_enabled = false;
    config.lease_renewal_interval = Duration::from_secs(5);
    config.lease_duration = Duration::from_secs(20);
    config.metadata = BTreeMap::from([("zone".to_owned(), "zone1".to_owned())]);
    let instance = own_instance(&config, 7);
    assert_eq!(instance.status, InstanceStatus::OutOfService);
    assert!(!instance.port.enabled);
    assert_eq!(instance.health_check_url, None);
    assert_eq!(instance.lease_info.renewal_interval_in_secs, 5);
    assert_eq!(instance.lease_info.duration_in_secs, 20);
    assert_eq!(instance.metadata, config.metadata);
    assert_eq!(instance.last_dirty_timestamp, 7);
    assert_eq!(
        instance.data_center_info.map(|info| info.name).as_deref(),
        Some("MyOwn")
    );
}

#[test]
fn prefer_ip_address_set_in_code_registers_the_ip_as_host_name_and_in_the_urls() {
    // A config made in code keeps the host name it was given; the flag alone must switch.
    let mut config = ClientConfig::new(vec![], "orders", "o1", "host-a", "10.0.0.5", 8080);
    config.prefer_ip_address = true;
    let instance = own_instance(&config, 0);
    assert_eq!(instance.host_name, "10.0.0.5");
    assert_eq!(
        instance.health_check_url.as_deref(),
        Some("http://10.0.0.5:8080/actuator/health")
    );
    assert_eq!(
        instance.home_page_url.as_deref(),
        Some("http://10.0.0.5:8080/")
    );
}
