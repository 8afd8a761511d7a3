//! Eureka's registration checks: each failure named by Eureka's message, in Eureka's order.

use super::*;
use crate::limits::Limits;

fn valid() -> Instance {
    Instance::new("ORDERS", "10.0.0.5:orders:8080", "10.0.0.5", "10.0.0.5", 0)
}

fn reason(mut instance: Instance, path_app: &str) -> String {
    match validate_registration(&mut instance, path_app, &Limits::default()) {
        Err(invalid) => invalid.to_string(),
        Ok(_) => panic!("expected a refusal"),
    }
}

/// Why a valid instance, bar what `strip` takes from it, is refused under its own app name.
fn reason_without(strip: impl FnOnce(&mut Instance)) -> String {
    let mut instance = valid();
    strip(&mut instance);
    reason(instance, "ORDERS")
}

#[test]
fn valid_registration_passes() {
    assert!(validate_registration(&mut valid(), "orders", &Limits::default()).is_ok());
}

#[test]
fn missing_hostname_is_named() {
    assert_eq!(reason_without(|i| i.host_name.clear()), "Missing hostname");
}

#[test]
fn missing_id_is_checked_first() {
    let without_id_and_hostname = |i: &mut Instance| {
        i.instance_id = None;
        i.host_name.clear();
    };
    assert_eq!(
        reason_without(without_id_and_hostname),
        "Missing instanceId"
    );
}

#[test]
fn missing_ip_address_is_named() {
    assert_eq!(reason_without(|i| i.ip_addr.clear()), "Missing ip address");
}

#[test]
fn app_name_differing_from_path_is_refused() {
    assert_eq!(
        reason(valid(), "PAYMENTS"),
        "Mismatched appName, expecting PAYMENTS but was ORDERS"
    );
}

#[test]
fn app_name_matches_the_path_in_any_case() {
    let mut instance = valid();
    instance.app = "Orders".to_owned();
    assert!(validate_registration(&mut instance, "oRDERS", &Limits::default()).is_ok());
}

#[test]
fn app_names_are_compared_upper_cased() {
    let mut instance = valid();
    // "ß" upper-cases to "SS", so "STRASSE" and "straße" are the same name upper-cased.
    instance.app = "STRASSE".to_owned();
    assert!(validate_registration(&mut instance, "straße", &Limits::default()).is_ok());
    assert_eq!(
        reason(instance, "strase"),
        "Mismatched appName, expecting STRASE but was STRASSE"
    );
}

#[test]
fn a_dotless_i_in_the_body_matches_an_ascii_path() {
    let mut instance = valid();
    instance.app = "bıllıng".to_owned(); // upper-cases to BILLING
    assert!(validate_registration(&mut instance, "billing", &Limits::default()).is_ok());
}

proptest::proptest! {
    #[test]
    fn app_names_match_exactly_when_their_upper_cased_strings_are_equal(
        body in "[a-zA-Z0-9ıſßİ_.-]{0,8}",
        path in "[a-zA-Z0-9ıſßİ_.-]{0,8}",
    ) {
        proptest::prop_assert_eq!(
            same_app_name(&body, &path),
            body.to_uppercase() == path.to_uppercase()
        );
        proptest::prop_assert!(same_app_name(&body, &body.to_lowercase()) ==
            (body.to_uppercase() == body.to_lowercase().to_uppercase()));
    }
}

#[test]
fn missing_data_center_is_named() {
    assert_eq!(
        reason_without(|i| i.data_center_info = None),
        "Missing dataCenterInfo"
    );
}

#[test]
fn amazon_instance_without_instance_id_gets_its_id() {
    let mut instance = valid();
    if let Some(dc) = instance.data_center_info.as_mut() {
        dc.class = DataCenterClass::Amazon;
        dc.name = "Amazon".to_owned();
    }
    validate_registration(&mut instance, "ORDERS", &Limits::default()).unwrap();
    let dc = instance.data_center_info.unwrap();
    assert_eq!(
        dc.metadata.get("instance-id").map(String::as_str),
        Some("10.0.0.5:orders:8080")
    );
}
