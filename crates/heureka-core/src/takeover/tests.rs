//! Takeovers as the write path reports them: a client moving a live instance elsewhere.

use crate::model::{Instance, Millis};
use crate::origin::Origin;
use crate::registry::Registry;
use crate::takeover::{Endpoint, Takeover};
use crate::test_util::{instance, registry};

/// The lease's duration in the test instances: 90 s.
const LEASE_MS: Millis = 90_000;

fn at_address(ip: &str, port: u32) -> Instance {
    let mut moved = instance("orders", "o1");
    moved.ip_addr = ip.to_owned();
    moved.port.number = port;
    moved
}

fn registered(first: Instance) -> Registry {
    let mut registry = registry();
    registry.register(first, Origin::Client, 0);
    registry.take_changes();
    registry
}

fn takeover_reported(
    registry: &mut Registry,
    again: Instance,
    origin: Origin,
    now: Millis,
) -> Option<Takeover> {
    registry.register(again, origin, now);
    let changes = registry.take_changes();
    assert_eq!(changes.len(), 1);
    changes[0].takeover.as_deref().cloned()
}

/// The takeover reported when `orders/o1`, registered from 10.0.0.1:8080 at 0, registers
/// again from `ip:port` at `now`.
fn reported_after(ip: &str, port: u32, origin: Origin, now: Millis) -> Option<Takeover> {
    let mut registry = registered(at_address("10.0.0.1", 8080));
    takeover_reported(&mut registry, at_address(ip, port), origin, now)
}

#[test]
fn registering_a_live_instance_from_another_address_is_a_takeover() {
    let reported = reported_after("10.6.6.6", 8080, Origin::Client, 1_000).expect("a takeover");
    assert_eq!(reported.previous.ip_addr, "10.0.0.1");
    assert_eq!(reported.incoming.ip_addr, "10.6.6.6");
}

#[test]
fn registering_a_live_instance_on_another_port_is_a_takeover() {
    let reported = reported_after("10.0.0.1", 9090, Origin::Client, 1_000);
    assert_eq!(reported.map(|t| t.incoming.port), Some(9090));
}

#[test]
fn re_registering_from_the_same_endpoint_is_no_takeover() {
    assert_eq!(
        reported_after("10.0.0.1", 8080, Origin::Client, 1_000),
        None
    );
}

#[test]
fn an_expired_lease_is_free_to_take() {
    let reported = reported_after("10.6.6.6", 8080, Origin::Client, LEASE_MS + 1);
    assert_eq!(reported, None);
}

#[test]
fn a_peers_replica_is_not_reported_again() {
    // The node the client wrote to reported it; its peers only apply the replica.
    assert_eq!(reported_after("10.6.6.6", 8080, Origin::Peer, 1_000), None);
}

#[test]
fn takeover_by_answers_before_the_write() {
    let registry = registered(at_address("10.0.0.1", 8080));
    assert!(registry
        .takeover_by(&at_address("10.6.6.6", 8080), 1_000)
        .is_some());
    assert!(registry
        .takeover_by(&at_address("10.0.0.1", 8080), 1_000)
        .is_none());
    assert!(registry
        .takeover_by(&at_address("10.6.6.6", 8080), LEASE_MS + 1)
        .is_none());
}

#[test]
fn an_endpoint_reads_as_address_port_and_host() {
    let endpoint = Endpoint {
        host_name: "orders-1.example.com".into(),
        ip_addr: "10.0.0.1".into(),
        port: 8080,
    };
    assert_eq!(endpoint.to_string(), "10.0.0.1:8080 (orders-1.example.com)");
}
