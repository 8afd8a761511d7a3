//! An instance the way Spring Cloud registers one, shared by the integration tests' fixtures
//! and the examples (each includes this file as a module of its own).

use std::collections::BTreeMap;

use heureka_core::{Instance, LeaseInfo, Port};

/// A port with its `@enabled` flag.
pub fn port(number: u32, enabled: bool) -> Port {
    Port { number, enabled }
}

/// `app`'s instance `id` on `host` (its name and its address): port 8080 on, 443 off, a lease
/// registered at 1_714_550_400_000 and renewed 180 s later, the management port as metadata,
/// Spring Boot's URLs and `vip` as both VIP addresses.
pub fn spring_instance(app: &str, id: &str, host: &str, vip: &str) -> Instance {
    let mut i = Instance::new(app, id, host, host, 1_714_550_400_012);
    i.port = port(8080, true);
    i.secure_port = port(443, false);
    i.lease_info = LeaseInfo {
        registration_timestamp: 1_714_550_400_000,
        last_renewal_timestamp: 1_714_550_580_000,
        service_up_timestamp: 1_714_550_400_000,
        ..LeaseInfo::default()
    };
    i.metadata = BTreeMap::from([("management.port".to_owned(), "8080".to_owned())]);
    i.home_page_url = Some(format!("http://{host}:8080/"));
    i.status_page_url = Some(format!("http://{host}:8080/actuator/info"));
    i.health_check_url = Some(format!("http://{host}:8080/actuator/health"));
    i.vip_address = Some(vip.to_owned());
    i.secure_vip_address = Some(vip.to_owned());
    i
}
