//! What DNS answers with, taken from one application's read document
//! (`Registry::application`, statuses as every reader sees them: health verdicts and overrides
//! applied): an UP instance's address, ports and zone, and where every instance's zone is.

use std::net::IpAddr;

use heureka_core::{Application, Instance, InstanceStatus};

/// One UP instance as DNS serves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Endpoint {
    pub(crate) address: IpAddr,
    /// The instance's port, when enabled.
    pub(crate) port: Option<u16>,
    /// Its secure port, when enabled.
    pub(crate) secure_port: Option<u16>,
    pub(crate) zone: Option<String>,
}

/// The UP instances of `application` whose `ipAddr` is an IP address, in the document's order
/// (by instance id). DOWN, STARTING, OUT_OF_SERVICE and UNKNOWN instances are never answered.
pub(crate) fn up_endpoints(application: &Application) -> Vec<Endpoint> {
    application
        .instances
        .iter()
        .filter(|instance| instance.status == InstanceStatus::Up)
        .filter_map(|instance| {
            Some(Endpoint {
                address: instance.ip_addr.trim().parse().ok()?,
                port: enabled_port(instance.port.enabled, instance.port.number),
                secure_port: enabled_port(
                    instance.secure_port.enabled,
                    instance.secure_port.number,
                ),
                zone: zone_of(instance).map(str::to_owned),
            })
        })
        .collect()
}

fn enabled_port(enabled: bool, number: u32) -> Option<u16> {
    enabled.then(|| u16::try_from(number).ok()).flatten()
}

/// An instance's zone as Eureka's zone-aware clients read it: metadata `zone` (Spring Cloud's
/// `eureka.instance.metadata-map.zone`), else an AWS data centre's `availability-zone`.
pub(crate) fn zone_of(instance: &Instance) -> Option<&str> {
    instance
        .metadata
        .get("zone")
        .or_else(|| {
            instance
                .data_center_info
                .as_ref()
                .and_then(|info| info.metadata.get("availability-zone"))
        })
        .map(String::as_str)
        .filter(|zone| !zone.is_empty())
}

/// The zone of each instance of `application` whose zone is known, whatever its status (an
/// asker that is DOWN still sits in its zone), by address.
pub(crate) fn zones(application: &Application) -> Vec<(IpAddr, String)> {
    application
        .instances
        .iter()
        .filter_map(|instance| {
            let address = instance.ip_addr.trim().parse().ok()?;
            Some((address, zone_of(instance)?.to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests;
