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
    let expected = path_app.to_uppercase();
    if instance.app.to_uppercase() != expected {
        return reject(format!(
            "Mismatched appName, expecting {expected} but was {}",
            instance.app
        ));
    }
    let id = instance.id().to_owned();
    let Some(data_center) = instance.data_center_info.as_mut() else {
        return reject("Missing dataCenterInfo".to_owned());
    };
    if data_center.name.is_empty() {
        return reject("Missing dataCenterInfo Name".to_owned());
    }
    if data_center.class == DataCenterClass::Amazon
        && data_center
            .metadata
            .get("instance-id")
            .is_none_or(|value| value.trim().is_empty())
    {
        data_center.metadata.insert("instance-id".to_owned(), id);
    }
    Ok(())
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
