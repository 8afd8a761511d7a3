//! What the xDS streams keep of the registry between reads, shared by all of them (`hub.rs`):
//! each application's UP endpoints as of its version, and the answers for VIP addresses as of
//! the registry's version. A stream reads under the store's lock on every change; with this
//! it looks up versions there and copies an application's read document (every instance) only
//! when that application changed, once for every stream, as `dns/cache.rs` does for DNS.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use heureka_core::Registry;

use super::resources::Endpoint;
use super::targets;
use crate::clock::Instant;

/// Endpoints as the cache hands them out: shared, never copied per stream.
pub(crate) type Endpoints = Arc<Vec<Endpoint>>;

/// One application as of `version`.
#[derive(Debug)]
struct Cached {
    version: u64,
    endpoints: Endpoints,
}

#[derive(Debug, Default)]
pub(crate) struct EndpointCache {
    /// By the registry's key (the name upper-cased): only applications that had instances when
    /// last read.
    apps: HashMap<String, Cached>,
    vips: VipAnswers,
    pruned: Pruned,
}

/// What names that are no application stand for, as of one registry version: a VIP lookup
/// walks every instance, so it is made once per change for all the streams asking.
#[derive(Debug, Default)]
struct VipAnswers {
    version: u64,
    answers: HashMap<String, Option<Endpoints>>,
}

/// When applications gone from the registry were last dropped.
#[derive(Debug, Default)]
struct Pruned {
    version: u64,
    at: Option<Instant>,
}

/// VIP answers kept per registry version: a stream's worth of names; beyond, each is looked up
/// uncached, so streams asking for unknown names cannot grow the cache.
const MAX_VIP_ANSWERS: usize = 16_384;
/// How often, at most, the cache looks for applications gone from the registry: the walk
/// looks up every cached application's version, so it is not made on every change.
const PRUNE_EVERY: Duration = Duration::from_secs(1);

impl EndpointCache {
    /// What resource NAME stands for now: the UP endpoints of the application of that name
    /// (any case), else of the VIP address; `None` when neither exists. Call under the store's
    /// lock: only an application whose version moved is read again.
    pub(crate) fn endpoints(&mut self, registry: &Registry, name: &str) -> Option<Endpoints> {
        self.application(registry, &name.to_uppercase())
            .or_else(|| self.vip(registry, name))
    }

    /// Drops the applications the registry no longer holds (and those changed since they were
    /// read, read again when next asked), at most once per [`PRUNE_EVERY`] and only when the
    /// registry changed, so the cache holds the registry's applications and no more.
    pub(crate) fn prune(&mut self, registry: &Registry, now: Instant) {
        let version = registry.version();
        let due = self
            .pruned
            .at
            .is_none_or(|at| now.saturating_duration_since(at) >= PRUNE_EVERY);
        if self.pruned.version == version || !due {
            return;
        }
        self.apps
            .retain(|app, cached| registry.application_version(app) == cached.version);
        self.pruned = Pruned {
            version,
            at: Some(now),
        };
    }

    /// The application keyed `app` as the registry holds it now, read again only when its
    /// version moved; `None` when it has no instance.
    fn application(&mut self, registry: &Registry, app: &str) -> Option<Endpoints> {
        let version = registry.application_version(app);
        if version == 0 {
            return None;
        }
        if let Some(cached) = self.apps.get(app).filter(|c| c.version == version) {
            return Some(cached.endpoints.clone());
        }
        let Some(application) = registry.application(app) else {
            self.apps.remove(app);
            return None;
        };
        let endpoints = Arc::new(targets::application_endpoints(&application));
        let cached = Cached {
            version,
            endpoints: endpoints.clone(),
        };
        self.apps.insert(app.to_owned(), cached);
        Some(endpoints)
    }

    /// What VIP address `vip` stands for as of the registry's version.
    fn vip(&mut self, registry: &Registry, vip: &str) -> Option<Endpoints> {
        let version = registry.version();
        if self.vips.version != version {
            self.vips = VipAnswers {
                version,
                answers: HashMap::new(),
            };
        }
        if let Some(answer) = self.vips.answers.get(vip) {
            return answer.clone();
        }
        let answer = targets::vip_endpoints(registry, vip).map(Arc::new);
        if self.vips.answers.len() < MAX_VIP_ANSWERS {
            self.vips.answers.insert(vip.to_owned(), answer.clone());
        }
        answer
    }

    #[cfg(test)]
    fn applications_held(&self) -> Vec<&str> {
        let mut held: Vec<&str> = self.apps.keys().map(String::as_str).collect();
        held.sort_unstable();
        held
    }
}

#[cfg(test)]
mod tests;
