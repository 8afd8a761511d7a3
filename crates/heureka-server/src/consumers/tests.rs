//! The consumers table: who counts, who fetches periodically, what is kept, and its bounds.

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

/// A table of at most `max` consumers after a full fetch (of version 5) by each
/// `(address's last byte, User-Agent, when)`, in order.
fn full_fetches(max: usize, fetches: &[(u8, &str, Millis)]) -> Consumers {
    let table = consumers(max);
    for (last, name, at) in fetches {
        table.record(ip(*last), &agent(name), Fetch::Full, 5, *at);
    }
    table
}

fn agent(name: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("User-Agent", name.parse().unwrap());
    headers
}

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
}

fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in pairs {
        headers.append(
            axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    headers
}

/// Consumers that fetch periodically and readers, by agent.
fn agents(table: &Consumers, now: Millis) -> (Vec<String>, Vec<String>) {
    let (periodic, readers) = table.views("n", 5, now);
    let names = |views: Vec<ConsumerView>| views.into_iter().map(|v| v.agent).collect();
    (names(periodic), names(readers))
}

#[test]
fn a_fetch_is_booked_with_the_version_it_returned() {
    let table = consumers(10);
    table.record(ip(1), &agent("py"), Fetch::Full, 5, 1_000);
    table.record(ip(1), &agent("py"), Fetch::Delta, 7, 2_000);

    let (views, readers) = table.views("n", 9, 2_000);
    assert_eq!((views.len(), readers.len()), (1, 0));
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

    assert_eq!(agents(&table, 1_000), (vec![], vec![]));
}

#[test]
fn consumers_are_told_apart_by_address_and_agent() {
    let table = full_fetches(
        10,
        &[(1, "py", 1_000), (2, "py", 1_000), (1, "java", 1_000)],
    );

    let (periodic, readers) = agents(&table, 1_000);
    assert_eq!(periodic.len() + readers.len(), 3);
}

#[test]
fn a_consumer_quiet_for_longer_than_the_retention_ages_out() {
    let table = full_fetches(10, &[(1, "py", 0)]);

    assert_eq!(agents(&table, 300_001), (vec![], vec![]));
}

#[test]
fn at_the_cap_the_quietest_consumer_makes_room() {
    let table = full_fetches(2, &[(1, "py", 1_000), (2, "py", 2_000), (3, "py", 3_000)]);

    let addresses: Vec<String> = table
        .views("n", 5, 3_000)
        .0
        .into_iter()
        .map(|v| v.address)
        .collect();
    assert_eq!(addresses, ["10.0.0.3", "10.0.0.2"]);
}

#[test]
fn a_long_agent_is_cut_so_that_keys_stay_small() {
    let table = full_fetches(10, &[(1, &"x".repeat(5_000), 1_000)]);

    assert_eq!(table.views("n", 5, 1_000).0[0].agent.len(), 200);
}

#[test]
fn behind_counts_only_consumers_that_stopped_keeping_up() {
    let table = consumers(10);
    table.record(ip(1), &agent("current"), Fetch::Delta, 9, 100_000);
    table.record(ip(2), &agent("late-but-fresh"), Fetch::Delta, 8, 100_000);
    table.record(ip(3), &agent("stopped"), Fetch::Delta, 8, 10_000);

    assert_eq!(table.counts(9, 100_000), (3, 1));
}

#[test]
fn a_one_off_read_is_listed_apart_from_the_clients() {
    let table = consumers(10);
    for (n, tool) in [
        "curl/8.5.0",
        "heureka-cli/0.1.0",
        "kube-probe/1.30",
        "Mozilla/5.0",
        "node",
    ]
    .into_iter()
    .enumerate()
    {
        let read = headers(&[("User-Agent", tool), ("Accept", "application/json")]);
        table.record(ip(n as u8), &read, Fetch::Full, 5, 1_000);
    }
    table.record(ip(9), &agent("java"), Fetch::Delta, 5, 1_000);

    let (periodic, mut readers) = agents(&table, 1_000);
    readers.sort();
    assert_eq!(periodic, ["java"]);
    assert_eq!(
        readers,
        [
            "Mozilla/5.0",
            "curl/8.5.0",
            "heureka-cli/0.1.0",
            "kube-probe/1.30",
            "node"
        ]
    );
}

#[test]
fn a_eureka_client_fetches_periodically_from_its_first_full_fetch() {
    let table = consumers(10);
    let first_fetches = [
        // Netflix's Java client (Jersey): its identity headers.
        headers(&[
            ("User-Agent", "Java-EurekaClient/v2.0.6"),
            ("DiscoveryIdentity-Name", "DefaultClient"),
            ("DiscoveryIdentity-Version", "1.4"),
        ]),
        // py-eureka-client and eureka-js-client: no User-Agent.
        headers(&[("Accept-Encoding", "gzip, deflate")]),
        // Spring's RestClient and WebClient, fargo: a Content-Type on the GET.
        headers(&[
            ("User-Agent", "Go-http-client/1.1"),
            ("Accept", "application/xml"),
            ("Content-Type", "application/xml"),
        ]),
        // Spring's RestTemplate: what its Jackson converter reads.
        headers(&[
            ("User-Agent", "Apache-HttpClient/5.4.1 (Java/21.0.5)"),
            ("Accept", "application/json, application/*+json"),
        ]),
    ];
    for (n, fetch) in first_fetches.iter().enumerate() {
        table.record(ip(n as u8), fetch, Fetch::Full, 5, 1_000);
    }

    let (periodic, readers) = agents(&table, 1_000);
    assert_eq!((periodic.len(), readers), (4, Vec::<String>::new()));
}

#[test]
fn a_client_of_an_agent_not_known_as_a_one_off_tool_is_waited_for_from_its_first_fetch() {
    let table = consumers(10);
    let unknown = headers(&[
        ("User-Agent", "Apache-HttpClient/4.5.14 (Java/17.0.15)"),
        ("Accept", "application/json"),
    ]);
    table.record(ip(1), &unknown, Fetch::Full, 5, 1_000);

    let (periodic, readers) = agents(&table, 1_000);
    assert_eq!(periodic, ["Apache-HttpClient/4.5.14 (Java/17.0.15)"]);
    assert!(readers.is_empty());
}

#[test]
fn a_reader_at_a_steady_pace_fetches_periodically_and_one_now_and_then_does_not() {
    let table = consumers(10);
    let probe = agent("kube-probe/1.30");
    let person = agent("curl/8.5.0");
    let burst = agent("python-requests/2.32");
    for at in [1_000, 11_000, 21_500] {
        table.record(ip(1), &probe, Fetch::Full, 5, at);
    }
    for at in [1_000, 13_000, 60_000] {
        table.record(ip(2), &person, Fetch::Full, 5, at);
    }
    for at in [1_000, 1_005, 1_010] {
        table.record(ip(3), &burst, Fetch::Full, 5, at);
    }

    let (periodic, mut readers) = agents(&table, 60_000);
    readers.sort();
    assert_eq!(periodic, ["kube-probe/1.30"]);
    assert_eq!(readers, ["curl/8.5.0", "python-requests/2.32"]);
}

#[test]
fn the_metrics_count_no_reader() {
    let table = consumers(10);
    table.record(ip(1), &agent("curl/8.5.0"), Fetch::Full, 1, 0);
    table.record(ip(2), &agent("java"), Fetch::Delta, 1, 0);

    assert_eq!(table.counts(9, 100_000), (1, 1));
}

#[test]
fn a_consumer_following_the_push_stays_however_long_since_it_acknowledged() {
    let table = consumers(10);
    let key = table
        .record(ip(1), &agent("Apache-HttpClient/5.5"), Fetch::Full, 5, 0)
        .unwrap();
    table.following(&key, true);
    let an_hour = 3_600_000;
    let (views, _) = table.views("n", 5, an_hour);
    assert_eq!(views.len(), 1);
    assert!(views[0].push);
    table.following(&key, false);
    assert_eq!(
        agents(&table, an_hour),
        (vec![], vec![]),
        "aged out once it stopped following"
    );
}

#[test]
fn at_the_cap_a_push_follower_makes_room_last() {
    let table = consumers(2);
    let follower = table.record(ip(1), &agent("a"), Fetch::Full, 5, 0).unwrap();
    table.following(&follower, true);
    table.record(ip(2), &agent("b"), Fetch::Full, 5, 1_000);
    table.record(ip(3), &agent("c"), Fetch::Full, 5, 2_000);
    let (periodic, _) = agents(&table, 2_000);
    assert_eq!(periodic.len(), 2);
    assert!(periodic.contains(&"a".to_owned()), "{periodic:?}");
}
