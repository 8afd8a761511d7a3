//! The local copy of the registry (§8.3, §8.4): replaced by a full fetch, patched by a delta,
//! checked against the server's `apps__hashcode`, and viewed as each application's instances,
//! shuffled, only the `UP` ones unless the client asks for every status.

use std::collections::{BTreeMap, HashMap};

use heureka_core::{apps_hashcode, ActionType, Applications, Instance, InstanceStatus};

#[derive(Debug, Default)]
pub(crate) struct LocalRegistry {
    /// Every instance, by application name then instance id; the hash is computed over these.
    apps: BTreeMap<String, BTreeMap<String, Instance>>,
    /// Each application's offered instances (`UP` ones, or all with `every_status`), shuffled
    /// once per fetch as the Java client does, so that clients spread their calls across
    /// instances.
    offered: HashMap<String, Vec<Instance>>,
    /// Whether instances of every status are offered (`filter-only-up-instances=false`).
    every_status: bool,
    /// Whether a full fetch has succeeded; until then every refresh is a full fetch.
    pub(crate) filled: bool,
}

impl LocalRegistry {
    /// An empty copy offering only `UP` instances, or (`filter_only_up` false) every status,
    /// as Java's `shouldFilterOnlyUpInstances` decides what the shuffled lists hold.
    pub(crate) fn new(filter_only_up: bool) -> LocalRegistry {
        LocalRegistry {
            every_status: !filter_only_up,
            ..LocalRegistry::default()
        }
    }

    /// Replaces the copy with a full registry document; returns the applications whose
    /// instances differ from before (added, removed or changed).
    pub(crate) fn replace(&mut self, full: Applications) -> Vec<String> {
        let apps: BTreeMap<String, BTreeMap<String, Instance>> = full
            .applications
            .into_iter()
            .map(|app| {
                let instances = app
                    .instances
                    .into_iter()
                    .map(|instance| (instance.id().to_owned(), instance))
                    .collect();
                (app.name.to_uppercase(), instances)
            })
            .collect();
        let old = std::mem::replace(&mut self.apps, apps);
        let mut changed: Vec<String> = old
            .iter()
            .filter(|(name, instances)| self.apps.get(*name) != Some(instances))
            .map(|(name, _)| name.clone())
            .collect();
        changed.extend(
            self.apps
                .keys()
                .filter(|name| !old.contains_key(*name))
                .cloned(),
        );
        changed.sort();
        self.filled = true;
        self.reshuffle();
        changed
    }

    /// Applies a delta: `ADDED` and `MODIFIED` add or replace the instance, `DELETED` removes it
    /// (and its application once empty). Returns whether the result's hash is the delta's
    /// `apps__hashcode` (when it is not, the caller must full-fetch) and the applications the
    /// delta changed. Only the applications it names are reshuffled: a pushed delta costs what
    /// it touches, not the whole copy (a fetch reshuffles everything, [`LocalRegistry::reshuffle`]).
    pub(crate) fn apply_delta(&mut self, delta: Applications) -> (bool, Vec<String>) {
        let mut before: BTreeMap<String, Option<BTreeMap<String, Instance>>> = BTreeMap::new();
        for app in delta.applications {
            let name = app.name.to_uppercase();
            before
                .entry(name.clone())
                .or_insert_with(|| self.apps.get(&name).cloned());
            for instance in app.instances {
                let id = instance.id().to_owned();
                match instance.action_type {
                    Some(ActionType::Deleted) => {
                        if let Some(instances) = self.apps.get_mut(&name) {
                            instances.remove(&id);
                            if instances.is_empty() {
                                self.apps.remove(&name);
                            }
                        }
                    }
                    // Java treats a missing action like ADDED: the instance is as it is now.
                    _ => {
                        self.apps
                            .entry(name.clone())
                            .or_default()
                            .insert(id, instance);
                    }
                }
            }
        }
        for name in before.keys() {
            self.reshuffle_app(name);
        }
        let changed = before
            .into_iter()
            .filter(|(name, old)| self.apps.get(name) != old.as_ref())
            .map(|(name, _)| name)
            .collect();
        (self.hashcode() == delta.apps_hashcode, changed)
    }

    /// How many applications and instances the copy holds, every status included.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.apps.len(), self.apps.values().map(BTreeMap::len).sum())
    }

    /// The status of one instance in the copy, whatever it is.
    pub(crate) fn status_of(&self, app: &str, id: &str) -> Option<InstanceStatus> {
        self.apps
            .get(&app.to_uppercase())
            .and_then(|instances| instances.get(id))
            .map(|instance| instance.status)
    }

    /// `apps__hashcode` of the local copy (§5).
    pub(crate) fn hashcode(&self) -> String {
        apps_hashcode(
            self.apps
                .values()
                .flat_map(|instances| instances.values())
                .map(|instance| &instance.status),
        )
    }

    /// The offered instances of `app` (any case), in this fetch's shuffled order.
    pub(crate) fn instances(&self, app: &str) -> Vec<Instance> {
        self.offered
            .get(&app.to_uppercase())
            .cloned()
            .unwrap_or_default()
    }

    /// Every instance of `app` (any case), whatever its status, ordered by id.
    pub(crate) fn all_instances(&self, app: &str) -> Vec<Instance> {
        self.apps
            .get(&app.to_uppercase())
            .map(|instances| instances.values().cloned().collect())
            .unwrap_or_default()
    }

    /// The instances with this id, in any application, whatever their status.
    pub(crate) fn instances_by_id(&self, id: &str) -> Vec<Instance> {
        self.apps
            .values()
            .filter_map(|instances| instances.get(id).cloned())
            .collect()
    }

    /// The names of the applications in the copy (upper case, sorted), every status counted.
    pub(crate) fn applications(&self) -> Vec<String> {
        self.apps.keys().cloned().collect()
    }

    /// Shuffles every application's offered instances anew, as Java does at each fetch.
    pub(crate) fn reshuffle(&mut self) {
        let names: Vec<String> = self.apps.keys().cloned().collect();
        self.offered.clear();
        for name in names {
            self.reshuffle_app(&name);
        }
    }

    /// Recomputes and shuffles one application's offered instances.
    fn reshuffle_app(&mut self, name: &str) {
        let every_status = self.every_status;
        let mut offered: Vec<Instance> = self
            .apps
            .get(name)
            .into_iter()
            .flat_map(BTreeMap::values)
            .filter(|instance| every_status || instance.status == InstanceStatus::Up)
            .cloned()
            .collect();
        if offered.is_empty() {
            self.offered.remove(name);
        } else {
            fastrand::shuffle(&mut offered);
            self.offered.insert(name.to_owned(), offered);
        }
    }
}

#[cfg(test)]
mod tests {
    use heureka_core::Application;

    use super::*;

    fn instance(
        app: &str,
        id: &str,
        status: InstanceStatus,
        action: Option<ActionType>,
    ) -> Instance {
        let mut instance = Instance::new(app, id, "host", "10.0.0.1", 0);
        instance.status = status;
        instance.action_type = action;
        instance
    }

    fn document(instances: Vec<Instance>, hashcode: &str) -> Applications {
        let mut by_app: BTreeMap<String, Vec<Instance>> = BTreeMap::new();
        for instance in instances {
            by_app
                .entry(instance.app.clone())
                .or_default()
                .push(instance);
        }
        Applications {
            versions_delta: 1,
            apps_hashcode: hashcode.to_owned(),
            applications: by_app
                .into_iter()
                .map(|(name, instances)| Application { name, instances })
                .collect(),
        }
    }

    fn ids(instances: &[Instance]) -> Vec<String> {
        let mut ids: Vec<String> = instances.iter().map(|i| i.id().to_owned()).collect();
        ids.sort();
        ids
    }

    #[test]
    fn only_up_instances_are_offered() {
        let mut local = LocalRegistry::default();
        local.replace(document(
            vec![
                instance("ORDERS", "a", InstanceStatus::Up, None),
                instance("ORDERS", "b", InstanceStatus::Down, None),
                instance("ORDERS", "c", InstanceStatus::OutOfService, None),
            ],
            "",
        ));
        assert_eq!(ids(&local.instances("orders")), ["a"]);
    }

    #[test]
    fn without_the_up_filter_every_status_is_offered() {
        let mut local = LocalRegistry::new(false);
        local.replace(document(
            vec![
                instance("ORDERS", "a", InstanceStatus::Up, None),
                instance("ORDERS", "b", InstanceStatus::Down, None),
                instance("ORDERS", "c", InstanceStatus::OutOfService, None),
            ],
            "",
        ));
        assert_eq!(ids(&local.instances("orders")), ["a", "b", "c"]);
    }

    #[test]
    fn every_instance_and_application_can_be_looked_at_whatever_the_filter() {
        let mut local = LocalRegistry::new(true);
        local.replace(document(
            vec![
                instance("ORDERS", "a", InstanceStatus::Up, None),
                instance("ORDERS", "b", InstanceStatus::Down, None),
                instance("USERS", "b", InstanceStatus::Starting, None),
            ],
            "",
        ));
        assert_eq!(local.applications(), ["ORDERS", "USERS"]);
        assert_eq!(ids(&local.all_instances("orders")), ["a", "b"]);
        let by_id: Vec<String> = local
            .instances_by_id("b")
            .into_iter()
            .map(|i| i.app)
            .collect();
        assert_eq!(by_id, ["ORDERS", "USERS"]);
    }

    #[test]
    fn a_delta_upserts_modified_and_removes_deleted_instances() {
        let mut local = LocalRegistry::default();
        local.replace(document(
            vec![
                instance("ORDERS", "a", InstanceStatus::Up, None),
                instance("ORDERS", "b", InstanceStatus::Up, None),
                instance("USERS", "u", InstanceStatus::Up, None),
            ],
            "",
        ));
        let delta = document(
            vec![
                instance(
                    "ORDERS",
                    "a",
                    InstanceStatus::Down,
                    Some(ActionType::Modified),
                ),
                instance("ORDERS", "c", InstanceStatus::Up, Some(ActionType::Added)),
                instance("USERS", "u", InstanceStatus::Up, Some(ActionType::Deleted)),
            ],
            "DOWN_1_UP_2_",
        );
        let (consistent, changed) = local.apply_delta(delta);
        assert!(consistent);
        assert_eq!(changed, ["ORDERS", "USERS"]);
        assert_eq!(ids(&local.instances("ORDERS")), ["b", "c"]);
        assert!(local.instances("USERS").is_empty());
        assert_eq!(local.hashcode(), "DOWN_1_UP_2_");
    }

    #[test]
    fn a_delta_whose_hash_differs_asks_for_a_full_fetch() {
        let mut local = LocalRegistry::default();
        local.replace(document(
            vec![instance("ORDERS", "a", InstanceStatus::Up, None)],
            "",
        ));
        // The server holds an instance this copy never saw, so the hashes disagree.
        let delta = document(
            vec![instance(
                "ORDERS",
                "b",
                InstanceStatus::Up,
                Some(ActionType::Added),
            )],
            "UP_3_",
        );
        assert!(!local.apply_delta(delta).0);
    }

    #[test]
    fn a_delta_leaves_the_applications_it_does_not_name_in_their_order() {
        let mut local = LocalRegistry::default();
        let users = (0..20).map(|n| instance("USERS", &format!("u{n}"), InstanceStatus::Up, None));
        local.replace(document(users.collect(), ""));
        let before = local.instances("USERS");
        let added = instance("ORDERS", "o1", InstanceStatus::Up, Some(ActionType::Added));
        local.apply_delta(document(vec![added], ""));
        assert_eq!(local.instances("USERS"), before);
        assert_eq!(ids(&local.instances("ORDERS")), ["o1"]);
    }

    #[test]
    fn a_full_fetch_names_the_applications_that_changed() {
        let mut local = LocalRegistry::default();
        local.replace(document(
            vec![
                instance("ORDERS", "a", InstanceStatus::Up, None),
                instance("USERS", "u", InstanceStatus::Up, None),
                instance("GONE", "g", InstanceStatus::Up, None),
            ],
            "",
        ));
        let changed = local.replace(document(
            vec![
                instance("ORDERS", "a", InstanceStatus::Up, None),
                instance("USERS", "u", InstanceStatus::Down, None),
                instance("NEW", "n", InstanceStatus::Up, None),
            ],
            "",
        ));
        assert_eq!(changed, ["GONE", "NEW", "USERS"]);
    }
}
