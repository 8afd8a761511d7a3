//! The documents that include remote regions, built from the local registry's document and
//! the regions' published views: the full and delta documents for a set of regions (each
//! region's whitelist applied), and the fallbacks of single-application, instance and VIP
//! reads. Instances from a region are served as fetched. Pure.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use heureka_core::{apps_hashcode, Application, Applications, Instance, InstanceStatus};

use super::region::Published;
use super::settings::RegionSettings;

/// `versions__delta` of a VIP read, as the local registry writes it.
const VIP_VERSION: i64 = -1;

/// One region chosen for a read: its settings and what it serves now.
pub(crate) struct Chosen<'a> {
    pub(crate) settings: &'a RegionSettings,
    pub(crate) published: Arc<Published>,
}

/// Applications by name, instances by id: a remote instance with the id of one already in its
/// application replaces it, as Eureka's `Application.addInstance` does.
#[derive(Default)]
struct Merged {
    apps: BTreeMap<String, BTreeMap<String, Instance>>,
}

impl Merged {
    fn add(&mut self, app: &str, instance: Instance) {
        self.apps
            .entry(app.to_uppercase())
            .or_default()
            .insert(instance.id().to_owned(), instance);
    }

    fn add_document(&mut self, document: Applications) {
        for application in document.applications {
            for instance in application.instances {
                self.add(&application.name, instance);
            }
        }
    }

    fn into_document(self, versions_delta: i64) -> Applications {
        let applications: Vec<Application> = self
            .apps
            .into_iter()
            .filter(|(_, instances)| !instances.is_empty())
            .map(|(name, instances)| Application {
                name,
                instances: instances.into_values().collect(),
            })
            .collect();
        Applications {
            versions_delta,
            apps_hashcode: hashcode_of(&applications),
            applications,
        }
    }
}

fn hashcode_of(applications: &[Application]) -> String {
    apps_hashcode(
        applications
            .iter()
            .flat_map(|application| application.instances.iter().map(|i| &i.status)),
    )
}

/// `GET /apps?regions=…`: every local instance, then each region's whitelisted applications'
/// instances, added to the application of the same name.
pub(crate) fn full(local: Applications, regions: &[Chosen<'_>]) -> Applications {
    let mut merged = Merged::default();
    merged.add_document(local);
    for region in regions {
        for (app, instances) in region.published.served.applications() {
            if region.settings.allows(app) {
                for instance in instances {
                    merged.add(app, instance.clone());
                }
            }
        }
    }
    merged.into_document(1)
}

/// `apps__hashcode` of the full document for these regions, counted without building it:
/// the local registry's counts (`local_counts`, status and number), then each region's
/// whitelisted instances, each one taking the place of the instance with its id in the same
/// application, if any (a local one's status comes from `local_status`).
pub(crate) fn hashcode(
    local_counts: &[(InstanceStatus, usize)],
    local_status: impl Fn(&str, &str) -> Option<InstanceStatus>,
    regions: &[Chosen<'_>],
) -> String {
    let mut counts: HashMap<InstanceStatus, usize> = HashMap::new();
    for (status, count) in local_counts {
        *counts.entry(*status).or_default() += count;
    }
    // Keyed by the application's number and the id borrowed from the view: no allocation per
    // instance (a region delta counts every remote instance on each build).
    let mut numbers: HashMap<String, usize> = HashMap::new();
    let mut remote: HashMap<(usize, &str), InstanceStatus> = HashMap::new();
    for region in regions {
        for (app, instances) in region.published.served.applications() {
            if !region.settings.allows(app) {
                continue;
            }
            let name = app.to_uppercase();
            let next = numbers.len();
            let number = *numbers.entry(name.clone()).or_insert(next);
            for instance in instances {
                let key = (number, instance.id());
                let replaced = match remote.insert(key, instance.status) {
                    Some(earlier) => Some(earlier),
                    None => local_status(&name, instance.id()),
                };
                if let Some(status) = replaced {
                    *counts.entry(status).or_default() -= 1;
                }
                *counts.entry(instance.status).or_default() += 1;
            }
        }
    }
    apps_hashcode(
        counts
            .iter()
            .flat_map(|(status, count)| std::iter::repeat_n(status, *count)),
    )
}

/// `GET /apps/delta?regions=…`: the local changes, then each region's whitelisted changes
/// within the retention. `apps_hashcode` is the full document's for the same regions
/// ([`hashcode`]), so a client that applies it holds what a full fetch would give.
pub(crate) fn delta(
    local_delta: Applications,
    apps_hashcode: String,
    regions: &[Chosen<'_>],
    versions_delta: i64,
) -> Applications {
    let mut applications: Vec<Application> = local_delta.applications;
    let mut index: HashMap<String, usize> = applications
        .iter()
        .enumerate()
        .map(|(at, application)| (application.name.clone(), at))
        .collect();
    for region in regions {
        for change in region.published.changes.iter() {
            if !region.settings.allows(&change.app) {
                continue;
            }
            let name = change.app.to_uppercase();
            let at = *index.entry(name.clone()).or_insert_with(|| {
                applications.push(Application {
                    name,
                    instances: Vec::new(),
                });
                applications.len() - 1
            });
            let instances = &mut applications[at].instances;
            instances.retain(|i| i.id() != change.id());
            instances.push(change.clone());
        }
    }
    Applications {
        versions_delta,
        apps_hashcode,
        applications,
    }
}

/// `GET /apps/{app}` when the local registry has no instance of it: the first region, in
/// name order, whose view has the application.
pub(crate) fn application(app: &str, regions: &[Chosen<'_>]) -> Option<Application> {
    regions
        .iter()
        .find_map(|region| region.published.served.application(app))
}

/// `GET /apps/{app}/{id}` when the local registry has no such lease: the first region whose
/// view has the application, its instance by id (None when that region's application lacks
/// the id, as in Eureka).
pub(crate) fn instance(app: &str, id: &str, regions: &[Chosen<'_>]) -> Option<Instance> {
    let region = regions
        .iter()
        .find(|region| region.published.served.has_application(app))?;
    region.published.served.instance(app, id).cloned()
}

/// `GET /instances/{id}` when no local application holds the id: the first region holding it.
pub(crate) fn instance_by_id(id: &str, regions: &[Chosen<'_>]) -> Option<Instance> {
    regions
        .iter()
        .find_map(|region| region.published.served.instance_by_id(id).cloned())
}

/// `GET /vips/{vip}` and `/svips/{svip}` over the local registry's selection and every
/// region's whitelisted instances whose address lists the VIP exactly (Eureka's rule).
pub(crate) fn vip(
    local: Applications,
    vip: &str,
    secure: bool,
    regions: &[Chosen<'_>],
) -> Applications {
    let mut merged = Merged::default();
    merged.add_document(local);
    for region in regions {
        for (app, instances) in region.published.served.applications() {
            if !region.settings.allows(app) {
                continue;
            }
            for instance in instances {
                let address = if secure {
                    &instance.secure_vip_address
                } else {
                    &instance.vip_address
                };
                if address
                    .as_deref()
                    .is_some_and(|address| address.split(',').any(|part| part == vip))
                {
                    merged.add(app, instance.clone());
                }
            }
        }
    }
    merged.into_document(VIP_VERSION)
}

#[cfg(test)]
mod tests;
