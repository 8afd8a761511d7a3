//! Merging the local registry with regions: replacement by id, whitelists, the delta's hashcode, single-read fallbacks, VIPs.

use std::sync::Arc;

use heureka_core::{ActionType, Application, Applications, Instance, InstanceStatus};

use super::*;
use crate::regions::region::{Published, RegionState};

fn member(app: &str, id: &str) -> Instance {
    Instance::new(app, id, "h", "10.0.0.1", 1)
}

fn document(instances: Vec<Instance>) -> Applications {
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
        apps_hashcode: String::new(),
        applications,
    }
}

fn settings(name: &str, whitelist: Option<&[&str]>) -> RegionSettings {
    RegionSettings {
        name: name.to_owned(),
        url: format!("http://{name}/eureka/"),
        authorization: None,
        whitelist: whitelist.map(|apps| apps.iter().map(|a| a.to_string()).collect()),
    }
}

fn published(instances: Vec<Instance>) -> Arc<Published> {
    let mut state = RegionState::new(600_000, 180_000);
    state.full_fetched(&document(instances), 0);
    Arc::new(state.published())
}

fn ids(document: &Applications) -> Vec<(String, String)> {
    document
        .applications
        .iter()
        .flat_map(|a| {
            a.instances
                .iter()
                .map(|i| (a.name.clone(), i.id().to_owned()))
        })
        .collect()
}

#[test]
fn a_full_document_adds_each_regions_instances_to_the_application_of_the_same_name() {
    let west = settings("west", None);
    let chosen = [Chosen {
        settings: &west,
        published: published(vec![member("A", "w1"), member("B", "w2")]),
    }];
    let mut down = member("A", "l1");
    down.status = InstanceStatus::Down;
    let merged = full(document(vec![down]), &chosen);
    assert_eq!(
        ids(&merged),
        [
            ("A".to_owned(), "l1".to_owned()),
            ("A".to_owned(), "w1".to_owned()),
            ("B".to_owned(), "w2".to_owned())
        ]
    );
    assert_eq!(merged.apps_hashcode, "DOWN_1_UP_2_");
    assert_eq!(merged.versions_delta, 1);
}

#[test]
fn a_remote_instance_with_a_local_id_replaces_it() {
    let west = settings("west", None);
    let mut remote = member("A", "same");
    remote.status = InstanceStatus::OutOfService;
    let chosen = [Chosen {
        settings: &west,
        published: published(vec![remote]),
    }];
    let merged = full(document(vec![member("A", "same")]), &chosen);
    assert_eq!(merged.applications[0].instances.len(), 1);
    assert_eq!(merged.apps_hashcode, "OUT_OF_SERVICE_1_");
}

#[test]
fn the_whitelist_keeps_other_applications_out_case_insensitively() {
    let west = settings("west", Some(&["orders"]));
    let chosen = [Chosen {
        settings: &west,
        published: published(vec![member("ORDERS", "o1"), member("B", "b1")]),
    }];
    let merged = full(document(vec![]), &chosen);
    assert_eq!(ids(&merged), [("ORDERS".to_owned(), "o1".to_owned())]);
}

#[test]
fn a_delta_carries_the_regions_changes_and_the_full_documents_hashcode() {
    let west = settings("west", None);
    let chosen = [Chosen {
        settings: &west,
        published: published(vec![member("B", "w1")]),
    }];
    let merged = delta(document(vec![]), "UP_2_".to_owned(), &chosen, 7);
    assert_eq!(ids(&merged), [("B".to_owned(), "w1".to_owned())]);
    assert_eq!(
        merged.applications[0].instances[0].action_type,
        Some(ActionType::Added)
    );
    assert_eq!(merged.apps_hashcode, "UP_2_");
    assert_eq!(merged.versions_delta, 7);
}

/// [`hashcode`] over a local document as the registry would give it: its counts, and each
/// instance's status by application and id.
fn counted(local: &Applications, regions: &[Chosen<'_>]) -> String {
    let instances: Vec<&Instance> = local
        .applications
        .iter()
        .flat_map(|a| a.instances.iter())
        .collect();
    let mut counts: Vec<(InstanceStatus, usize)> = Vec::new();
    for instance in &instances {
        match counts
            .iter_mut()
            .find(|(status, _)| *status == instance.status)
        {
            Some((_, count)) => *count += 1,
            None => counts.push((instance.status, 1)),
        }
    }
    let status_of = |app: &str, id: &str| {
        instances
            .iter()
            .find(|i| i.app == app && i.id() == id)
            .map(|i| i.status)
    };
    hashcode(&counts, status_of, regions)
}

#[test]
fn the_counted_hashcode_is_the_full_documents_when_ids_repeat_across_regions_and_locally() {
    let (west, east) = (settings("west", None), settings("east", Some(&["A"])));
    let mut out_west = member("A", "same");
    out_west.status = InstanceStatus::OutOfService;
    let mut down_east = member("A", "same");
    down_east.status = InstanceStatus::Down;
    let chosen = [
        Chosen {
            settings: &west,
            published: published(vec![out_west, member("A", "w1"), member("B", "w2")]),
        },
        Chosen {
            settings: &east,
            published: published(vec![down_east, member("B", "e-hidden")]),
        },
    ];
    let local = document(vec![member("A", "same"), member("C", "l1")]);
    let expected = full(local.clone(), &chosen).apps_hashcode;
    assert_eq!(expected, "DOWN_1_UP_3_");
    assert_eq!(counted(&local, &chosen), expected);
}

#[test]
fn single_reads_fall_back_to_the_first_region_with_the_application() {
    let (first, second) = (settings("first", None), settings("second", None));
    let chosen = [
        Chosen {
            settings: &first,
            published: published(vec![member("A", "f1")]),
        },
        Chosen {
            settings: &second,
            published: published(vec![member("A", "s1"), member("B", "s2")]),
        },
    ];
    assert_eq!(application("a", &chosen).unwrap().instances[0].id(), "f1");
    assert!(
        instance("A", "s1", &chosen).is_none(),
        "the first region with A decides"
    );
    assert_eq!(instance("B", "s2", &chosen).unwrap().id(), "s2");
    assert_eq!(instance_by_id("s1", &chosen).unwrap().id(), "s1");
}

#[test]
fn a_vip_read_includes_the_regions_instances_of_that_vip() {
    let west = settings("west", None);
    let mut on_vip = member("A", "w1");
    on_vip.vip_address = Some("orders,other".to_owned());
    let chosen = [Chosen {
        settings: &west,
        published: published(vec![on_vip, member("A", "w2")]),
    }];
    let merged = vip(document(vec![]), "orders", false, &chosen);
    assert_eq!(ids(&merged), [("A".to_owned(), "w1".to_owned())]);
    assert_eq!(merged.versions_delta, -1);
}
