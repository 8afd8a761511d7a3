//! `heureka.security.users[<n>].*`: who may do what, checked whole at start-up.

use super::*;

/// A well-formed bcrypt hash (of what, these tests do not care).
const HASH: &str = "$2a$04$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy";

fn users(args: &[&str]) -> Vec<UserConfig> {
    config(&Dir::new(), args, &[]).heureka.users
}

fn refused(args: &[&str]) -> String {
    error(&Dir::new(), args, &[])
}

#[test]
fn a_user_is_read_with_its_roles_and_apps_upper_cased() {
    let read = users(&[
        "--heureka.security.users[0].name=orders",
        "--heureka.security.users[0].password=pw",
        "--heureka.security.users[0].roles=read, Register",
        "--heureka.security.users[0].apps=orders,billing",
        "--heureka.security.users[0].namespaces=Team-A,team-b",
    ]);
    assert_eq!(
        read,
        [UserConfig {
            name: "orders".into(),
            password: Some("pw".into()),
            certificate: None,
            roles: vec![Role::Read, Role::Register],
            apps: vec!["ORDERS".into(), "BILLING".into()],
            namespaces: vec!["team-a".into(), "team-b".into()],
        }]
    );
}

#[test]
fn a_user_without_a_name_is_an_error_naming_the_key() {
    let message = refused(&[
        "--heureka.security.users[2].password=pw",
        "--heureka.security.users[2].roles=read",
    ]);
    assert!(
        message.contains("heureka.security.users[2].name"),
        "{message}"
    );
}

#[test]
fn a_user_needs_a_password_or_a_certificate() {
    let message = refused(&[
        "--heureka.security.users[0].name=reader",
        "--heureka.security.users[0].roles=read",
    ]);
    assert!(
        message.contains("heureka.security.users[0].password"),
        "{message}"
    );
    assert!(
        message.contains("heureka.security.users[0].certificate"),
        "{message}"
    );
}

#[test]
fn a_certificate_alone_is_enough() {
    let read = users(&[
        "--heureka.security.users[0].name=reader",
        "--heureka.security.users[0].certificate=reader",
        "--heureka.security.users[0].roles=read",
    ]);
    assert_eq!(read[0].certificate.as_deref(), Some("reader"));
}

#[test]
fn a_user_without_roles_is_an_error_naming_the_key() {
    let message = refused(&[
        "--heureka.security.users[0].name=reader",
        "--heureka.security.users[0].password=pw",
    ]);
    assert!(
        message.contains("heureka.security.users[0].roles"),
        "{message}"
    );
}

#[test]
fn an_unknown_role_is_an_error_naming_the_key_and_the_role() {
    let message = refused(&[
        "--heureka.security.users[0].name=reader",
        "--heureka.security.users[0].password=pw",
        "--heureka.security.users[0].roles=read,writer",
    ]);
    assert!(
        message.contains("heureka.security.users[0].roles"),
        "{message}"
    );
    assert!(message.contains("writer"), "{message}");
}

#[test]
fn a_bcrypt_password_needs_a_well_formed_hash() {
    let message = refused(&[
        "--heureka.security.users[0].name=reader",
        "--heureka.security.users[0].password={bcrypt}pw",
        "--heureka.security.users[0].roles=read",
    ]);
    assert!(
        message.contains("heureka.security.users[0].password"),
        "{message}"
    );
}

#[test]
fn a_well_formed_bcrypt_password_is_kept_as_written() {
    let password = format!("--heureka.security.users[0].password={{bcrypt}}{HASH}");
    let read = users(&[
        "--heureka.security.users[0].name=reader",
        &password,
        "--heureka.security.users[0].roles=read",
    ]);
    assert_eq!(read[0].password, Some(format!("{{bcrypt}}{HASH}")));
}

#[test]
fn an_encoding_heureka_lacks_is_an_error_naming_the_key() {
    let message = refused(&[
        "--spring.security.user.name=admin",
        "--spring.security.user.password={sha256}ab",
    ]);
    assert!(
        message.contains("spring.security.user.password"),
        "{message}"
    );
}

#[test]
fn two_users_of_one_name_ignoring_case_is_an_error_naming_both_keys() {
    let message = refused(&[
        "--heureka.security.users[0].name=reader",
        "--heureka.security.users[0].password=pw",
        "--heureka.security.users[0].roles=read",
        "--heureka.security.users[1].name=Reader",
        "--heureka.security.users[1].password=other",
        "--heureka.security.users[1].roles=admin",
    ]);
    assert!(
        message.contains("heureka.security.users[0].name"),
        "{message}"
    );
    assert!(
        message.contains("heureka.security.users[1].name"),
        "{message}"
    );
}

#[test]
fn a_user_named_as_the_spring_user_is_an_error() {
    let message = refused(&[
        "--spring.security.user.name=admin",
        "--spring.security.user.password=pw",
        "--heureka.security.users[0].name=admin",
        "--heureka.security.users[0].password=pw",
        "--heureka.security.users[0].roles=read",
    ]);
    assert!(message.contains("spring.security.user.name"), "{message}");
}

#[test]
fn two_users_of_one_certificate_is_an_error() {
    let message = refused(&[
        "--heureka.security.users[0].name=a",
        "--heureka.security.users[0].certificate=reader",
        "--heureka.security.users[0].roles=read",
        "--heureka.security.users[1].name=b",
        "--heureka.security.users[1].certificate=reader",
        "--heureka.security.users[1].roles=admin",
    ]);
    assert!(
        message.contains("heureka.security.users[1].certificate"),
        "{message}"
    );
}

#[test]
fn the_password_is_not_in_the_debug_form() {
    let read = users(&[
        "--heureka.security.users[0].name=reader",
        "--heureka.security.users[0].password=s3cret-pw",
        "--heureka.security.users[0].roles=read",
    ]);
    assert!(!format!("{read:?}").contains("s3cret-pw"));
}

#[test]
fn a_peer_user_with_the_spring_users_credentials_is_that_user() {
    let config = config(
        &Dir::new(),
        &[
            "--spring.security.user.name=eureka",
            "--spring.security.user.password=pw",
            "--heureka.replication.peer-user.name=eureka",
            "--heureka.replication.peer-user.password=pw",
        ],
        &[],
    );
    assert_eq!(config.heureka.replication.peer_user, config.security);
}

#[test]
fn a_peer_user_named_as_the_spring_user_with_another_password_is_an_error() {
    let message = refused(&[
        "--spring.security.user.name=eureka",
        "--spring.security.user.password=pw",
        "--heureka.replication.peer-user.name=eureka",
        "--heureka.replication.peer-user.password=other",
    ]);
    assert!(
        message.contains("heureka.replication.peer-user.name"),
        "{message}"
    );
}
