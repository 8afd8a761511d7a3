//! `DiscoveryHttpClient`'s unit tests: how an application-name URL becomes an instance's URL.

use heureka_core::{Instance, Port};
use reqwest::Url;

use super::{instance_url, Address, DiscoveryError, DiscoveryHttpClient};
use crate::select::{Selector, Strategy};

fn instance() -> Instance {
    let mut instance = Instance::new("ORDERS", "o1", "orders-1.internal", "10.0.0.7", 0);
    instance.port = Port {
        number: 8080,
        enabled: true,
    };
    instance.secure_port = Port {
        number: 8443,
        enabled: true,
    };
    instance
}

fn resolve(url: &str, instance: &Instance, address: Address, secure: bool) -> String {
    instance_url(&Url::parse(url).unwrap(), instance, address, secure)
        .unwrap()
        .to_string()
}

#[test]
fn the_app_name_becomes_the_host_name_and_port_keeping_path_and_query() {
    assert_eq!(
        resolve(
            "http://orders/api/x?id=3#top",
            &instance(),
            Address::HostName,
            true
        ),
        "http://orders-1.internal:8080/api/x?id=3#top"
    );
}

#[test]
fn the_ip_address_can_be_used_instead() {
    assert_eq!(
        resolve("http://ORDERS/api", &instance(), Address::IpAddr, true),
        "http://10.0.0.7:8080/api"
    );
}

#[test]
fn https_goes_to_the_enabled_secure_port() {
    assert_eq!(
        resolve("https://orders/api", &instance(), Address::IpAddr, true),
        "https://10.0.0.7:8443/api"
    );
}

#[test]
fn https_uses_the_plain_port_when_the_secure_port_is_disabled_or_not_wanted() {
    let mut disabled = instance();
    disabled.secure_port.enabled = false;
    assert_eq!(
        resolve("https://orders/api", &disabled, Address::IpAddr, true),
        "https://10.0.0.7:8080/api"
    );
    assert_eq!(
        resolve("https://orders/api", &instance(), Address::IpAddr, false),
        "https://10.0.0.7:8080/api"
    );
}

#[test]
fn a_port_in_the_url_is_replaced_by_the_instances() {
    assert_eq!(
        resolve("http://orders:1234/api", &instance(), Address::IpAddr, true),
        "http://10.0.0.7:8080/api"
    );
}

#[test]
fn an_ipv6_address_is_bracketed() {
    let mut v6 = instance();
    v6.ip_addr = "::1".to_owned();
    assert_eq!(
        resolve("http://orders/api", &v6, Address::IpAddr, true),
        "http://[::1]:8080/api"
    );
}

#[test]
fn a_port_out_of_range_is_an_error_naming_the_instance() {
    let mut wrong = instance();
    wrong.port.number = 70_000;
    let error = instance_url(
        &Url::parse("http://orders/").unwrap(),
        &wrong,
        Address::IpAddr,
        true,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "instance o1 of ORDERS has no usable address (10.0.0.7:70000)"
    );
}

fn client() -> DiscoveryHttpClient<Vec<Instance>> {
    DiscoveryHttpClient::new(
        crate::ClientTls::reqwest_builder(None)
            .unwrap()
            .build()
            .unwrap(),
        vec![instance()],
        Selector::new(Strategy::RoundRobin),
    )
}

#[tokio::test]
async fn a_url_without_a_host_names_no_application() {
    let request = reqwest::Request::new(
        reqwest::Method::GET,
        Url::parse("mailto:orders@example.com").unwrap(),
    );
    let error = client().execute(request).await.unwrap_err();
    assert!(
        matches!(error, DiscoveryError::NoApplication { .. }),
        "{error}"
    );
}

#[tokio::test]
async fn a_url_reqwest_cannot_parse_is_a_build_error() {
    let error = client().get("http://").send().await.unwrap_err();
    assert!(matches!(error, DiscoveryError::Build(_)), "{error}");
}
