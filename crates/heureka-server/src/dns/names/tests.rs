//! How query names read against the zone.

use super::*;

fn read(name: &str) -> Asked {
    asked(
        &Name::from_ascii(name).unwrap(),
        &Name::from_ascii("eureka.").unwrap(),
    )
}

fn app(name: &str) -> String {
    name.to_owned()
}

#[test]
fn an_application_name_asks_for_its_addresses_whatever_its_case() {
    assert_eq!(
        read("orders.eureka."),
        Asked::Addresses { app: app("ORDERS") }
    );
    assert_eq!(
        read("OrDeRs.EUREKA."),
        Asked::Addresses { app: app("ORDERS") }
    );
}

#[test]
fn the_tcp_and_https_service_names_ask_for_ports_and_secure_ports() {
    assert_eq!(
        read("_orders._tcp.eureka."),
        Asked::Service {
            app: app("ORDERS"),
            secure: false
        }
    );
    assert_eq!(
        read("_orders._HTTPS.eureka."),
        Asked::Service {
            app: app("ORDERS"),
            secure: true
        }
    );
    assert_eq!(read("_orders._udp.eureka."), Asked::Nothing);
    assert_eq!(read("_._tcp.eureka."), Asked::Nothing);
}

#[test]
fn an_address_label_under_an_application_names_one_instance() {
    assert_eq!(
        read("10-0-0-7.orders.eureka."),
        Asked::Host {
            app: app("ORDERS"),
            address: "10.0.0.7".parse().unwrap()
        }
    );
    assert_eq!(
        read("fd00-0-0-0-0-0-0-1.orders.eureka."),
        Asked::Host {
            app: app("ORDERS"),
            address: "fd00::1".parse().unwrap()
        }
    );
}

#[test]
fn an_address_has_one_spelling_only() {
    assert_eq!(read("010-0-0-7.orders.eureka."), Asked::Nothing);
    assert_eq!(read("10-0-0-256.orders.eureka."), Asked::Nothing);
    assert_eq!(read("fd00-0-0-0-0-0-0-01.orders.eureka."), Asked::Nothing);
}

#[test]
fn names_outside_the_zone_are_not_ours_and_the_zone_itself_is_its_apex() {
    assert_eq!(read("orders.example.com."), Asked::Outside);
    assert_eq!(read("eureka.com."), Asked::Outside);
    assert_eq!(read("eureka."), Asked::Apex);
}

#[test]
fn deeper_names_and_underscored_application_names_are_nothing_served() {
    assert_eq!(read("a.b.orders.eureka."), Asked::Nothing);
    assert_eq!(read("_orders.eureka."), Asked::Nothing);
}

#[test]
fn address_labels_read_back_to_their_address() {
    for address in ["10.0.0.7", "fd00::1", "2001:db8::ff00:42:8329", "0.0.0.0"] {
        let address: IpAddr = address.parse().unwrap();
        let label = label_of_address(address);
        assert_eq!(address_of_label(label.as_bytes()), Some(address), "{label}");
    }
}
