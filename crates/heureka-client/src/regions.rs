//! Remote regions on the client side: the `?regions=` a fetch carries
//! (`eureka.client.fetch-remote-regions-registry`), which region an instance is in, worked out
//! from its zone as Eureka's `InstanceRegionChecker` and `PropertyBasedAzToRegionMapper` do,
//! and the preference that keeps callers in their own region while it has an `UP` instance.
//!
//! A zone is mapped to a remote region when that region's
//! `eureka.client.availability-zones.<region>` lists it, or when it is the region's name and
//! one letter (`us-west-2a`), the AWS naming Java's built-in defaults follow. Any other zone,
//! and an instance without a zone, is in the local region, as in Java (only remote regions are
//! mapped there: an unmapped zone means local).

use std::borrow::Borrow;
use std::collections::HashMap;

use heureka_core::Instance;

use crate::config::ClientConfig;

#[cfg(test)]
mod tests;

/// The metadata key holding an instance's zone, as Spring Cloud writes and reads it.
pub const ZONE_KEY: &str = "zone";

/// The AmazonInfo metadata key holding an AWS instance's zone.
pub const AVAILABILITY_ZONE_KEY: &str = "availability-zone";

/// The data-centre name of instances that carry AmazonInfo metadata.
const AMAZON: &str = "Amazon";

/// Which region an instance is in, and the order regions are preferred in: the local region
/// (`eureka.client.region`) first, then the remote regions in the order
/// `eureka.client.fetch-remote-regions-registry` lists them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstanceRegionChecker {
    local: String,
    /// The remote regions fetched, in order of preference; never the local region.
    remote: Vec<String>,
    /// Each configured zone of a remote region (lower case) and its index in `remote`.
    zones: HashMap<String, usize>,
}

impl InstanceRegionChecker {
    /// The checker of a client configured with `config`.
    pub fn new(config: &ClientConfig) -> InstanceRegionChecker {
        let local = config.region.clone();
        let mut remote: Vec<String> = Vec::new();
        for region in &config.fetch_remote_regions_registry {
            let seen = remote.iter().any(|r| r.eq_ignore_ascii_case(region));
            if !seen && !region.eq_ignore_ascii_case(&local) {
                remote.push(region.clone());
            }
        }
        let mut zones = HashMap::new();
        for (index, region) in remote.iter().enumerate() {
            for zone in config.availability_zones.get(region).into_iter().flatten() {
                // A zone listed by two remote regions belongs to the earlier one.
                zones.entry(zone.trim().to_lowercase()).or_insert(index);
            }
        }
        InstanceRegionChecker {
            local,
            remote,
            zones,
        }
    }

    /// `eureka.client.region`.
    pub fn local_region(&self) -> &str {
        &self.local
    }

    /// The remote regions fetched, in order of preference.
    pub fn remote_regions(&self) -> &[String] {
        &self.remote
    }

    /// The region `instance` is in: a remote region its zone maps to, else the local region.
    pub fn instance_region(&self, instance: &Instance) -> &str {
        match self.remote_index(instance) {
            Some(index) => &self.remote[index],
            None => &self.local,
        }
    }

    /// Whether `instance` is in the local region.
    pub fn is_local(&self, instance: &Instance) -> bool {
        self.remote_index(instance).is_none()
    }

    /// `instances` narrowed to the most preferred region holding one instance for which
    /// `usable` holds: the local region's while it has one, else the first remote region (in
    /// configuration order) that has one. When none has, the local region's. Order is kept.
    pub fn prefer<T: Borrow<Instance>>(
        &self,
        instances: Vec<T>,
        usable: impl Fn(&Instance) -> bool,
    ) -> Vec<T> {
        if self.remote.is_empty() {
            return instances;
        }
        let best = instances
            .iter()
            .map(Borrow::borrow)
            .filter(|instance| usable(instance))
            .map(|instance| self.rank(instance))
            .min()
            .unwrap_or(0);
        instances
            .into_iter()
            .filter(|instance| self.rank(instance.borrow()) == best)
            .collect()
    }

    /// 0 for the local region, then 1, 2, … for the remote regions in order.
    fn rank(&self, instance: &Instance) -> usize {
        self.remote_index(instance).map_or(0, |index| index + 1)
    }

    fn remote_index(&self, instance: &Instance) -> Option<usize> {
        if self.remote.is_empty() {
            return None;
        }
        let zone = instance_zone(instance)?.trim().to_lowercase();
        if let Some(index) = self.zones.get(&zone) {
            return Some(*index);
        }
        // `us-west-2a` is in `us-west-2`: the name of a region and one letter.
        let mut chars = zone.chars();
        chars.next_back()?;
        let region = chars.as_str();
        self.remote
            .iter()
            .position(|remote| !region.is_empty() && remote.eq_ignore_ascii_case(region))
    }
}

/// The zone an instance says it is in: its AmazonInfo `availability-zone` (what Java reads),
/// else its metadata `zone` (what Spring Cloud instances carry).
pub fn instance_zone(instance: &Instance) -> Option<&str> {
    let amazon = instance
        .data_center_info
        .as_ref()
        .filter(|info| info.name == AMAZON)
        .and_then(|info| info.metadata.get(AVAILABILITY_ZONE_KEY));
    amazon
        .or_else(|| instance.metadata.get(ZONE_KEY))
        .map(String::as_str)
        .filter(|zone| !zone.trim().is_empty())
}

/// The query a full or delta fetch carries: `?regions=a,b` with the regions as configured (Java
/// sends them as written; the server lower-cases them), or nothing when none is fetched.
pub(crate) fn regions_query(regions: &[String]) -> String {
    if regions.is_empty() {
        return String::new();
    }
    let encoded: Vec<String> = regions.iter().map(|region| encode(region)).collect();
    format!("?regions={}", encoded.join(","))
}

/// Percent-encodes what a query value may not hold as it is; region names rarely need it.
fn encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}
