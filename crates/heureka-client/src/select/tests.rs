//! The selector's rules: filters, zone preference and each strategy's choices, on made-up
//! instance lists.

use std::collections::HashMap;

use heureka_core::{Instance, InstanceStatus};

use super::{weight, InstanceSource, Selector, Strategy};
use crate::config::ClientConfig;
use crate::regions::InstanceRegionChecker;

fn instance(app: &str, id: &str, metadata: &[(&str, &str)]) -> Instance {
    let mut instance = Instance::new(app, id, id, "10.0.0.1", 0);
    instance.metadata = metadata
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect();
    instance
}

fn orders(ids: &[&str]) -> Vec<Instance> {
    ids.iter().map(|id| instance("ORDERS", id, &[])).collect()
}

/// How often each instance id is picked in `picks` choices.
fn counts(selector: &Selector, instances: &[Instance], picks: usize) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for _ in 0..picks {
        let chosen = selector.choose(instances).expect("a candidate");
        *counts.entry(chosen.id().to_owned()).or_default() += 1;
    }
    counts
}

fn picks(selector: &Selector, instances: &[Instance], n: usize) -> Vec<String> {
    (0..n)
        .map(|_| selector.choose(instances).unwrap().id().to_owned())
        .collect()
}

#[test]
fn round_robin_cycles_through_the_instances_in_id_order() {
    let selector = Selector::new(Strategy::RoundRobin);
    // The source's order does not matter: the Eureka client shuffles on every fetch.
    let instances = orders(&["c", "a", "b"]);
    let chosen = picks(&selector, &instances, 6);

    let start = ["a", "b", "c"]
        .iter()
        .position(|id| *id == chosen[0])
        .unwrap();
    let expected: Vec<&str> = (0..6)
        .map(|turn| ["a", "b", "c"][(start + turn) % 3])
        .collect();
    assert_eq!(chosen, expected);
}

#[test]
fn round_robin_keeps_one_position_per_application() {
    let selector = Selector::new(Strategy::RoundRobin).seed(7);
    let orders = orders(&["a", "b"]);
    let billing: Vec<Instance> = ["x", "y"]
        .iter()
        .map(|id| instance("BILLING", id, &[]))
        .collect();

    let first_order = selector.choose(&orders).unwrap().id().to_owned();
    // Picks of another application do not move ORDERS' turn.
    for _ in 0..3 {
        selector.choose(&billing).unwrap();
    }
    let second_order = selector.choose(&orders).unwrap().id().to_owned();
    assert_ne!(first_order, second_order);
}

#[test]
fn random_picks_every_instance_and_only_candidates() {
    let selector = Selector::new(Strategy::Random).seed(1);
    let counts = counts(&selector, &orders(&["a", "b", "c"]), 3_000);
    assert_eq!(counts.len(), 3);
    // Uniform: each near 1,000; the bound is loose, the seed fixes the outcome.
    assert!(
        counts.values().all(|&n| (800..1_200).contains(&n)),
        "{counts:?}"
    );
}

#[test]
fn a_seed_reproduces_the_random_picks() {
    let instances = orders(&["a", "b", "c", "d"]);
    let first = picks(&Selector::new(Strategy::Random).seed(42), &instances, 20);
    let second = picks(&Selector::new(Strategy::Random).seed(42), &instances, 20);
    assert_eq!(first, second);
}

#[test]
fn weighted_picks_in_proportion_to_the_weight_metadata() {
    let selector = Selector::new(Strategy::Weighted).seed(3);
    let instances = vec![
        instance("ORDERS", "heavy", &[("weight", "3")]),
        instance("ORDERS", "light", &[("weight", "1")]),
    ];
    let counts = counts(&selector, &instances, 4_000);
    // Expected 3,000 and 1,000.
    assert!((2_800..3_200).contains(&counts["heavy"]), "{counts:?}");
    assert!((800..1_200).contains(&counts["light"]), "{counts:?}");
}

#[test]
fn a_missing_malformed_or_zero_weight_counts_as_one() {
    assert_eq!(weight(&instance("A", "a", &[])), 1);
    assert_eq!(weight(&instance("A", "a", &[("weight", "heavy")])), 1);
    assert_eq!(weight(&instance("A", "a", &[("weight", "0")])), 1);
    assert_eq!(weight(&instance("A", "a", &[("weight", "-2")])), 1);
    assert_eq!(weight(&instance("A", "a", &[("weight", " 5 ")])), 5);
}

#[test]
fn only_up_instances_are_chosen_by_default() {
    let mut instances = orders(&["down", "up", "starting"]);
    instances[0].status = InstanceStatus::Down;
    instances[2].status = InstanceStatus::Starting;
    let selector = Selector::new(Strategy::Random);
    assert_eq!(
        counts(&selector, &instances, 50).keys().collect::<Vec<_>>(),
        ["up"]
    );

    let any = Selector::new(Strategy::RoundRobin).any_status();
    assert_eq!(counts(&any, &instances, 30).len(), 3);
}

#[test]
fn a_metadata_requirement_keeps_only_matching_instances() {
    let instances = vec![
        instance("ORDERS", "stable-1", &[("version", "stable")]),
        instance("ORDERS", "canary-1", &[("version", "canary")]),
        instance("ORDERS", "bare", &[]),
    ];
    let selector = Selector::new(Strategy::RoundRobin).require_metadata("version", "canary");
    assert_eq!(
        counts(&selector, &instances, 10).keys().collect::<Vec<_>>(),
        ["canary-1"]
    );
}

#[test]
fn every_metadata_requirement_must_hold() {
    let instances = vec![
        instance("ORDERS", "a", &[("version", "canary"), ("region", "eu")]),
        instance("ORDERS", "b", &[("version", "canary"), ("region", "us")]),
    ];
    let selector = Selector::new(Strategy::Random)
        .require_metadata("version", "canary")
        .require_metadata("region", "us");
    assert_eq!(
        counts(&selector, &instances, 10).keys().collect::<Vec<_>>(),
        ["b"]
    );
}

#[test]
fn no_instance_passing_the_filters_chooses_none() {
    let selector = Selector::new(Strategy::RoundRobin).require_metadata("version", "canary");
    assert!(selector.choose(&orders(&["a", "b"])).is_none());
    assert!(selector.choose(&[]).is_none());
    assert!(Selector::new(Strategy::Weighted).choose(&[]).is_none());
}

#[test]
fn a_predicate_filters_like_metadata() {
    let selector = Selector::new(Strategy::Random).filter(|instance| instance.id().ends_with('2'));
    assert_eq!(
        counts(&selector, &orders(&["o1", "o2"]), 10)
            .keys()
            .collect::<Vec<_>>(),
        ["o2"]
    );
}

#[test]
fn the_callers_zone_is_preferred_ignoring_case() {
    let instances = vec![
        instance("ORDERS", "a1", &[("zone", "zone-a")]),
        instance("ORDERS", "a2", &[("zone", "ZONE-A")]),
        instance("ORDERS", "b1", &[("zone", "zone-b")]),
        instance("ORDERS", "none", &[]),
    ];
    let selector = Selector::new(Strategy::RoundRobin).prefer_zone("Zone-A");
    let mut chosen: Vec<String> = counts(&selector, &instances, 20).into_keys().collect();
    chosen.sort();
    assert_eq!(chosen, ["a1", "a2"]);
}

#[test]
fn without_a_candidate_in_the_zone_every_candidate_is_eligible() {
    let mut instances = vec![
        instance("ORDERS", "a1", &[("zone", "zone-a")]),
        instance("ORDERS", "b1", &[("zone", "zone-b")]),
        instance("ORDERS", "c1", &[]),
    ];
    // The zone's only instance is down, so it is filtered out before zone preference applies.
    instances[0].status = InstanceStatus::Down;
    let selector = Selector::new(Strategy::RoundRobin).prefer_zone("zone-a");
    let mut chosen: Vec<String> = counts(&selector, &instances, 20).into_keys().collect();
    chosen.sort();
    assert_eq!(chosen, ["b1", "c1"]);
}

#[test]
fn filters_apply_before_zone_preference() {
    // The zone holds only a stable instance; the canary requirement wins over the zone.
    let instances = vec![
        instance(
            "ORDERS",
            "a-stable",
            &[("zone", "zone-a"), ("version", "stable")],
        ),
        instance(
            "ORDERS",
            "b-canary",
            &[("zone", "zone-b"), ("version", "canary")],
        ),
    ];
    let selector = Selector::new(Strategy::RoundRobin)
        .prefer_zone("zone-a")
        .require_metadata("version", "canary");
    assert_eq!(selector.choose(&instances).unwrap().id(), "b-canary");
}

/// A client in `us-east-1` fetching `eu-west` (zone `dublin-1`), then `ap-south` (`mumbai-1`).
fn two_remote_regions() -> InstanceRegionChecker {
    let mut config = ClientConfig::new(Vec::new(), "billing", "b1", "h", "10.0.0.1", 8080);
    config.fetch_remote_regions_registry = vec!["eu-west".to_owned(), "ap-south".to_owned()];
    config
        .availability_zones
        .insert("eu-west".to_owned(), vec!["dublin-1".to_owned()]);
    config
        .availability_zones
        .insert("ap-south".to_owned(), vec!["mumbai-1".to_owned()]);
    InstanceRegionChecker::new(&config)
}

#[test]
fn the_own_zone_then_the_own_region_then_remote_regions_in_order() {
    let mut instances = vec![
        instance("ORDERS", "own-zone", &[("zone", "us-east-1a")]),
        instance("ORDERS", "own-region", &[("zone", "us-east-1b")]),
        instance("ORDERS", "mumbai", &[("zone", "mumbai-1")]),
        instance("ORDERS", "dublin", &[("zone", "dublin-1")]),
    ];
    let selector = Selector::new(Strategy::RoundRobin)
        .prefer_regions(two_remote_regions())
        .prefer_zone("us-east-1a");
    let mut order = Vec::new();
    for _ in 0..4 {
        let chosen = selector.choose(&instances).unwrap().id().to_owned();
        instances.retain(|instance| instance.id() != chosen);
        order.push(chosen);
    }
    assert_eq!(order, ["own-zone", "own-region", "dublin", "mumbai"]);
}

#[test]
fn a_remote_instance_is_chosen_only_when_no_local_one_is_up() {
    let mut instances = vec![
        instance("ORDERS", "local", &[("zone", "us-east-1b")]),
        instance("ORDERS", "dublin", &[("zone", "dublin-1")]),
    ];
    let selector = Selector::new(Strategy::Random).prefer_regions(two_remote_regions());
    assert!(counts(&selector, &instances, 50).keys().eq(["local"]));
    instances[0].status = InstanceStatus::Down;
    assert_eq!(selector.choose(&instances).unwrap().id(), "dublin");
}

#[test]
fn zone_preference_composes_with_weights() {
    let instances = vec![
        instance("ORDERS", "a-heavy", &[("zone", "zone-a"), ("weight", "9")]),
        instance("ORDERS", "a-light", &[("zone", "zone-a"), ("weight", "1")]),
        instance("ORDERS", "b", &[("zone", "zone-b"), ("weight", "100")]),
    ];
    let selector = Selector::new(Strategy::Weighted)
        .seed(5)
        .prefer_zone("zone-a");
    let counts = counts(&selector, &instances, 1_000);
    assert!(!counts.contains_key("b"), "{counts:?}");
    assert!((850..950).contains(&counts["a-heavy"]), "{counts:?}");
}

#[test]
fn an_excluded_instance_is_not_chosen_and_the_zone_falls_back() {
    let instances = vec![
        instance("ORDERS", "a1", &[("zone", "zone-a")]),
        instance("ORDERS", "b1", &[("zone", "zone-b")]),
    ];
    let selector = Selector::new(Strategy::RoundRobin).prefer_zone("zone-a");
    for _ in 0..4 {
        assert_eq!(
            selector.choose_excluding(&instances, &["a1"]).unwrap().id(),
            "b1"
        );
    }
    assert!(selector
        .choose_excluding(&instances, &["a1", "b1"])
        .is_none());
}

#[test]
fn a_retry_does_not_take_a_turn_so_a_dead_instance_is_tried_first_only_on_its_turns() {
    // "a" is dead: a call picking it first retries on "b". Had the retry moved the position
    // too, every following call would start at "a" again.
    let instances = orders(&["a", "b"]);
    let selector = Selector::new(Strategy::RoundRobin);
    let mut started_at_the_dead_one = 0;
    for _ in 0..6 {
        if selector.choose(&instances).unwrap().id() == "a" {
            started_at_the_dead_one += 1;
            assert_eq!(selector.choose_retry(&instances, &["a"]).unwrap().id(), "b");
        }
    }
    assert_eq!(started_at_the_dead_one, 3);
}

#[test]
fn retries_keep_the_rotation_over_the_live_instances_even() {
    // One dead instance among three: the calls the two live ones serve stay equal.
    let instances = orders(&["a", "b", "c"]);
    let selector = Selector::new(Strategy::RoundRobin);
    let mut served: HashMap<String, usize> = HashMap::new();
    for _ in 0..30 {
        let mut chosen = selector.choose(&instances).unwrap();
        if chosen.id() == "a" {
            chosen = selector.choose_retry(&instances, &["a"]).unwrap();
        }
        *served.entry(chosen.id().to_owned()).or_default() += 1;
    }
    assert_eq!(served["b"], 15, "{served:?}");
    assert_eq!(served["c"], 15, "{served:?}");
}

#[test]
fn a_list_serves_the_instances_of_the_app_asked_for_in_any_case() {
    let list = vec![
        instance("ORDERS", "o1", &[]),
        instance("BILLING", "b1", &[]),
        instance("ORDERS", "o2", &[]),
    ];
    let ids: Vec<String> = list
        .instances("orders")
        .iter()
        .map(|instance| instance.id().to_owned())
        .collect();
    assert_eq!(ids, ["o1", "o2"]);
    assert!(list.instances("shipping").is_empty());
}

#[test]
fn concurrent_round_robin_picks_never_take_the_same_turn() {
    let selector = Selector::new(Strategy::RoundRobin);
    let instances = orders(&["a", "b", "c", "d"]);
    let all: Vec<String> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| picks(&selector, &instances, 250)))
            .collect();
        threads
            .into_iter()
            .flat_map(|thread| thread.join().unwrap())
            .collect()
    });
    // 1,000 consecutive turns over four instances: exactly 250 each, however they interleave.
    let mut counts: HashMap<String, usize> = HashMap::new();
    for id in all {
        *counts.entry(id).or_default() += 1;
    }
    assert!(counts.values().all(|&n| n == 250), "{counts:?}");
}
