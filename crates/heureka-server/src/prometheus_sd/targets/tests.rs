//! The targets an answer holds: one group per instance, filtered, with the prometheus.io
//! conventions applied.

use heureka_core::Port;

use super::*;

fn instance(app: &str, id: &str, port: u32, metadata: &[(&str, &str)]) -> Instance {
    let mut instance = Instance::new(app, id, &format!("{id}.local"), "10.0.0.1", 0);
    instance.port = Port {
        number: port,
        enabled: true,
    };
    for (key, value) in metadata {
        instance.metadata.insert(key.to_string(), value.to_string());
    }
    instance
}

fn registry() -> Vec<Application> {
    vec![
        Application {
            name: "BILLING".to_owned(),
            instances: vec![instance("BILLING", "b1", 8081, &[])],
        },
        Application {
            name: "ORDERS".to_owned(),
            instances: vec![
                instance("ORDERS", "o1", 8080, &[("prometheus.io/scrape", "true")]),
                instance("ORDERS", "o2", 8080, &[("zone", "eu-1")]),
            ],
        },
    ]
}

fn answer(query: &str) -> Vec<TargetGroup> {
    let query = SdQuery::parse(form_urlencoded::parse(query.as_bytes())).unwrap();
    target_groups(&registry(), &query)
}

fn targets(groups: &[TargetGroup]) -> Vec<&str> {
    groups
        .iter()
        .flat_map(|group| group.targets.iter().map(String::as_str))
        .collect()
}

#[test]
fn each_instance_is_its_own_group_at_its_host_and_port() {
    let groups = answer("");
    assert_eq!(
        targets(&groups),
        ["b1.local:8081", "o1.local:8080", "o2.local:8080"]
    );
    assert!(groups.iter().all(|group| group.targets.len() == 1));
    assert_eq!(groups[1].labels["__meta_eureka_app_name"], "ORDERS");
    assert_eq!(groups[1].labels["instance"], "o1");
}

#[test]
fn filters_narrow_the_answer() {
    assert_eq!(
        targets(&answer("app=orders")),
        ["o1.local:8080", "o2.local:8080"]
    );
    assert_eq!(targets(&answer("scrape=true")), ["o1.local:8080"]);
    assert_eq!(targets(&answer("metadata.zone=eu-1")), ["o2.local:8080"]);
    assert!(answer("app=STOCK").is_empty());
}

#[test]
fn the_prometheus_io_port_replaces_the_instances_port() {
    let with = |port: &str| {
        let instance = instance("A", "a1", 8080, &[("prometheus.io/port", port)]);
        target_group("A", &instance).targets
    };
    assert_eq!(with("9102"), ["a1.local:9102"]);
    assert_eq!(with(" 9102 "), ["a1.local:9102"]);
    for ignored in ["0", "70000", "http", ""] {
        assert_eq!(
            with(ignored),
            ["a1.local:8080"],
            "{ignored:?} is not a port"
        );
    }
}

#[test]
fn the_prometheus_io_path_and_scheme_set_prometheus_own_labels() {
    let instance = instance(
        "A",
        "a1",
        8080,
        &[
            ("prometheus.io/path", "/actuator/prometheus"),
            ("prometheus.io/scheme", "https"),
        ],
    );
    let labels = target_group("A", &instance).labels;
    assert_eq!(labels["__metrics_path__"], "/actuator/prometheus");
    assert_eq!(labels["__scheme__"], "https");
}

#[test]
fn a_path_or_scheme_prometheus_would_refuse_is_left_out() {
    let instance = instance(
        "A",
        "a1",
        8080,
        &[
            ("prometheus.io/path", "metrics"),
            ("prometheus.io/scheme", "ftp"),
        ],
    );
    let labels = target_group("A", &instance).labels;
    assert!(!labels.contains_key("__metrics_path__"));
    assert!(!labels.contains_key("__scheme__"));
}

#[test]
fn an_ipv6_host_is_bracketed() {
    let mut instance = instance("A", "a1", 8080, &[]);
    instance.host_name = "fd00::7".to_owned();
    assert_eq!(target_group("A", &instance).targets, ["[fd00::7]:8080"]);
}
