//! A region's held view: full documents, deltas with the hashcode check, differences.

use heureka_core::{ActionType, Application, Applications, Instance, InstanceStatus};

use super::*;

fn instance(app: &str, id: &str, status: InstanceStatus) -> Instance {
    let mut instance = Instance::new(app, id, "h", "10.0.0.1", 1);
    instance.status = status;
    instance
}

fn document(instances: Vec<Instance>, hashcode: &str) -> Applications {
    let mut applications: Vec<Application> = Vec::new();
    for instance in instances {
        match applications.iter_mut().find(|a| a.name == instance.app) {
            Some(application) => application.instances.push(instance),
            None => applications.push(Application {
                name: instance.app.clone(),
                instances: vec![instance],
            }),
        }
    }
    Applications {
        versions_delta: 1,
        apps_hashcode: hashcode.to_owned(),
        applications,
    }
}

fn with_action(mut instance: Instance, action: ActionType) -> Instance {
    instance.action_type = Some(action);
    instance
}

#[test]
fn a_full_document_is_held_by_application_and_id() {
    let view = View::from_document(&document(
        vec![
            instance("A", "a1", InstanceStatus::Up),
            instance("A", "a2", InstanceStatus::Down),
            instance("B", "b1", InstanceStatus::Up),
        ],
        "",
    ));
    assert_eq!(view.application_count(), 2);
    assert_eq!(view.instance_count(), 3);
    assert_eq!(view.hashcode(), "DOWN_1_UP_2_");
    assert!(view.instance("a", "a2").is_some());
}

#[test]
fn a_delta_puts_and_removes_and_its_hashcode_is_checked_against_the_whole_view() {
    let mut view = View::from_document(&document(
        vec![
            instance("A", "a1", InstanceStatus::Up),
            instance("A", "a2", InstanceStatus::Up),
        ],
        "",
    ));
    let delta = document(
        vec![
            with_action(instance("A", "a1", InstanceStatus::Up), ActionType::Deleted),
            with_action(instance("B", "b1", InstanceStatus::Down), ActionType::Added),
        ],
        "DOWN_1_UP_1_",
    );
    assert!(view.apply_delta(&delta));
    assert!(view.instance("A", "a1").is_none());
    assert_eq!(
        view.instance("B", "b1").unwrap().action_type,
        Some(ActionType::Added),
        "held as fetched"
    );
}

#[test]
fn a_delta_whose_hashcode_disagrees_is_reported() {
    let mut view =
        View::from_document(&document(vec![instance("A", "a1", InstanceStatus::Up)], ""));
    let delta = document(
        vec![with_action(
            instance("A", "a2", InstanceStatus::Up),
            ActionType::Added,
        )],
        "UP_3_",
    );
    assert!(!view.apply_delta(&delta));
}

#[test]
fn differences_name_added_modified_and_deleted_instances() {
    let before = View::from_document(&document(
        vec![
            instance("A", "a1", InstanceStatus::Up),
            instance("A", "a2", InstanceStatus::Up),
        ],
        "",
    ));
    let after = View::from_document(&document(
        vec![
            instance("A", "a1", InstanceStatus::Down),
            instance("C", "c1", InstanceStatus::Up),
        ],
        "",
    ));
    let found: Vec<(ActionType, String)> = before
        .differences(&after)
        .into_iter()
        .map(|d| (d.action, d.instance.id().to_owned()))
        .collect();
    assert_eq!(
        found,
        vec![
            (ActionType::Modified, "a1".to_owned()),
            (ActionType::Deleted, "a2".to_owned()),
            (ActionType::Added, "c1".to_owned()),
        ]
    );
    assert!(after.differences(&after).is_empty());
}
