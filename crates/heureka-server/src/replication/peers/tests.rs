//! Peers from configuration: zones in Eureka's order, this server left out by host and port.

use super::{peer_urls, OwnAddress, PeerUrl};
use crate::replication::test_config::config;

fn urls(args: &[&str], port: u16) -> Vec<String> {
    let config = config(args);
    let own = OwnAddress::from_config(&config, port);
    peer_urls(&config, &own)
        .into_iter()
        .map(|peer| peer.url)
        .collect()
}

#[test]
fn the_default_service_url_is_this_server_on_port_8761() {
    assert!(urls(&[], 8761).is_empty());
}

#[test]
fn a_url_on_this_host_and_another_port_is_a_peer() {
    let found = urls(
        &["--eureka.client.service-url.defaultZone=http://localhost:8761/eureka/,http://localhost:8762/eureka/"],
        8761,
    );
    assert_eq!(found, vec!["http://localhost:8762/eureka/"]);
}

#[test]
fn localhost_and_127_0_0_1_both_name_this_server() {
    let found = urls(
        &["--eureka.client.service-url.defaultZone=http://127.0.0.1:8761/eureka/,http://localhost:8761/eureka/"],
        8761,
    );
    assert!(found.is_empty());
}

#[test]
fn the_configured_host_name_names_this_server() {
    let found = urls(
        &[
            "--eureka.instance.hostname=peer1",
            "--eureka.client.service-url.defaultZone=http://peer1:8761/eureka/,http://peer2:8761/eureka/",
        ],
        8761,
    );
    assert_eq!(found, vec!["http://peer2:8761/eureka/"]);
}

#[test]
fn my_url_alone_decides_when_set() {
    let found = urls(
        &[
            "--eureka.server.my-url=http://peer2:8761/eureka/",
            "--eureka.client.service-url.defaultZone=http://localhost:8761/eureka/,http://peer2:8761/eureka",
        ],
        8761,
    );
    assert_eq!(found, vec!["http://localhost:8761/eureka/"]);
}

#[test]
fn credentials_move_from_the_url_to_a_basic_authorization() {
    let config =
        config(&["--eureka.client.service-url.defaultZone=http://user:p%40ss@peer2:8761/eureka/"]);
    let peers = peer_urls(&config, &OwnAddress::from_config(&config, 8761));
    assert_eq!(
        peers,
        vec![PeerUrl {
            url: "http://peer2:8761/eureka/".to_owned(),
            // base64("user:p@ss")
            authorization: Some("Basic dXNlcjpwQHNz".to_owned()),
        }]
    );
}

#[test]
fn zones_follow_the_availability_zone_order_then_the_rest() {
    let found = urls(
        &[
            "--eureka.client.region=eu",
            "--eureka.client.availability-zones.eu=zone-b,zone-a",
            "--eureka.client.service-url.zone-a=http://a:8761/eureka/",
            "--eureka.client.service-url.zone-b=http://b:8761/eureka/",
            "--eureka.client.service-url.other=http://c:8761/eureka/",
        ],
        9999,
    );
    assert_eq!(
        found,
        vec![
            "http://b:8761/eureka/",
            "http://a:8761/eureka/",
            "http://c:8761/eureka/"
        ]
    );
}

#[test]
fn a_peer_listed_in_two_zones_is_one_peer() {
    let found = urls(
        &[
            "--eureka.client.service-url.defaultZone=http://b:8761/eureka/",
            "--eureka.client.service-url.other=http://b:8761/eureka",
        ],
        9999,
    );
    assert_eq!(found, vec!["http://b:8761/eureka/"]);
}
