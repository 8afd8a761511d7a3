//! The registry as a watcher last saw it, and what changed between two such copies: shared by
//! the polling watch (`poll.rs`) and the push watch (`push.rs`), so both print a change once,
//! the same way, whatever brought it.

use std::collections::BTreeMap;

use heureka_core::{ActionType, Applications, Instance, LeaseInfo, Millis};

use super::change::{Action, Change};

/// The registry as the watcher last saw it, by (application, instance id).
pub(super) type Copy = BTreeMap<(String, String), Instance>;

/// A full document replaces nothing by itself: applied to an empty copy it is the copy. A
/// delta's `DELETED` items remove, every other item upserts.
pub(super) fn apply(copy: &mut Copy, document: &Applications) {
    for app in &document.applications {
        for instance in &app.instances {
            let key = (app.name.clone(), instance.id().to_owned());
            if instance.action_type == Some(ActionType::Deleted) {
                copy.remove(&key);
            } else {
                copy.insert(key, instance.clone());
            }
        }
    }
}

/// `apps__hashcode` of the copy, as a Eureka client computes it to check a delta.
pub(super) fn hashcode(copy: &Copy) -> String {
    heureka_core::apps_hashcode(copy.values().map(|instance| &instance.status))
}

/// What changed from `before` to `after`: new instances, gone ones, and ones whose data
/// differs. The lease's timestamps (every heartbeat moves them), the delta's action type and
/// the server's last-updated time do not count, so a heartbeat is not a change.
pub(super) fn changes(before: &Copy, after: &Copy, now: Millis) -> Vec<Change> {
    let change = |action, (app, id): &(String, String), instance: &Instance| Change {
        at: now,
        action,
        app: app.clone(),
        id: id.clone(),
        status: instance.status,
        overridden_status: instance.overridden_status,
        event: None,
    };
    let mut changes = Vec::new();
    for (key, instance) in after {
        match before.get(key) {
            None => changes.push(change(Action::Added, key, instance)),
            Some(old) if comparable(old) != comparable(instance) => {
                changes.push(change(Action::Modified, key, instance));
            }
            Some(_) => {}
        }
    }
    for (key, instance) in before {
        if !after.contains_key(key) {
            changes.push(change(Action::Deleted, key, instance));
        }
    }
    changes
}

fn comparable(instance: &Instance) -> Instance {
    Instance {
        lease_info: LeaseInfo::default(),
        action_type: None,
        last_updated_timestamp: 0,
        ..instance.clone()
    }
}

#[cfg(test)]
mod tests {
    use heureka_core::{Application, InstanceStatus};

    use super::*;

    fn instance(app: &str, id: &str, status: InstanceStatus) -> Instance {
        let mut instance = Instance::new(app, id, "host", "10.0.0.1", 5);
        instance.status = status;
        instance
    }

    fn document(instances: Vec<Instance>) -> Applications {
        let mut apps: Vec<Application> = Vec::new();
        for instance in instances {
            match apps.iter_mut().find(|app| app.name == instance.app) {
                Some(app) => app.instances.push(instance),
                None => apps.push(Application {
                    name: instance.app.clone(),
                    instances: vec![instance],
                }),
            }
        }
        let statuses: Vec<InstanceStatus> = apps
            .iter()
            .flat_map(|app| app.instances.iter().map(|i| i.status))
            .collect();
        Applications {
            versions_delta: 1,
            apps_hashcode: heureka_core::apps_hashcode(&statuses),
            applications: apps,
        }
    }

    fn actions(changes: &[Change]) -> Vec<(Action, &str, InstanceStatus)> {
        changes
            .iter()
            .map(|c| (c.action, c.id.as_str(), c.status))
            .collect()
    }

    #[test]
    fn a_delta_adds_modifies_and_deletes_and_its_hash_checks_the_result() {
        let mut copy = Copy::new();
        apply(
            &mut copy,
            &document(vec![
                instance("A", "a1", InstanceStatus::Up),
                instance("A", "a2", InstanceStatus::Up),
            ]),
        );
        let mut gone = instance("A", "a2", InstanceStatus::Up);
        gone.action_type = Some(ActionType::Deleted);
        let mut delta = document(vec![instance("B", "b1", InstanceStatus::Down), gone]);
        delta.apps_hashcode = "DOWN_1_UP_1_".to_owned();
        let before = copy.clone();
        apply(&mut copy, &delta);
        assert_eq!(hashcode(&copy), delta.apps_hashcode);
        assert_eq!(
            actions(&changes(&before, &copy, 0)),
            [
                (Action::Added, "b1", InstanceStatus::Down),
                (Action::Deleted, "a2", InstanceStatus::Up),
            ]
        );
    }

    #[test]
    fn the_same_delta_twice_prints_nothing_the_second_time() {
        let mut copy = Copy::new();
        let delta = document(vec![instance("A", "a1", InstanceStatus::Up)]);
        apply(&mut copy, &delta);
        let before = copy.clone();
        apply(&mut copy, &delta);
        assert!(changes(&before, &copy, 0).is_empty());
    }

    #[test]
    fn a_heartbeat_is_not_a_change_but_an_override_is() {
        let mut before = Copy::new();
        apply(
            &mut before,
            &document(vec![instance("A", "a1", InstanceStatus::Up)]),
        );
        let mut renewed = instance("A", "a1", InstanceStatus::Up);
        renewed.lease_info.last_renewal_timestamp = 99;
        renewed.last_updated_timestamp = 99;
        renewed.action_type = Some(ActionType::Modified);
        let mut after = Copy::new();
        apply(&mut after, &document(vec![renewed.clone()]));
        assert!(changes(&before, &after, 0).is_empty());

        renewed.status = InstanceStatus::OutOfService;
        renewed.overridden_status = InstanceStatus::OutOfService;
        apply(&mut after, &document(vec![renewed]));
        assert_eq!(
            actions(&changes(&before, &after, 0)),
            [(Action::Modified, "a1", InstanceStatus::OutOfService)]
        );
    }
}
