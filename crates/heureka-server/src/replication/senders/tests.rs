//! Which senders are peers: resolved peer addresses, v4-mapped v6 senders, allowed blocks,
//! and the resolver following the peer list.

use std::net::IpAddr;

use super::{Known, PeerAddresses};
use crate::config::AddressRange;
use crate::replication::test_config::config;
use crate::replication::{OwnAddress, PeerUrl, Replication};

fn peer(url: &str) -> PeerUrl {
    PeerUrl {
        url: url.to_owned(),
        authorization: None,
    }
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

#[test]
fn a_peer_url_with_an_address_is_known_from_the_start() {
    let senders = PeerAddresses::new(
        Vec::new(),
        &[
            peer("http://10.0.0.2:8761/eureka/"),
            peer("http://[fd00::3]:8761/eureka/"),
        ],
    );
    assert_eq!(senders.recognise(ip("10.0.0.2")), Some(Known::PeerAddress));
    assert_eq!(senders.recognise(ip("fd00::3")), Some(Known::PeerAddress));
    assert_eq!(senders.recognise(ip("10.0.0.9")), None);
    assert_eq!(senders.recognise(ip("fd00::4")), None);
}

#[test]
fn a_v4_mapped_v6_sender_is_its_v4_peer() {
    // A dual-stack listener reports a v4 peer as ::ffff:a.b.c.d.
    let senders = PeerAddresses::new(Vec::new(), &[peer("http://127.0.0.1:8762/eureka/")]);
    assert_eq!(
        senders.recognise(ip("::ffff:127.0.0.1")),
        Some(Known::PeerAddress)
    );
    assert_eq!(senders.recognise(ip("::ffff:127.0.0.2")), None);
}

#[test]
fn a_host_name_is_not_known_before_it_is_resolved() {
    let senders = PeerAddresses::new(Vec::new(), &[peer("http://localhost:8762/eureka/")]);
    assert_eq!(senders.recognise(ip("127.0.0.1")), None);
}

#[test]
fn allowed_addresses_and_blocks_are_accepted_besides_the_peers() {
    let allowed = ["192.0.2.7", "10.0.0.0/8", "fd00::/16"]
        .iter()
        .map(|text| AddressRange::parse(text).unwrap())
        .collect();
    let senders = PeerAddresses::new(allowed, &[]);
    for sender in ["192.0.2.7", "10.200.1.1", "::ffff:10.0.0.1", "fd00:1::1"] {
        assert_eq!(
            senders.recognise(ip(sender)),
            Some(Known::AllowedAddress),
            "{sender}"
        );
    }
    for sender in ["192.0.2.8", "11.0.0.1", "fe80::1", "127.0.0.1"] {
        assert_eq!(senders.recognise(ip(sender)), None, "{sender}");
    }
}

#[test]
fn a_node_that_lists_only_itself_knows_no_sender() {
    let config = config(&["--eureka.client.service-url.defaultZone=http://localhost:8761/eureka/"]);
    let replication = Replication::new(&config, OwnAddress::from_config(&config, 8761));
    assert!(replication.peers().is_empty());
    assert_eq!(replication.senders().recognise(ip("127.0.0.1")), None);
}

#[tokio::test]
async fn the_resolver_learns_every_address_of_a_peers_host_name() {
    let config = config(&["--eureka.client.service-url.defaultZone=http://localhost:8762/eureka/"]);
    let replication = Replication::new(&config, OwnAddress::from_config(&config, 8761));
    let expected: Vec<IpAddr> = tokio::net::lookup_host(("localhost", 8762))
        .await
        .unwrap()
        .map(|address| crate::config::address::canonical(address.ip()))
        .collect();
    assert!(!expected.is_empty());
    crate::replication::resolver::Resolver::default()
        .round(&replication)
        .await;
    for address in &expected {
        assert_eq!(
            replication.senders().recognise(*address),
            Some(Known::PeerAddress),
            "{address}"
        );
    }
}
