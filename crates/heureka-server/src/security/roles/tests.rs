//! The roles matrix as rules: which role each kind of request needs, and what each role covers.

use super::*;

fn grant(roles: &[Role], apps: Option<&[&str]>) -> Grant {
    Grant {
        roles: Roles::of(roles),
        apps: apps.map(|apps| apps.iter().map(|app| app.to_uppercase()).collect()),
        namespaces: None,
    }
}

fn needs(method: Method, route: &str) -> Role {
    required_role(&method, route, false)
}

#[test]
fn fetching_needs_read() {
    for route in [
        "/apps",
        "/apps/delta",
        "/apps/{app}",
        "/apps/{app}/{id}",
        "/vips/{vip}",
    ] {
        assert_eq!(needs(Method::GET, route), Role::Read, "{route}");
    }
}

#[test]
fn register_renew_cancel_and_metadata_need_register() {
    assert_eq!(needs(Method::POST, "/apps/{app}"), Role::Register);
    assert_eq!(needs(Method::PUT, "/apps/{app}/{id}"), Role::Register);
    assert_eq!(needs(Method::DELETE, "/apps/{app}/{id}"), Role::Register);
    assert_eq!(
        needs(Method::PUT, "/apps/{app}/{id}/metadata"),
        Role::Register
    );
}

#[test]
fn overrides_and_asg_status_need_admin() {
    assert_eq!(needs(Method::PUT, "/apps/{app}/{id}/status"), Role::Admin);
    assert_eq!(
        needs(Method::DELETE, "/apps/{app}/{id}/status"),
        Role::Admin
    );
    assert_eq!(needs(Method::PUT, "/asg/{asg}/status"), Role::Admin);
}

#[test]
fn the_replication_endpoints_need_peer_even_to_read_the_digest() {
    assert_eq!(needs(Method::POST, "/peerreplication/batch"), Role::Peer);
    assert_eq!(needs(Method::GET, "/peerreplication/digest"), Role::Peer);
}

#[test]
fn a_write_carrying_the_replication_header_needs_peer() {
    assert_eq!(
        required_role(&Method::PUT, "/apps/{app}/{id}", true),
        Role::Peer
    );
}

#[test]
fn a_read_carrying_the_replication_header_is_still_a_read() {
    assert_eq!(required_role(&Method::GET, "/apps", true), Role::Read);
}

#[test]
fn pages_outside_the_api_are_reads() {
    assert_eq!(needs(Method::GET, "/actuator/prometheus"), Role::Read);
}

#[test]
fn a_write_to_a_route_without_a_row_needs_admin() {
    assert_eq!(needs(Method::POST, "/something/new"), Role::Admin);
}

#[test]
fn register_covers_read_and_admin_covers_register() {
    assert_eq!(
        allows(&grant(&[Role::Register], None), Role::Read, None),
        Ok(())
    );
    assert_eq!(
        allows(&grant(&[Role::Admin], None), Role::Register, Some("A")),
        Ok(())
    );
}

#[test]
fn peer_covers_read_but_not_client_writes() {
    let peer = grant(&[Role::Peer], None);
    assert_eq!(allows(&peer, Role::Read, None), Ok(()));
    assert_eq!(
        allows(&peer, Role::Register, Some("A")),
        Err(Refusal::Needs(Role::Register))
    );
}

#[test]
fn admin_does_not_cover_replication() {
    assert_eq!(
        allows(&grant(&[Role::Admin], None), Role::Peer, None),
        Err(Refusal::Needs(Role::Peer))
    );
}

#[test]
fn read_does_not_cover_register() {
    assert_eq!(
        allows(&grant(&[Role::Read], None), Role::Register, Some("A")),
        Err(Refusal::Needs(Role::Register))
    );
}

#[test]
fn register_limited_to_apps_covers_those_apps_in_any_case() {
    let orders = grant(&[Role::Register], Some(&["orders"]));
    assert_eq!(allows(&orders, Role::Register, Some("Orders")), Ok(()));
    assert_eq!(
        allows(&orders, Role::Register, Some("PAYMENTS")),
        Err(Refusal::AppNotListed)
    );
}

#[test]
fn the_apps_limit_register_only_not_reads() {
    let orders = grant(&[Role::Register], Some(&["orders"]));
    assert_eq!(allows(&orders, Role::Read, Some("PAYMENTS")), Ok(()));
}

#[test]
fn admin_is_not_limited_by_apps() {
    let admin = grant(&[Role::Admin], Some(&["orders"]));
    assert_eq!(allows(&admin, Role::Register, Some("PAYMENTS")), Ok(()));
}

#[test]
fn role_names_are_read_in_any_case() {
    assert_eq!(Role::from_name(" Admin"), Some(Role::Admin));
    assert_eq!(Role::from_name("writer"), None);
}

#[test]
fn roles_display_as_configured() {
    assert_eq!(
        Roles::of(&[Role::Peer, Role::Read]).to_string(),
        "read,peer"
    );
}
