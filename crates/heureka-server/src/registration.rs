//! What a register body must contain before the registry sees it (spec §3.8).
//!
//! The checks run in Eureka's order and fail with Eureka's own messages, so scripts that
//! grep for "Missing hostname" keep working.

use heureka_core::{DataCenterClass, Instance};

use crate::http::error::ApiError;

/// Validates `instance` as a registration under `path_app`, and fills in an AmazonInfo's
/// missing `instance-id` the way Eureka does.
pub(crate) fn validate(instance: &mut Instance, path_app: &str) -> Result<(), ApiError> {
    let reject = |reason: String| Err(ApiError::BadRequest(reason));
    if instance.id().is_empty() {
        return reject("Missing instanceId".to_owned());
    }
    if instance.host_name.is_empty() {
        return reject("Missing hostname".to_owned());
    }
    if instance.ip_addr.is_empty() {
        return reject("Missing ip address".to_owned());
    }
    if instance.app.is_empty() {
        return reject("Missing appName".to_owned());
    }
    // Compared char by char, which is what comparing the two upper-cased strings amounts to
    // (upper-casing maps each character on its own), without building them on every register.
    if !upper(&instance.app).eq(upper(path_app)) {
        return reject(format!(
            "Mismatched appName, expecting {} but was {}",
            path_app.to_uppercase(),
            instance.app
        ));
    }
    let Some(data_center) = instance.data_center_info.as_ref() else {
        return reject("Missing dataCenterInfo".to_owned());
    };
    if data_center.name.is_empty() {
        return reject("Missing dataCenterInfo Name".to_owned());
    }
    let missing_amazon_id = data_center.class == DataCenterClass::Amazon
        && data_center
            .metadata
            .get("instance-id")
            .is_none_or(|value| value.trim().is_empty());
    if missing_amazon_id {
        let id = instance.id().to_owned();
        if let Some(data_center) = instance.data_center_info.as_mut() {
            data_center.metadata.insert("instance-id".to_owned(), id);
        }
    }
    Ok(())
}

fn upper(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars().flat_map(char::to_uppercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> Instance {
        Instance::new("ORDERS", "10.0.0.5:orders:8080", "10.0.0.5", "10.0.0.5", 0)
    }

    fn reason(mut instance: Instance, path_app: &str) -> String {
        match validate(&mut instance, path_app) {
            Err(ApiError::BadRequest(reason)) => reason,
            other => panic!("expected a 400, got {other:?}"),
        }
    }

    #[test]
    fn valid_registration_passes() {
        assert!(validate(&mut valid(), "orders").is_ok());
    }

    #[test]
    fn missing_hostname_is_named() {
        let mut instance = valid();
        instance.host_name.clear();
        assert_eq!(reason(instance, "ORDERS"), "Missing hostname");
    }

    #[test]
    fn missing_id_is_checked_first() {
        let mut instance = valid();
        instance.instance_id = None;
        instance.host_name.clear();
        assert_eq!(reason(instance, "ORDERS"), "Missing instanceId");
    }

    #[test]
    fn missing_ip_address_is_named() {
        let mut instance = valid();
        instance.ip_addr.clear();
        assert_eq!(reason(instance, "ORDERS"), "Missing ip address");
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
        assert!(validate(&mut instance, "oRDERS").is_ok());
    }

    #[test]
    fn app_names_are_compared_upper_cased() {
        let mut instance = valid();
        // "ß" upper-cases to "SS", so "STRASSE" and "straße" are the same name upper-cased.
        instance.app = "STRASSE".to_owned();
        assert!(validate(&mut instance, "straße").is_ok());
        assert_eq!(
            reason(instance, "strase"),
            "Mismatched appName, expecting STRASE but was STRASSE"
        );
    }

    #[test]
    fn missing_data_center_is_named() {
        let mut instance = valid();
        instance.data_center_info = None;
        assert_eq!(reason(instance, "ORDERS"), "Missing dataCenterInfo");
    }

    #[test]
    fn amazon_instance_without_instance_id_gets_its_id() {
        let mut instance = valid();
        if let Some(dc) = instance.data_center_info.as_mut() {
            dc.class = DataCenterClass::Amazon;
            dc.name = "Amazon".to_owned();
        }
        validate(&mut instance, "ORDERS").unwrap();
        let dc = instance.data_center_info.unwrap();
        assert_eq!(
            dc.metadata.get("instance-id").map(String::as_str),
            Some("10.0.0.5:orders:8080")
        );
    }
}
