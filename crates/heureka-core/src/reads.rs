//! Reads: the documents the server renders (full registry, delta, one app, one instance, VIP
//! selections), each instance "decorated" with its lease's timestamps (§6.1, §6.2).
//!
//! Full and VIP documents are sorted by app name and instance id. Eureka's order is hash-map
//! order and clients ignore it; a stable order keeps cached payloads and tests reproducible.

use crate::delta::{apps_hashcode, ChangeItem, DeltaEntry};
use crate::lease::{decorate, is_visible, Lease};
use crate::maps::HashMap;
use crate::model::{Application, Applications, Instance, InstanceStatus, Millis};
use crate::registry::{app_key, Registry};
use crate::stored::StoredInstance;
use crate::versions::ApplicationVersion;

/// One entry of [`Registry::status_counts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusCount<'a> {
    pub app: &'a str,
    pub status: InstanceStatus,
    pub instances: usize,
}

/// `versions__delta` of a full fetch: always 1.
const FULL_FETCH_VERSION: i64 = 1;
/// `versions__delta` of a VIP read: a fresh Java `Applications` defaults to -1.
const VIP_VERSION: i64 = -1;

impl Registry {
    /// Bumped on every change a reader can see (not on plain renews). Response caches key on it.
    ///
    /// Starts at 1. Bumped by register, cancel, eviction, an effective status update or
    /// override delete, a metadata update, a status flip decided by the rules on renew, a peer
    /// override stored on renew, and a delta-queue purge that dropped items. Heartbeats alone
    /// never bump it: lease timestamps in cached documents lag, as they do behind Eureka's cache.
    pub fn version(&self) -> u64 {
        self.versions.global()
    }

    /// Every application that has instances, by name, with the [`Registry::version`] of its
    /// last change and its number of instances. A cache of pieces of the full document
    /// re-encodes exactly the applications whose version moved.
    pub fn application_versions(&self) -> Vec<ApplicationVersion<'_>> {
        self.versions.listed().collect()
    }

    /// [`Registry::application_versions`] the long way, sorting every application: what the
    /// list kept by the writes must always agree with.
    #[cfg(test)]
    pub(crate) fn walked_application_versions(&self) -> Vec<ApplicationVersion<'_>> {
        let mut versions: Vec<ApplicationVersion<'_>> = self
            .apps
            .iter()
            .filter(|(_, leases)| !leases.is_empty())
            .map(|(name, leases)| ApplicationVersion {
                name: name.as_ref(),
                version: self.versions.of_app(name),
                instances: leases.len(),
            })
            .collect();
        versions.sort_unstable_by(|a, b| a.name.cmp(b.name));
        versions
    }

    /// How many instances each application has in each status, sorted by application and
    /// status name: the numbers a metrics scrape reports, without copying any instance.
    pub fn status_counts(&self) -> Vec<StatusCount<'_>> {
        let mut counts: Vec<StatusCount<'_>> = Vec::new();
        for (app, leases) in &self.apps {
            let first = counts.len();
            for lease in leases.values() {
                let status = lease.holder.status;
                match counts[first..].iter_mut().find(|c| c.status == status) {
                    Some(count) => count.instances += 1,
                    None => counts.push(StatusCount {
                        app,
                        status,
                        instances: 1,
                    }),
                }
            }
        }
        counts.sort_unstable_by(|a, b| (a.app, a.status.as_str()).cmp(&(b.app, b.status.as_str())));
        counts
    }

    /// Full registry (`versions__delta` 1), apps with no instances omitted.
    ///
    /// No expiry filter: during self-preservation expired leases are still served.
    pub fn applications(&self) -> Applications {
        let applications = self.sorted_applications(|_| true);
        Applications {
            versions_delta: FULL_FETCH_VERSION,
            apps_hashcode: hashcode_of(&applications),
            applications,
        }
    }

    /// The delta document (§6.9): hash of the full registry, `versions__delta` = a counter.
    ///
    /// The counter is [`Registry::version`]: it never goes backwards, starts at 1 and never is
    /// -1, which is all clients check. Eureka counts payload generations instead; a cache keyed
    /// on `version()` generates exactly one payload per version, so the two agree in effect.
    pub fn delta(&self) -> Applications {
        let mut applications = Vec::new();
        let (versions_delta, apps_hashcode) =
            self.visit_delta(|application| applications.push(application.clone()));
        Applications {
            versions_delta,
            apps_hashcode,
            applications,
        }
    }

    /// The applications of [`Registry::delta`], one at a time and in the same order, for
    /// encoders that write as they go: only one application is copied at any moment, however
    /// many instances the delta holds (all of them, minutes after a mass registration).
    /// Returns the document's `versions__delta` and `apps__hashcode`.
    pub fn visit_delta(&self, mut visit: impl FnMut(&Application)) -> (i64, String) {
        let mut groups: Vec<(&str, Vec<&ChangeItem>)> = Vec::new();
        let mut group_index: HashMap<&str, usize> = HashMap::default();
        for item in self.recently_changed.latest() {
            let index = *group_index.entry(&item.app).or_insert_with(|| {
                groups.push((&item.app, Vec::new()));
                groups.len() - 1
            });
            groups[index].1.push(item);
        }
        for (app, items) in groups {
            let instances: Vec<Instance> = items
                .into_iter()
                .filter_map(|item| self.delta_item_instance(item))
                .collect();
            if !instances.is_empty() {
                visit(&Application {
                    name: app.to_owned(),
                    instances,
                });
            }
        }
        (
            i64::try_from(self.version()).unwrap_or(i64::MAX),
            self.full_hashcode(),
        )
    }

    /// Number of items in the delta queue: one per instance changed within the retention window.
    pub fn recently_changed_len(&self) -> usize {
        self.recently_changed.len()
    }

    /// One application, None if unknown or empty. No expiry filter, as in Eureka.
    pub fn application(&self, app: &str) -> Option<Application> {
        let app = app_key(app);
        let leases = self
            .apps
            .get(app.as_ref())
            .filter(|leases| !leases.is_empty())?;
        Some(Application {
            name: app.into_owned(),
            instances: self.sorted_instances(leases.values(), |_| true),
        })
    }

    /// One instance; None if unknown or (when expiration is enabled) expired.
    pub fn instance(&self, app: &str, id: &str, now: Millis) -> Option<Instance> {
        let expiration_enabled = self.lease_expiration_enabled();
        self.lease(&app_key(app), id)
            .filter(|lease| is_visible(lease, now, expiration_enabled))
            .map(|lease| self.decorate(lease))
    }

    /// The status an instance is counted under in `apps__hashcode` (its lease's, expired or
    /// not); None if unknown. What a document merging other instances with the registry's
    /// needs to count, without copying the instance.
    pub fn status_of(&self, app: &str, id: &str) -> Option<InstanceStatus> {
        self.lease(&app_key(app), id)
            .map(|lease| lease.holder.status)
    }

    /// An instance as a delta shows it now, whether its lease is live or expired: the live
    /// lease, or the copy kept when it was cancelled or evicted (while its DELETED item is
    /// queued), each with the `actionType` of its last change. What a push of one write's
    /// changes sends for each changed instance.
    pub fn changed_instance(&self, app: &str, id: &str) -> Option<Instance> {
        let app = app_key(app);
        let lease = self
            .lease(&app, id)
            .or_else(|| self.recently_changed.deleted_lease(&app, id))?;
        Some(self.decorate(lease))
    }

    /// First instance with this id across all apps, same filter.
    ///
    /// Eureka returns the first match in hash-map order; we take the alphabetically first
    /// app, so the answer is the same on every call.
    pub fn instance_by_id(&self, id: &str, now: Millis) -> Option<Instance> {
        let expiration_enabled = self.lease_expiration_enabled();
        self.apps
            .iter()
            .filter_map(|(app, leases)| Some((app, leases.get(id)?)))
            .filter(|(_, lease)| is_visible(lease, now, expiration_enabled))
            .min_by(|(app_a, _), (app_b, _)| app_a.cmp(app_b))
            .map(|(_, lease)| self.decorate(lease))
    }

    /// VIP (or secure VIP when `secure`) selection, `versions__delta` -1.
    ///
    /// An instance matches when one comma-separated part of its address equals `vip` exactly:
    /// no trimming, case-sensitive, as Eureka's `ResponseCacheImpl.getApplicationsForVip`.
    pub fn vip(&self, vip: &str, secure: bool) -> Applications {
        let applications = self.sorted_applications(|instance| {
            let address = if secure {
                &instance.secure_vip_address
            } else {
                &instance.vip_address
            };
            address
                .as_deref()
                .is_some_and(|address| address.split(',').any(|part| part == vip))
        });
        Applications {
            versions_delta: VIP_VERSION,
            apps_hashcode: hashcode_of(&applications),
            applications,
        }
    }

    fn decorate(&self, lease: &Lease) -> Instance {
        decorate(lease, self.own_instance_id.as_deref())
    }

    /// `apps__hashcode` of the whole registry, expired-not-evicted leases included (§5).
    pub fn full_hashcode(&self) -> String {
        self.statuses.hashcode()
    }

    /// [`Registry::full_hashcode`] counted the long way, over every lease: what the counts
    /// kept by the writes must always agree with.
    #[cfg(test)]
    pub(crate) fn walked_hashcode(&self) -> String {
        apps_hashcode(
            self.apps
                .values()
                .flat_map(|leases| leases.values().map(|lease| &lease.holder.status)),
        )
    }

    /// Apps with at least one selected instance, by name; instances by id.
    fn sorted_applications(&self, select: impl Fn(&StoredInstance) -> bool) -> Vec<Application> {
        let mut applications: Vec<Application> = self
            .apps
            .iter()
            .map(|(name, leases)| Application {
                name: name.to_string(),
                instances: self.sorted_instances(leases.values(), &select),
            })
            .filter(|application| !application.instances.is_empty())
            .collect();
        applications.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        applications
    }

    fn sorted_instances<'a>(
        &self,
        leases: impl Iterator<Item = &'a Lease>,
        select: impl Fn(&StoredInstance) -> bool,
    ) -> Vec<Instance> {
        let mut instances: Vec<Instance> = leases
            .filter(|lease| select(&lease.holder))
            .map(|lease| self.decorate(lease))
            .collect();
        instances.sort_unstable_by(|a, b| a.id().cmp(b.id()));
        instances
    }
}

/// One application of the delta document, in the delta's order (see
/// [`Registry::delta_applications`]); [`Registry::delta_application`] renders it.
#[derive(Debug)]
pub struct DeltaApplication<'a> {
    pub name: &'a str,
    /// The registry version of this application's last visible change.
    pub version: u64,
    /// How many of its instances the delta holds.
    pub instances: usize,
    /// Its items, in queue order, with their sequence numbers.
    items: Vec<(u64, &'a ChangeItem)>,
}

impl DeltaApplication<'_> {
    /// The sequence numbers of its items, in queue order: what
    /// [`Registry::delta_application_items`] takes to show them again later, after the
    /// registry has been unlocked in between.
    pub fn item_numbers(&self) -> Vec<u64> {
        self.items.iter().map(|(seq, _)| *seq).collect()
    }
}

/// What [`Registry::delta_application_items`] found of an application's delta items.
#[derive(Clone, Debug, PartialEq)]
pub struct DeltaItems {
    /// The application's version now ([`Registry::application_version`]).
    pub version: u64,
    /// How many of the items are still queued.
    pub queued: usize,
    /// Those items' instances as [`Registry::delta_application`] shows them; None if none
    /// can be shown.
    pub application: Option<Application>,
}

impl Registry {
    /// The applications of [`Registry::delta`], in its order, without rendering them: a cache
    /// of pieces of the delta re-renders only those whose `(version, instances)` moved. That
    /// pair moves whenever an application's part of the delta does: every item queued for an
    /// application changes its version, and at one version its items can only be purged, which
    /// lowers their number. Cancelled applications, gone from the registry, are listed too.
    pub fn delta_applications(&self) -> Vec<DeltaApplication<'_>> {
        let mut groups: Vec<DeltaApplication<'_>> = Vec::new();
        let mut group_index: HashMap<&str, usize> = HashMap::default();
        for (seq, item) in self.recently_changed.numbered() {
            let index = *group_index.entry(&item.app).or_insert_with(|| {
                groups.push(DeltaApplication {
                    name: &item.app,
                    version: self.versions.of_app(&item.app),
                    instances: 0,
                    items: Vec::new(),
                });
                groups.len() - 1
            });
            groups[index].instances += 1;
            groups[index].items.push((seq, item));
        }
        groups
    }

    /// The [`Registry::version`] of `app`'s last visible change, 0 if it never had one: a
    /// cache of one application's document re-encodes it only when this moves.
    pub fn application_version(&self, app: &str) -> u64 {
        self.versions.of_app(&app_key(app))
    }

    /// The instance a delta item shows: the live lease's current state, or the copy kept when
    /// it was removed. None for a live item whose lease is gone, which is unreachable in
    /// practice: a removal always queues a later DELETED item.
    fn delta_item_instance(&self, item: &ChangeItem) -> Option<Instance> {
        match &item.entry {
            DeltaEntry::Live => self
                .lease(&item.app, &item.id)
                .map(|lease| self.decorate(lease)),
            DeltaEntry::Deleted(lease) => Some(self.decorate(lease)),
        }
    }

    /// One application of [`Registry::delta_applications`] as [`Registry::visit_delta`] shows
    /// it; None if none of its instances can be shown.
    pub fn delta_application(&self, entry: &DeltaApplication<'_>) -> Option<Application> {
        let instances: Vec<Instance> = entry
            .items
            .iter()
            .filter_map(|(_, item)| self.delta_item_instance(item))
            .collect();
        (!instances.is_empty()).then(|| Application {
            name: entry.name.to_owned(),
            instances,
        })
    }

    /// An application's delta items by their [`DeltaApplication::item_numbers`], taken
    /// earlier: those still queued, as the delta shows them now. Items queued since are not
    /// among them, but each came with a visible change to the application, so `version`
    /// tells: the same version and number of items as the delta now holds for it means the
    /// same items.
    pub fn delta_application_items(&self, app: &str, numbers: &[u64]) -> DeltaItems {
        let queued: Vec<&ChangeItem> = numbers
            .iter()
            .filter_map(|seq| self.recently_changed.item(*seq))
            .collect();
        let instances: Vec<Instance> = queued
            .iter()
            .filter_map(|item| self.delta_item_instance(item))
            .collect();
        DeltaItems {
            version: self.application_version(app),
            queued: queued.len(),
            application: (!instances.is_empty()).then(|| Application {
                name: app.to_owned(),
                instances,
            }),
        }
    }
}

fn hashcode_of(applications: &[Application]) -> String {
    apps_hashcode(applications.iter().flat_map(|application| {
        application
            .instances
            .iter()
            .map(|instance| &instance.status)
    }))
}

#[cfg(test)]
mod tests;
