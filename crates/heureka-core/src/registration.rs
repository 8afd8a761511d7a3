//! What a register body must contain before the registry sees it (spec §3.8): Eureka's
//! `ApplicationResource.addInstance` checks, in its order, with its messages.
//!
//! The order matters because only the first failure is reported, and the messages are kept
//! word for word, so scripts that grep for "Missing hostname" keep working. The server answers
//! a failure with 400 and the message as the body; a peer's invalid registration is ignored.
//!
//! Heureka's limits (`limits.rs`) are checked after Eureka's checks, so Eureka's messages come
//! first for bodies Eureka refuses too; their refusals are variants of the same type
//! (`invalid_registration.rs`).

use crate::invalid_registration::InvalidRegistration;
use crate::limits::{ClampedLease, Limits};
use crate::model::{DataCenterClass, Instance};

/// Validates `instance` as a registration under `path_app` within `limits`, fills in an
/// AmazonInfo's missing `instance-id` the way Eureka does, and shortens a lease over the limit,
/// saying so for the caller's warning.
pub fn validate_registration(
    instance: &mut Instance,
    path_app: &str,
    limits: &Limits,
) -> Result<Option<ClampedLease>, InvalidRegistration> {
    if instance.id().is_empty() {
        return Err(InvalidRegistration::MissingInstanceId);
    }
    if instance.host_name.is_empty() {
        return Err(InvalidRegistration::MissingHostname);
    }
    if instance.ip_addr.is_empty() {
        return Err(InvalidRegistration::MissingIpAddress);
    }
    if instance.app.is_empty() {
        return Err(InvalidRegistration::MissingAppName);
    }
    if !same_app_name(&instance.app, path_app) {
        return Err(InvalidRegistration::MismatchedAppName {
            expected: path_app.to_uppercase(),
            actual: instance.app.clone(),
        });
    }
    let Some(data_center) = instance.data_center_info.as_ref() else {
        return Err(InvalidRegistration::MissingDataCenterInfo);
    };
    if data_center.name.is_empty() {
        return Err(InvalidRegistration::MissingDataCenterName);
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
    limits.check_instance(instance)?;
    Ok(limits.lease_terms(&mut instance.lease_info))
}

/// Whether the two names are the same once upper-cased, as Eureka compares them.
///
/// Compared char by char, which is what comparing the two upper-cased strings amounts to
/// (upper-casing maps each character on its own), without building them on every register.
/// ASCII names, nearly all of them, take a byte comparison: an ASCII letter's upper case is
/// ASCII, and a non-ASCII character whose upper case is ASCII (`ı`, `ſ`) makes a name non-ASCII.
fn same_app_name(body_app: &str, path_app: &str) -> bool {
    if body_app.is_ascii() && path_app.is_ascii() {
        return body_app.eq_ignore_ascii_case(path_app);
    }
    upper(body_app).eq(upper(path_app))
}

fn upper(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars().flat_map(char::to_uppercase)
}

#[cfg(test)]
mod tests;
