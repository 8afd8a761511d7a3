//! Which probe an instance gets.

use heureka_core::{Health, InstanceStatus, Port};

use super::*;

fn subject() -> HealthSubject {
    HealthSubject {
        app: "ORDERS".to_owned(),
        id: "o1".to_owned(),
        host_name: "orders-1.local".to_owned(),
        ip_addr: "10.0.0.7".to_owned(),
        port: Port {
            number: 8080,
            enabled: true,
        },
        secure_port: Port {
            number: 443,
            enabled: false,
        },
        health_check_url: Some("http://orders-1.local:8080/actuator/health".to_owned()),
        secure_health_check_url: None,
        metadata: Vec::new(),
        status: InstanceStatus::Up,
        health: Health::Passing,
    }
}

/// The target of the subject registered with `health_check_url` instead, with no mode set
/// for its application.
fn target_with_health_url(health_check_url: Option<&str>) -> Option<Target> {
    let mut subject = subject();
    subject.health_check_url = health_check_url.map(str::to_owned);
    target_of(&subject, None)
}

fn http(url: &str) -> Target {
    Target::Http {
        url: url.to_owned(),
        echoes_registry: false,
    }
}

#[test]
fn a_registered_health_url_on_the_instances_own_host_is_fetched() {
    assert_eq!(
        target_of(&subject(), None),
        Some(http("http://orders-1.local:8080/actuator/health"))
    );
}

#[test]
fn a_health_url_on_the_instances_ip_address_is_fetched() {
    assert!(matches!(
        target_with_health_url(Some("http://10.0.0.7:8080/health")),
        Some(Target::Http { .. })
    ));
}

#[test]
fn a_health_url_naming_another_host_is_not_fetched_but_the_port_is_connected_to() {
    assert_eq!(
        target_with_health_url(Some("http://169.254.169.254/latest/meta-data")),
        Some(Target::Tcp("10.0.0.7".to_owned(), 8080))
    );
}

#[test]
fn without_a_health_url_the_port_is_connected_to() {
    assert_eq!(
        target_with_health_url(None),
        Some(Target::Tcp("10.0.0.7".to_owned(), 8080))
    );
}

#[test]
fn the_instances_own_metadata_beats_the_applications_setting() {
    let mut subject = subject();
    subject.metadata = vec![(MODE_KEY.to_owned(), "off".to_owned())];

    assert_eq!(target_of(&subject, Some(CheckMode::Http)), None);
}

#[test]
fn an_application_set_to_tcp_is_connected_to_even_with_a_health_url() {
    assert_eq!(
        target_of(&subject(), Some(CheckMode::Tcp)),
        Some(Target::Tcp("10.0.0.7".to_owned(), 8080))
    );
}

#[test]
fn an_application_set_to_off_is_not_checked() {
    assert_eq!(target_of(&subject(), Some(CheckMode::Off)), None);
}

#[test]
fn an_instance_serving_only_https_is_checked_on_its_secure_url() {
    let mut subject = subject();
    subject.port.enabled = false;
    subject.secure_port.enabled = true;
    subject.secure_health_check_url = Some("https://orders-1.local:443/actuator/health".to_owned());

    assert_eq!(
        target_of(&subject, None),
        Some(http("https://orders-1.local:443/actuator/health"))
    );
}

#[test]
fn an_instance_without_an_enabled_port_or_url_is_not_checked() {
    let mut subject = subject();
    subject.health_check_url = None;
    subject.port.enabled = false;

    assert_eq!(target_of(&subject, None), None);
}

#[test]
fn a_spring_cloud_instances_health_is_known_to_echo_the_registry() {
    let mut subject = subject();
    subject.metadata = vec![(SPRING_CLOUD_KEY.to_owned(), "8080".to_owned())];

    assert_eq!(
        target_of(&subject, None),
        Some(Target::Http {
            url: "http://orders-1.local:8080/actuator/health".to_owned(),
            echoes_registry: true,
        })
    );
}
