//! The users as configured: passwords plain or bcrypt (a verified one remembered), names
//! matched ignoring case, certificates standing for users.

use super::*;
use crate::config::{Config, UserConfig};
use crate::security::basic::basic_auth_header;
use crate::security::roles::Role;
use crate::state::security::users;

/// The users of the default configuration with `user` added: `user` alone.
fn users_with(user: UserConfig) -> Users {
    let mut config = Config::default();
    config.heureka.users.push(user);
    users(&config).expect("a user turns authentication on")
}

fn reader(password: Option<String>, certificate: Option<&str>) -> UserConfig {
    UserConfig {
        name: "Reader".into(),
        password,
        certificate: certificate.map(str::to_owned),
        roles: vec![Role::Read],
        apps: Vec::new(),
        namespaces: Vec::new(),
    }
}

fn credentials(user: &str, password: &str) -> Credentials {
    Credentials::from_header(basic_auth_header(user, password).as_bytes()).unwrap()
}

#[test]
fn no_user_configured_is_no_authentication() {
    assert!(users(&Config::default()).is_none());
}

#[tokio::test]
async fn a_verified_bcrypt_password_is_remembered_and_a_wrong_one_is_not() {
    let hash = bcrypt::hash("pw", 4).unwrap();
    let users = users_with(reader(Some(format!("{{bcrypt}}{hash}")), None));
    assert!(users
        .by_password(&credentials("reader", "guess"))
        .await
        .is_none());
    assert!(users.verified.lock().is_empty());
    assert!(users
        .by_password(&credentials("reader", "pw"))
        .await
        .is_some());
    assert_eq!(users.verified.lock().len(), 1);
}

#[tokio::test]
async fn the_name_is_matched_ignoring_case_and_the_password_exactly() {
    let users = users_with(reader(Some("pw".into()), None));
    assert!(users
        .by_password(&credentials("READER", "pw"))
        .await
        .is_some());
    assert!(users
        .by_password(&credentials("reader", "PW"))
        .await
        .is_none());
}

#[tokio::test]
async fn a_user_without_a_password_cannot_present_one() {
    let users = users_with(reader(None, Some("reader")));
    assert!(users
        .by_password(&credentials("reader", ""))
        .await
        .is_none());
}

#[test]
fn a_certificate_is_the_user_one_of_its_names_is() {
    let users = users_with(reader(None, Some("reader.example.com")));
    let names = vec!["CN-only".to_owned(), "reader.example.com".to_owned()];
    let (name, account) = users.by_certificate(&names).unwrap();
    assert_eq!(
        (name, account.name.as_str()),
        ("reader.example.com", "Reader")
    );
}
