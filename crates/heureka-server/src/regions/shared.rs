//! What the fetcher tasks publish and the readers take: each region's latest [`Published`],
//! replaced whole, and a version that moves whenever what any region serves may have changed,
//! which the merged documents' cache keys on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::region::Published;
use super::settings::{RegionSettings, RegionsSettings};

/// Every configured region's published state.
#[derive(Debug)]
pub(crate) struct Regions {
    settings: RegionsSettings,
    published: Vec<RwLock<Arc<Published>>>,
    version: AtomicU64,
}

impl Regions {
    pub(crate) fn new(settings: RegionsSettings) -> Regions {
        let published = settings
            .regions
            .iter()
            .map(|_| RwLock::new(Arc::new(Published::default())))
            .collect();
        Regions {
            settings,
            published,
            version: AtomicU64::new(1),
        }
    }

    pub(crate) fn settings(&self) -> &RegionsSettings {
        &self.settings
    }

    /// Whether no region is configured: then every read takes the local path, untouched.
    pub(crate) fn is_empty(&self) -> bool {
        self.published.is_empty()
    }

    pub(crate) fn region(&self, index: usize) -> &RegionSettings {
        &self.settings.regions[index]
    }

    /// Replaces region `index`'s published state. The version moves after it when what the
    /// region serves changed (its `revision`), so a reader that saw the new version sees the
    /// new state, and a fetch that brought nothing new rebuilds no merged document.
    pub(crate) fn publish(&self, index: usize, published: Published) {
        let revision = published.revision;
        let before = std::mem::replace(&mut *self.published[index].write(), Arc::new(published));
        if before.revision != revision {
            self.version.fetch_add(1, Ordering::Release);
        }
    }

    pub(crate) fn published(&self, index: usize) -> Arc<Published> {
        self.published[index].read().clone()
    }

    /// Moves whenever what a region serves may have changed.
    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// Whether every region has had a successful fetch: until then reads naming `regions=`
    /// answer 403, as Eureka's `shouldAllowAccess(true)` does.
    pub(crate) fn all_ready(&self) -> bool {
        self.published.iter().all(|slot| slot.read().ever_ready)
    }

    /// The regions not ready yet, by name, for the 403's reason.
    pub(crate) fn not_ready(&self) -> Vec<&str> {
        self.published
            .iter()
            .zip(&self.settings.regions)
            .filter(|(slot, _)| !slot.read().ever_ready)
            .map(|(_, region)| region.name.as_str())
            .collect()
    }
}
