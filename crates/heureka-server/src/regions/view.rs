//! One region's registry as this server holds it: applications → instances by id, built from a
//! full document and moved on by deltas, and the differences between two views. Pure.

use std::collections::BTreeMap;

use heureka_core::{apps_hashcode, ActionType, Application, Applications, Instance};

/// A region's applications (upper-cased names) and their instances by id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct View {
    apps: BTreeMap<String, BTreeMap<String, Instance>>,
}

/// One difference between two views: the instance as it is now, or as it was when it went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Difference {
    pub(crate) action: ActionType,
    pub(crate) instance: Instance,
}

impl View {
    /// The view a full document describes.
    pub(crate) fn from_document(document: &Applications) -> View {
        let mut view = View::default();
        for application in &document.applications {
            for instance in &application.instances {
                view.put(&application.name, instance.clone());
            }
        }
        view
    }

    /// Applies a delta document as Eureka's client does: ADDED and MODIFIED put an instance by
    /// id, DELETED removes it. Returns whether the view's `apps__hashcode` is then the delta's.
    pub(crate) fn apply_delta(&mut self, delta: &Applications) -> bool {
        for application in &delta.applications {
            for instance in &application.instances {
                match instance.action_type {
                    Some(ActionType::Deleted) => self.remove(&application.name, instance.id()),
                    _ => self.put(&application.name, instance.clone()),
                }
            }
        }
        self.hashcode() == delta.apps_hashcode
    }

    /// Holds `instance` as fetched, its `actionType` too: Eureka serves a region's instances
    /// exactly as its registry held them.
    fn put(&mut self, app: &str, instance: Instance) {
        self.apps
            .entry(app.to_uppercase())
            .or_default()
            .insert(instance.id().to_owned(), instance);
    }

    fn remove(&mut self, app: &str, id: &str) {
        let app = app.to_uppercase();
        if let Some(instances) = self.apps.get_mut(&app) {
            instances.remove(id);
            if instances.is_empty() {
                self.apps.remove(&app);
            }
        }
    }

    /// `apps__hashcode` over every instance held.
    pub(crate) fn hashcode(&self) -> String {
        apps_hashcode(self.instances().map(|instance| &instance.status))
    }

    pub(crate) fn instances(&self) -> impl Iterator<Item = &Instance> {
        self.apps.values().flat_map(|instances| instances.values())
    }

    pub(crate) fn application_count(&self) -> usize {
        self.apps.len()
    }

    pub(crate) fn instance_count(&self) -> usize {
        self.apps.values().map(BTreeMap::len).sum()
    }

    /// The application named `app` (any case), its instances by id; None when absent.
    pub(crate) fn application(&self, app: &str) -> Option<Application> {
        let instances = self.apps.get(&app.to_uppercase())?;
        Some(Application {
            name: app.to_uppercase(),
            instances: instances.values().cloned().collect(),
        })
    }

    /// The applications, by name, each with its instances by id.
    pub(crate) fn applications(
        &self,
    ) -> impl Iterator<Item = (&str, impl Iterator<Item = &Instance>)> {
        self.apps
            .iter()
            .map(|(name, instances)| (name.as_str(), instances.values()))
    }

    pub(crate) fn instance(&self, app: &str, id: &str) -> Option<&Instance> {
        self.apps.get(&app.to_uppercase())?.get(id)
    }

    pub(crate) fn has_application(&self, app: &str) -> bool {
        self.apps.contains_key(&app.to_uppercase())
    }

    pub(crate) fn instance_by_id(&self, id: &str) -> Option<&Instance> {
        self.apps.values().find_map(|instances| instances.get(id))
    }

    /// What changed from `self` to `next`: instances added, modified (any field differs) or
    /// deleted (as they were), by application then id.
    pub(crate) fn differences(&self, next: &View) -> Vec<Difference> {
        let mut differences = Vec::new();
        let empty = BTreeMap::new();
        let names = self.apps.keys().chain(
            next.apps
                .keys()
                .filter(|name| !self.apps.contains_key(*name)),
        );
        for name in names {
            let before = self.apps.get(name).unwrap_or(&empty);
            let after = next.apps.get(name).unwrap_or(&empty);
            for (id, instance) in after {
                let action = match before.get(id) {
                    None => ActionType::Added,
                    Some(old) if old != instance => ActionType::Modified,
                    Some(_) => continue,
                };
                differences.push(Difference {
                    action,
                    instance: instance.clone(),
                });
            }
            for (id, instance) in before {
                if !after.contains_key(id) {
                    differences.push(Difference {
                        action: ActionType::Deleted,
                        instance: instance.clone(),
                    });
                }
            }
        }
        differences
    }
}

#[cfg(test)]
mod tests;
