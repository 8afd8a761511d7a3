//! Eureka's status codes for write outcomes, one rule each (spec §3.9, §3.10, §3.11).

use super::*;
use crate::model::Instance;

#[test]
fn a_renewed_heartbeat_is_200() {
    assert_eq!(RenewOutcome::Renewed.status_code(), 200);
}

#[test]
fn a_heartbeat_of_an_unknown_instance_is_404() {
    assert_eq!(RenewOutcome::NotFound.status_code(), 404);
}

#[test]
fn a_heartbeat_with_a_newer_dirty_timestamp_than_ours_is_404_so_the_client_registers_again() {
    assert_eq!(RenewOutcome::ClientNewer.status_code(), 404);
}

#[test]
fn a_peer_heartbeat_older_than_our_copy_is_a_409_conflict() {
    let ours = Instance::new("ORDERS", "o1", "host", "10.0.0.1", 0);
    assert_eq!(
        RenewOutcome::RegistryNewer(Box::new(ours)).status_code(),
        409
    );
}

#[test]
fn a_write_to_a_known_instance_is_200() {
    assert_eq!(instance_write_status_code(true), 200);
}

#[test]
fn a_write_to_an_unknown_instance_is_404() {
    assert_eq!(instance_write_status_code(false), 404);
}
