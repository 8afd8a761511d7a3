//! What DNS answers with, taken from the registry's read documents (`Registry::application`
//! and `Registry::applications`, statuses as every reader sees them: health verdicts and
//! overrides applied): an UP instance's address, ports and zone. Nothing here is kept beyond
//! one query but the zone index, which is keyed on the registry's version like the response
//! caches.

use std::collections::HashMap;
use std::net::IpAddr;

use heureka_core::{Application, Instance, InstanceStatus, Registry};

use crate::clock::Instant;

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

/// Which zone each registered address is in, for ordering answers by the asker's zone when the
/// asker is itself a registered instance. Rebuilt from the full read document when the
/// registry's version moved, at most once per [`ZoneIndex::REBUILD_EVERY`]: a full document of
/// a large registry is milliseconds under the lock, and a zone learned a second late only
/// orders one answer differently.
#[derive(Debug, Default)]
pub(crate) struct ZoneIndex {
    version: Option<u64>,
    built_at: Option<Instant>,
    zones: HashMap<IpAddr, String>,
}

impl ZoneIndex {
    pub(crate) const REBUILD_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

    /// The zone of the instance registered at `address`, any status (an asker that is DOWN
    /// still sits in its zone); when several are, the first in the document's order.
    pub(crate) fn zone_of(
        &mut self,
        registry: &Registry,
        address: IpAddr,
        now: Instant,
    ) -> Option<&str> {
        let version = registry.version();
        let due = self
            .built_at
            .is_none_or(|built| now.saturating_duration_since(built) >= Self::REBUILD_EVERY);
        if self.version != Some(version) && due {
            self.zones = zones(&registry.applications().applications);
            self.version = Some(version);
            self.built_at = Some(now);
        }
        self.zones.get(&address).map(String::as_str)
    }
}

fn zones(applications: &[Application]) -> HashMap<IpAddr, String> {
    let mut zones = HashMap::new();
    for instance in applications.iter().flat_map(|app| &app.instances) {
        if let (Ok(address), Some(zone)) = (instance.ip_addr.trim().parse(), zone_of(instance)) {
            zones.entry(address).or_insert_with(|| zone.to_owned());
        }
    }
    zones
}

#[cfg(test)]
mod tests;
