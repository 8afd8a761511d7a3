//! The format-independent half of reading an instance: field names, Java's defaults and the
//! lenient value conversions shared by the JSON and XML readers.
//!
//! Both readers walk their own syntax tree and feed leaf values in here as [`Scalar`]s, so a rule
//! such as "numbers may arrive as strings" or "≤ 0 durations mean the default" is written once.
//! The defaults are those of Eureka's `InstanceInfo.Builder` and the legacy
//! `EurekaJacksonCodec.InstanceInfoDeserializer`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use heureka_core::{
    ActionType, DataCenterClass, DataCenterInfo, Instance, InstanceStatus, LeaseInfo, Millis, Port,
};

use crate::error::DecodeError;

/// `@class` of the non-Amazon data centre, as every server writes it.
pub(crate) const DEFAULT_DC_CLASS: &str = "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo";
/// `@class` some clients (fargo) send for the same thing.
pub(crate) const MY_DC_CLASS: &str = "com.netflix.appinfo.MyDataCenterInfo";
pub(crate) const AMAZON_DC_CLASS: &str = "com.netflix.appinfo.AmazonInfo";
/// How XStream and Jackson mark `Collections.emptyMap()`; written for an empty metadata map.
pub(crate) const EMPTY_MAP_CLASS: &str = "java.util.Collections$EmptyMap";

/// `text` upper-cased as Java's `toUpperCase` does; an ASCII name (nearly every one) by the
/// byte, which is what the general mapping gives it, at a fraction of the cost.
pub(crate) fn upper_case(text: &str) -> String {
    if text.is_ascii() {
        text.to_ascii_uppercase()
    } else {
        text.to_uppercase()
    }
}

/// A leaf value as a reader found it: JSON gives typed values, XML only text.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Scalar<'a> {
    Text(&'a str),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl<'a> Scalar<'a> {
    /// The value as text, the way Jackson's `getText()` renders a scalar token.
    pub(crate) fn text(self) -> Cow<'a, str> {
        match self {
            Scalar::Text(s) => Cow::Borrowed(s),
            Scalar::Int(n) => Cow::Owned(n.to_string()),
            Scalar::Float(x) => Cow::Owned(x.to_string()),
            Scalar::Bool(b) => Cow::Borrowed(if b { "true" } else { "false" }),
        }
    }

    /// An integer from a number or a numeric string ("as int/long" in the Java readers).
    /// Empty text counts as absent (`None`): XML clients send empty elements for unset values.
    pub(crate) fn int(self, field: &dyn Fn() -> String) -> Result<Option<i64>, DecodeError> {
        match self {
            Scalar::Int(n) => Ok(Some(n)),
            Scalar::Float(x) if x.fract() == 0.0 && x.abs() < 9.0e18 => Ok(Some(x as i64)),
            Scalar::Text(s) if s.trim().is_empty() => Ok(None),
            Scalar::Text(s) => s
                .trim()
                .parse::<i64>()
                .map(Some)
                .map_err(|_| DecodeError::field(field(), "is not a number")),
            Scalar::Float(_) | Scalar::Bool(_) => {
                Err(DecodeError::field(field(), "is not a number"))
            }
        }
    }

    /// A flag from `true`/`false`, their strings, or a number (non-zero is true), as the legacy
    /// reader accepts. Other text is false, like Java's `Boolean.parseBoolean`; empty is absent.
    pub(crate) fn boolean(self) -> Option<bool> {
        match self {
            Scalar::Bool(b) => Some(b),
            Scalar::Int(n) => Some(n != 0),
            Scalar::Float(x) => Some(x != 0.0),
            Scalar::Text(s) if s.trim().is_empty() => None,
            Scalar::Text(s) => Some(s.trim().eq_ignore_ascii_case("true")),
        }
    }
}

fn ranged<T: TryFrom<i64>>(value: i64, field: &dyn Fn() -> String) -> Result<T, DecodeError> {
    T::try_from(value).map_err(|_| DecodeError::field(field(), "is out of range"))
}

/// Collects the fields of one instance and applies Java's defaults for the ones never seen.
pub(crate) struct InstanceBuilder {
    instance: Instance,
}

impl InstanceBuilder {
    /// An instance with every default of `InstanceInfo.Builder`. `hostName`, `app` and `ipAddr`
    /// start empty and `dataCenterInfo` absent: the server validates those, not the reader.
    pub(crate) fn new(now: Millis) -> InstanceBuilder {
        let mut instance = Instance::new("", "", "", "", now);
        instance.data_center_info = None;
        InstanceBuilder { instance }
    }

    /// One top-level scalar field. Unknown names are ignored, as the Java readers ignore unknown
    /// scalar fields.
    pub(crate) fn scalar(&mut self, key: &str, value: Scalar<'_>) -> Result<(), DecodeError> {
        let i = &mut self.instance;
        let name = || key.to_owned();
        match key {
            "instanceId" => i.instance_id = Some(value.text().into_owned()),
            "hostName" => i.host_name = value.text().into_owned(),
            "app" => i.app = upper_case(&value.text()),
            "ipAddr" => i.ip_addr = value.text().into_owned(),
            "sid" => i.sid = value.text().into_owned(),
            "status" => i.status = InstanceStatus::from_name_lenient(&value.text()),
            // The legacy reader accepts both spellings (XStream writes the lower-case one); the
            // last one in the body wins.
            "overriddenStatus" | "overriddenstatus" => {
                i.overridden_status = InstanceStatus::from_name_lenient(&value.text())
            }
            "countryId" => {
                if let Some(n) = value.int(&name)? {
                    i.country_id = ranged(n, &name)?;
                }
            }
            "appGroupName" => i.app_group_name = Some(upper_case(&value.text())),
            "homePageUrl" => i.home_page_url = Some(value.text().into_owned()),
            "statusPageUrl" => i.status_page_url = Some(value.text().into_owned()),
            "healthCheckUrl" => i.health_check_url = Some(value.text().into_owned()),
            "secureHealthCheckUrl" => i.secure_health_check_url = Some(value.text().into_owned()),
            "vipAddress" => i.vip_address = Some(value.text().into_owned()),
            "secureVipAddress" => i.secure_vip_address = Some(value.text().into_owned()),
            "isCoordinatingDiscoveryServer" => {
                if let Some(b) = value.boolean() {
                    i.is_coordinating_discovery_server = b;
                }
            }
            "lastUpdatedTimestamp" => {
                if let Some(n) = value.int(&name)? {
                    i.last_updated_timestamp = n;
                }
            }
            "lastDirtyTimestamp" => {
                if let Some(n) = value.int(&name)? {
                    i.last_dirty_timestamp = n;
                }
            }
            // An unknown action type is treated as absent, as the legacy reader does.
            "actionType" => i.action_type = ActionType::from_name(value.text().trim()),
            "asgName" => i.asg_name = Some(value.text().into_owned()),
            // Leniency beyond Java: a bare `"port": 8080` (a hand-written JS config) is the number.
            "port" | "securePort" => self.port_number(key, value)?,
            _ => {}
        }
        Ok(())
    }

    /// `port.$` or `securePort.$`.
    pub(crate) fn port_number(&mut self, key: &str, value: Scalar<'_>) -> Result<(), DecodeError> {
        let name = || format!("{key}.$");
        if let Some(n) = value.int(&name)? {
            self.port_mut(key).number = ranged(n, &name)?;
        }
        Ok(())
    }

    /// `port.@enabled` or `securePort.@enabled`; `None` keeps the default for that port.
    pub(crate) fn port_enabled(&mut self, key: &str, enabled: Option<bool>) {
        if let Some(enabled) = enabled {
            self.port_mut(key).enabled = enabled;
        }
    }

    fn port_mut(&mut self, key: &str) -> &mut Port {
        if key == "securePort" {
            &mut self.instance.secure_port
        } else {
            &mut self.instance.port
        }
    }

    /// One field of `leaseInfo`. The four timestamps are read but meaningless on input: the
    /// registry overwrites them.
    pub(crate) fn lease(&mut self, key: &str, value: Scalar<'_>) -> Result<(), DecodeError> {
        let name = || format!("leaseInfo.{key}");
        const KNOWN: [&str; 7] = [
            "renewalIntervalInSecs",
            "durationInSecs",
            "registrationTimestamp",
            "lastRenewalTimestamp",
            "renewalTimestamp",
            "evictionTimestamp",
            "serviceUpTimestamp",
        ];
        if !KNOWN.contains(&key) {
            return Ok(());
        }
        let lease = &mut self.instance.lease_info;
        let Some(n) = value.int(&name)? else {
            return Ok(());
        };
        match key {
            // The legacy reader (`EurekaJacksonCodec.LeaseInfoDeserializer`) replaces a duration
            // ≤ 0 by the default; a client cannot register an instance that expires at once.
            "renewalIntervalInSecs" => {
                lease.renewal_interval_in_secs = if n <= 0 {
                    LeaseInfo::DEFAULT_RENEWAL_INTERVAL_SECS
                } else {
                    ranged(n, &name)?
                }
            }
            "durationInSecs" => {
                lease.duration_in_secs = if n <= 0 {
                    LeaseInfo::DEFAULT_DURATION_SECS
                } else {
                    ranged(n, &name)?
                }
            }
            "registrationTimestamp" => lease.registration_timestamp = n,
            // `renewalTimestamp` is the bean readers' legacy alias.
            "lastRenewalTimestamp" | "renewalTimestamp" => lease.last_renewal_timestamp = n,
            "evictionTimestamp" => lease.eviction_timestamp = n,
            "serviceUpTimestamp" => lease.service_up_timestamp = n,
            _ => {}
        }
        Ok(())
    }

    pub(crate) fn metadata_mut(&mut self) -> &mut BTreeMap<String, String> {
        &mut self.instance.metadata
    }

    pub(crate) fn set_data_center(&mut self, dc: DataCenterInfo) {
        self.instance.data_center_info = Some(dc);
    }

    pub(crate) fn finish(self) -> Instance {
        self.instance
    }
}

/// Adds one metadata entry read as text, skipping the `@class` type marker Jackson writes for an
/// empty map (`{"@class":"java.util.Collections$EmptyMap"}` means "no entries").
pub(crate) fn put_metadata(map: &mut BTreeMap<String, String>, key: &str, value: Scalar<'_>) {
    if key != "@class" {
        map.insert(key.to_owned(), value.text().into_owned());
    }
}

/// Builds a `dataCenterInfo` from its class marker (`@class` or `class`, possibly absent), its
/// `name` and, for Amazon, its metadata.
///
/// A missing or unknown class is inferred from the name (fargo's XML sends none). The name must
/// be one of the three values of Java's `DataCenterInfo.Name` enum: we would echo any other to
/// every client, and Spring's strict reader would then fail the whole registry fetch.
pub(crate) fn data_center(
    class: Option<&str>,
    name: Option<String>,
    metadata: BTreeMap<String, String>,
) -> Result<DataCenterInfo, DecodeError> {
    let name = name.map(|n| n.trim().to_owned()).unwrap_or_default();
    if !matches!(name.as_str(), "" | "Netflix" | "Amazon" | "MyOwn") {
        return Err(DecodeError::field(
            "dataCenterInfo.name",
            "is not one of Netflix, Amazon, MyOwn",
        ));
    }
    let class = match class.map(str::trim) {
        Some(AMAZON_DC_CLASS) => DataCenterClass::Amazon,
        Some(DEFAULT_DC_CLASS | MY_DC_CLASS) => DataCenterClass::Default,
        _ if name == "Amazon" => DataCenterClass::Amazon,
        _ => DataCenterClass::Default,
    };
    let metadata = if class == DataCenterClass::Amazon {
        metadata
    } else {
        BTreeMap::new()
    };
    Ok(DataCenterInfo {
        class,
        name,
        metadata,
    })
}

/// The top-level instance fields that hold a single value. A known name holding an object or an
/// array is an error; an unknown name holding one is skipped.
pub(crate) fn is_scalar_field(key: &str) -> bool {
    matches!(
        key,
        "instanceId"
            | "hostName"
            | "app"
            | "ipAddr"
            | "sid"
            | "status"
            | "overriddenStatus"
            | "overriddenstatus"
            | "countryId"
            | "appGroupName"
            | "homePageUrl"
            | "statusPageUrl"
            | "healthCheckUrl"
            | "secureHealthCheckUrl"
            | "vipAddress"
            | "secureVipAddress"
            | "isCoordinatingDiscoveryServer"
            | "lastUpdatedTimestamp"
            | "lastDirtyTimestamp"
            | "actionType"
            | "asgName"
    )
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::upper_case;

    proptest! {
        #[test]
        fn upper_case_is_the_general_mapping(text in "(?s).{0,24}|[a-zA-Z0-9_.-]{0,24}") {
            prop_assert_eq!(upper_case(&text), text.to_uppercase());
        }
    }
}
