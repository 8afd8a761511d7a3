//! Cancel (§6.5): the instance goes, and its override with it.

use crate::model::InstanceStatus::Up;
use crate::origin::Origin;
use crate::test_util::{holding_a1, out_of_service_by_operator, register_all, registry, status_of};

#[test]
fn cancel_removes_the_instance() {
    let mut registry = holding_a1(registry());
    assert!(registry.cancel("a", "a1", Origin::Client, 10));
    assert!(registry.instance("a", "a1", 10).is_none());
}

#[test]
fn cancel_of_unknown_instance_is_false() {
    let mut registry = registry();
    assert!(!registry.cancel("a", "a1", Origin::Peer, 0));
}

#[test]
fn cancel_forgets_the_status_override() {
    let mut registry = out_of_service_by_operator();
    registry.cancel("a", "a1", Origin::Client, 20);
    register_all(&mut registry, &[("a", "a1")], 30);
    assert_eq!(status_of(&registry, "a", "a1"), Some(Up));
}
