//! The consumers table: who counts, what is kept, and its bounds.

use std::net::Ipv4Addr;

use super::*;

fn consumers(max: usize) -> Consumers {
    Consumers::new(&ConsumersConfig {
        max,
        retention: Duration::from_secs(300),
        active_within: Duration::from_secs(90),
        behind_after: Duration::from_secs(60),
    })
}

fn agent(name: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("User-Agent", name.parse().unwrap());
    headers
}

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
}

#[test]
fn a_fetch_is_booked_with_the_version_it_returned() {
    let table = consumers(10);
    table.record(ip(1), &agent("py"), Fetch::Full, 5, 1_000);
    table.record(ip(1), &agent("py"), Fetch::Delta, 7, 2_000);

    let views = table.views("n", 9, 2_000);
    assert_eq!(views.len(), 1);
    assert_eq!(
        (views[0].last_full, views[0].last_delta),
        (Some(1_000), Some(2_000))
    );
    assert_eq!((views[0].version, views[0].behind), (7, 2));
}

#[test]
fn another_server_is_not_a_consumer() {
    let table = consumers(10);
    let mut headers = HeaderMap::new();
    headers.insert("DiscoveryIdentity-Name", "DefaultServer".parse().unwrap());
    table.record(ip(1), &headers, Fetch::Full, 5, 1_000);

    assert!(table.views("n", 5, 1_000).is_empty());
}

#[test]
fn consumers_are_told_apart_by_address_and_agent() {
    let table = consumers(10);
    table.record(ip(1), &agent("py"), Fetch::Full, 5, 1_000);
    table.record(ip(2), &agent("py"), Fetch::Full, 5, 1_000);
    table.record(ip(1), &agent("java"), Fetch::Full, 5, 1_000);

    assert_eq!(table.views("n", 5, 1_000).len(), 3);
}

#[test]
fn a_consumer_quiet_for_longer_than_the_retention_ages_out() {
    let table = consumers(10);
    table.record(ip(1), &agent("py"), Fetch::Full, 5, 0);

    assert!(table.views("n", 5, 300_001).is_empty());
}

#[test]
fn at_the_cap_the_quietest_consumer_makes_room() {
    let table = consumers(2);
    table.record(ip(1), &agent("py"), Fetch::Full, 5, 1_000);
    table.record(ip(2), &agent("py"), Fetch::Full, 5, 2_000);
    table.record(ip(3), &agent("py"), Fetch::Full, 5, 3_000);

    let addresses: Vec<String> = table
        .views("n", 5, 3_000)
        .into_iter()
        .map(|v| v.address)
        .collect();
    assert_eq!(addresses, ["10.0.0.3", "10.0.0.2"]);
}

#[test]
fn a_long_agent_is_cut_so_that_keys_stay_small() {
    let table = consumers(10);
    table.record(ip(1), &agent(&"x".repeat(5_000)), Fetch::Full, 5, 1_000);

    assert_eq!(table.views("n", 5, 1_000)[0].agent.len(), 200);
}

#[test]
fn behind_counts_only_consumers_that_stopped_keeping_up() {
    let table = consumers(10);
    table.record(ip(1), &agent("current"), Fetch::Delta, 9, 100_000);
    table.record(ip(2), &agent("late-but-fresh"), Fetch::Delta, 8, 100_000);
    table.record(ip(3), &agent("stopped"), Fetch::Delta, 8, 10_000);

    assert_eq!(table.counts(9, 100_000), (3, 1));
}
