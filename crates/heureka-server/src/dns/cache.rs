//! What DNS keeps of the registry between queries: each application's endpoints as of its
//! version, and which zone each registered address is in. Like the response caches it keys on
//! the registry's versions, read under the store's lock on every query, so it is never stale:
//! an application's read document (a copy of every instance, milliseconds for an application
//! of 10,000) is taken once per change of that application, not once per query.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use heureka_core::Registry;

use super::endpoints::{up_endpoints, zones, Endpoint};
use crate::clock::Instant;

/// One application as of `version`.
#[derive(Debug)]
struct Cached {
    version: u64,
    up: Arc<Vec<Endpoint>>,
    zones: Vec<(IpAddr, String)>,
}

#[derive(Debug, Default)]
pub(crate) struct EndpointCache {
    apps: HashMap<String, Cached>,
    zone_index: ZoneIndex,
}

/// The zone of every registered address, rebuilt from the cached applications when the
/// registry's version moved, at most once per [`REBUILD_EVERY`]: a zone learned a second late
/// only orders one answer differently.
#[derive(Debug, Default)]
struct ZoneIndex {
    version: Option<u64>,
    built_at: Option<Instant>,
    zones: HashMap<IpAddr, String>,
}

const REBUILD_EVERY: Duration = Duration::from_secs(1);

impl EndpointCache {
    /// The UP endpoints of `app` (its name upper-cased, as the registry keys it), in the
    /// document's order; `None` when the registry has no such application.
    pub(crate) fn up(&mut self, registry: &Registry, app: &str) -> Option<Arc<Vec<Endpoint>>> {
        self.fresh(registry, app).map(|cached| cached.up.clone())
    }

    /// The zone of the instance registered at `address`; when several are, the first in
    /// application order.
    pub(crate) fn zone_of(
        &mut self,
        registry: &Registry,
        address: IpAddr,
        now: Instant,
    ) -> Option<&str> {
        let version = registry.version();
        let index = &self.zone_index;
        let due = index
            .built_at
            .is_none_or(|built| now.saturating_duration_since(built) >= REBUILD_EVERY);
        if index.version != Some(version) && due {
            self.rebuild_zones(registry, version, now);
        }
        self.zone_index.zones.get(&address).map(String::as_str)
    }

    fn rebuild_zones(&mut self, registry: &Registry, version: u64, now: Instant) {
        let listed = registry.application_versions();
        let mut zones = HashMap::new();
        for app in &listed {
            if let Some(cached) = self.fresh(registry, app.name) {
                for (address, zone) in &cached.zones {
                    zones.entry(*address).or_insert_with(|| zone.clone());
                }
            }
        }
        self.forget_unregistered(registry);
        self.zone_index = ZoneIndex {
            version: Some(version),
            built_at: Some(now),
            zones,
        };
    }

    /// `app` as the registry holds it now, read again only when its version moved.
    fn fresh(&mut self, registry: &Registry, app: &str) -> Option<&Cached> {
        let version = registry.application_version(app);
        if version == 0 {
            self.apps.remove(app);
            return None;
        }
        let stale = self
            .apps
            .get(app)
            .is_none_or(|cached| cached.version != version);
        if stale {
            let Some(application) = registry.application(app) else {
                self.apps.remove(app);
                return None;
            };
            let cached = Cached {
                version,
                up: Arc::new(up_endpoints(&application)),
                zones: zones(&application),
            };
            self.apps.insert(app.to_owned(), cached);
            if self.apps.len() > PRUNE_ABOVE {
                self.forget_unregistered(registry);
            }
        }
        self.apps.get(app)
    }

    /// Forgets applications the registry no longer holds, so the cache never holds more than
    /// the registry's applications and those changed since the last prune.
    fn forget_unregistered(&mut self, registry: &Registry) {
        let listed: HashSet<&str> = registry
            .application_versions()
            .iter()
            .map(|app| app.name)
            .collect();
        self.apps.retain(|name, _| listed.contains(name.as_str()));
    }
}

/// Cached applications beyond which those no longer registered are looked for on each insert.
const PRUNE_ABOVE: usize = 8192;

#[cfg(test)]
mod tests;
