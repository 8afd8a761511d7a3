//! Change counters: the registry's version, and the version of each application's last change.
//!
//! Readers' caches key on these. The global version moves on every change a reader can see;
//! an application's version records the global version of the last change to that application,
//! so a cache of per-application fragments re-encodes only the applications that changed.
//!
//! Such a cache asks for every application's version on every build, in name order
//! ([`Versions::listed`]), so the counters keep that list: at 100,000 applications, sorting
//! them took 75 ms per call and looking up each one's version 25 ms more. The list is a B-tree
//! that changes only when an application gains its first instance or loses its last; a
//! change to an application finds its counters through the hash map it always went through.

use std::collections::BTreeMap;

use crate::maps::HashMap;
use crate::stored::Name;

/// One entry of `Registry::application_versions` (`reads.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApplicationVersion<'a> {
    pub name: &'a str,
    /// The registry version of this application's last visible change.
    pub version: u64,
    pub instances: usize,
}

#[derive(Debug)]
pub(crate) struct Versions {
    /// Starts at 1, so a delta's `versions__delta` is never 0 (and never Eureka's -1).
    global: u64,
    /// Each application ever changed, by name: where its counters are in `apps`.
    by_app: HashMap<String, usize>,
    /// The counters of each application ever changed, in the order first changed. Kept, as
    /// the registry keeps an application whose last instance went.
    apps: Vec<AppCounters>,
    /// The applications that have instances, in name order, with where their counters are.
    listed: BTreeMap<Name, usize>,
}

#[derive(Clone, Copy, Debug)]
struct AppCounters {
    /// The global version of its last change.
    version: u64,
    /// How many instances it has.
    instances: usize,
}

impl Default for Versions {
    fn default() -> Versions {
        Versions {
            global: 1,
            by_app: HashMap::default(),
            apps: Vec::new(),
            listed: BTreeMap::new(),
        }
    }
}

impl Versions {
    pub(crate) fn global(&self) -> u64 {
        self.global
    }

    /// The version of `app`'s last change; 0 for an application never changed.
    pub(crate) fn of_app(&self, app: &str) -> u64 {
        self.by_app
            .get(app)
            .map_or(0, |index| self.apps[*index].version)
    }

    /// A change to one of `app`'s instances, which was registered before the change (`was`)
    /// or not, and is after it (`is`) or not. `name` makes the shared copy of `app`'s name,
    /// asked for only when the application gains its first instance.
    pub(crate) fn app_changed(
        &mut self,
        app: &str,
        was: bool,
        is: bool,
        name: impl FnOnce() -> Name,
    ) {
        self.global += 1;
        let index = match self.by_app.get(app) {
            Some(index) => *index,
            None => {
                let index = self.apps.len();
                self.apps.push(AppCounters {
                    version: 0,
                    instances: 0,
                });
                self.by_app.insert(app.to_owned(), index);
                index
            }
        };
        let counters = &mut self.apps[index];
        counters.version = self.global;
        let before = counters.instances;
        counters.instances = before + usize::from(is) - usize::from(was);
        match (before, counters.instances) {
            (0, 1..) => {
                self.listed.insert(name(), index);
            }
            (1.., 0) => {
                self.listed.remove(app);
            }
            _ => {}
        }
    }

    /// A change that touches no application's instances (the delta queue's retention purge).
    pub(crate) fn other_change(&mut self) {
        self.global += 1;
    }

    /// Every application that has instances, by name, with its version and instance count.
    pub(crate) fn listed(&self) -> impl Iterator<Item = ApplicationVersion<'_>> {
        self.listed.iter().map(|(name, index)| {
            let counters = self.apps[*index];
            ApplicationVersion {
                name,
                version: counters.version,
                instances: counters.instances,
            }
        })
    }
}
