//! Change counters: the registry's version, and the version of each application's last change.
//!
//! Readers' caches key on these. The global version moves on every change a reader can see;
//! an application's version records the global version of the last change to that application,
//! so a cache of per-application fragments re-encodes only the applications that changed.

use crate::maps::HashMap;

/// What the registry keeps of an application that has instances, by name, for
/// `Registry::application_versions`, which lists these without looking anything up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Listed {
    /// [`Versions::of_app`].
    pub(crate) version: u64,
    /// How many leases it has, never 0.
    pub(crate) instances: usize,
}

#[derive(Debug)]
pub(crate) struct Versions {
    /// Starts at 1, so a delta's `versions__delta` is never 0 (and never Eureka's -1).
    global: u64,
    by_app: HashMap<String, u64>,
}

impl Default for Versions {
    fn default() -> Versions {
        Versions {
            global: 1,
            by_app: HashMap::default(),
        }
    }
}

impl Versions {
    pub(crate) fn global(&self) -> u64 {
        self.global
    }

    /// The version of `app`'s last change; 0 for an application never changed.
    pub(crate) fn of_app(&self, app: &str) -> u64 {
        self.by_app.get(app).copied().unwrap_or(0)
    }

    /// A change to one application's instances.
    pub(crate) fn app_changed(&mut self, app: &str) {
        self.global += 1;
        match self.by_app.get_mut(app) {
            Some(version) => *version = self.global,
            None => {
                self.by_app.insert(app.to_owned(), self.global);
            }
        }
    }

    /// A change that touches no application's instances (the delta queue's retention purge).
    pub(crate) fn other_change(&mut self) {
        self.global += 1;
    }
}
