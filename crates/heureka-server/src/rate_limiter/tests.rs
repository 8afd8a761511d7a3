//! The limiter's rules, with the time passed in.

use super::*;

fn limiter(enabled: bool) -> RateLimiter {
    RateLimiter::new(RateLimiterConfig {
        enabled,
        throttle_standard_clients: false,
        privileged_clients: vec!["gateway".to_owned()],
        burst_size: 3,
        registry_fetch_average_rate: 2,
        full_fetch_average_rate: 1,
    })
}

/// An enabled limiter that also limits Eureka's own clients.
fn throttling_standard_clients() -> RateLimiter {
    RateLimiter::new(RateLimiterConfig {
        throttle_standard_clients: true,
        ..limiter(true).config
    })
}

/// The decisions on `times` fetches of `fetch` by `client`, all at `now`.
fn decisions(
    limiter: &RateLimiter,
    times: usize,
    fetch: Fetch,
    client: Option<&str>,
    now: Millis,
) -> Vec<Decision> {
    (0..times)
        .map(|_| limiter.decide(fetch, client, now))
        .collect()
}

/// Asserts that `times` fetches of `fetch` by `client`, all at time 0, pass.
fn assert_all_pass(limiter: &RateLimiter, times: usize, fetch: Fetch, client: Option<&str>) {
    for _ in 0..times {
        assert_eq!(limiter.decide(fetch, client, 0), Decision::Pass);
    }
}

#[test]
fn a_bucket_starts_full_allows_its_burst_then_refills_at_its_rate() {
    let mut bucket = TokenBucket::new();
    for _ in 0..3 {
        assert!(bucket.acquire(3, 2, 0));
    }
    assert!(!bucket.acquire(3, 2, 0), "beyond the burst");
    assert!(
        !bucket.acquire(3, 2, 499),
        "half a token after 499 ms at 2/s"
    );
    assert!(bucket.acquire(3, 2, 500), "one token after 500 ms");
    assert!(!bucket.acquire(3, 2, 500));
}

#[test]
fn a_bucket_never_holds_more_than_its_burst() {
    let mut bucket = TokenBucket::new();
    assert!(bucket.acquire(2, 1000, 0));
    // An hour idle refills to the burst, not beyond.
    assert!(bucket.acquire(2, 1000, 3_600_000));
    assert!(bucket.acquire(2, 1000, 3_600_000));
    assert!(!bucket.acquire(2, 1000, 3_600_000));
}

#[test]
fn a_clock_stepping_back_refills_nothing() {
    let mut bucket = TokenBucket::new();
    assert!(bucket.acquire(1, 1, 10_000));
    assert!(!bucket.acquire(1, 1, 0));
    assert!(!bucket.acquire(1, 1, 10_500));
    assert!(bucket.acquire(1, 1, 11_000));
}

#[test]
fn enabled_a_non_standard_client_beyond_the_burst_is_refused() {
    let limiter = limiter(true);
    assert_all_pass(&limiter, 3, Fetch::Delta, Some("curl"));
    assert_eq!(
        limiter.decide(Fetch::Delta, Some("curl"), 0),
        Decision::Refused(Fetch::Delta)
    );
    assert_eq!(
        limiter.decide(Fetch::Application, None, 0),
        Decision::Refused(Fetch::Application),
        "a client naming nobody is limited too"
    );
}

#[test]
fn full_fetches_also_count_against_the_full_fetch_bucket() {
    let limiter = limiter(true);
    assert_all_pass(&limiter, 3, Fetch::Full, Some("curl"));
    // After one second the registry bucket has 2 tokens, the full bucket 1.
    assert_eq!(
        decisions(&limiter, 2, Fetch::Full, Some("curl"), 1000),
        [Decision::Pass, Decision::Refused(Fetch::Full)]
    );
}

#[test]
fn eureka_servers_and_privileged_clients_are_never_limited() {
    let limiter = throttling_standard_clients();
    for _ in 0..100 {
        assert_eq!(
            limiter.decide(Fetch::Full, Some("DefaultServer"), 0),
            Decision::Pass
        );
        assert_eq!(
            limiter.decide(Fetch::Full, Some("gateway"), 0),
            Decision::Pass
        );
    }
}

#[test]
fn standard_clients_are_limited_only_when_throttle_standard_clients() {
    let lenient = limiter(true);
    assert_all_pass(&lenient, 100, Fetch::Delta, Some("DefaultClient"));
    let strict = throttling_standard_clients();
    let decisions = decisions(&strict, 4, Fetch::Delta, Some("DefaultClient"), 0);
    assert_eq!(decisions[3], Decision::Refused(Fetch::Delta));
}

#[test]
fn disabled_it_never_refuses_but_counts_what_it_would() {
    let limiter = limiter(false);
    let decisions = decisions(&limiter, 5, Fetch::Delta, Some("curl"), 0);
    assert_eq!(decisions[2], Decision::Pass);
    assert_eq!(decisions[3], Decision::Counted(Fetch::Delta));
    assert_eq!(decisions[4], Decision::Counted(Fetch::Delta));
}
