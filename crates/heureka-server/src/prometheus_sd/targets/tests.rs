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

/// The addresses answering `query`, and the first target's instance id.
fn answer(query: &str) -> (Vec<String>, Option<String>) {
    let query = SdQuery::parse(form_urlencoded::parse(query.as_bytes())).unwrap();
    let registry = registry();
    let answered = targets(&registry, &query);
    let first = answered.first().map(|t| t.instance.id().to_owned());
    (answered.into_iter().map(|t| t.address).collect(), first)
}

fn addresses(query: &str) -> Vec<String> {
    answer(query).0
}

#[test]
fn each_instance_is_a_target_at_its_host_and_port_in_registry_order() {
    let (addresses, first) = answer("");
    assert_eq!(
        addresses,
        ["b1.local:8081", "o1.local:8080", "o2.local:8080"]
    );
    assert_eq!(first.as_deref(), Some("b1"));
}

#[test]
fn only_up_instances_are_targets() {
    let mut applications = registry();
    applications[1].instances[0].status = InstanceStatus::OutOfService;
    applications[1].instances[1].status = InstanceStatus::Down;
    applications[0].instances[0].status = InstanceStatus::Starting;
    let query = SdQuery::default();
    assert!(targets(&applications, &query).is_empty());
    applications[0].instances[0].status = InstanceStatus::Up;
    assert_eq!(targets(&applications, &query).len(), 1);
}

#[test]
fn filters_narrow_the_answer() {
    assert_eq!(addresses("app=orders"), ["o1.local:8080", "o2.local:8080"]);
    assert_eq!(addresses("scrape=true"), ["o1.local:8080"]);
    assert_eq!(addresses("metadata.zone=eu-1"), ["o2.local:8080"]);
    assert!(addresses("app=STOCK").is_empty());
}

#[test]
fn the_prometheus_io_port_replaces_the_instances_port() {
    let with = |port: &str| {
        let instance = instance("A", "a1", 8080, &[("prometheus.io/port", port)]);
        target("A", &instance).address
    };
    assert_eq!(with("9102"), "a1.local:9102");
    assert_eq!(with(" 9102 "), "a1.local:9102");
    for ignored in ["0", "70000", "http", ""] {
        assert_eq!(with(ignored), "a1.local:8080", "{ignored:?} is not a port");
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
    let target = target("A", &instance);
    assert_eq!(target.metrics_path, Some("/actuator/prometheus"));
    assert_eq!(target.scheme, Some("https"));
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
    let target = target("A", &instance);
    assert_eq!((target.metrics_path, target.scheme), (None, None));
}

#[test]
fn an_ipv6_host_is_bracketed() {
    let mut instance = instance("A", "a1", 8080, &[]);
    instance.host_name = "fd00::7".to_owned();
    assert_eq!(target("A", &instance).address, "[fd00::7]:8080");
}
