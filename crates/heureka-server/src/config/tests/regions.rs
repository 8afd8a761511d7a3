//! The remote-region keys: Eureka's `remote-region-*` and `heureka.regions.*`.

use super::*;
use heureka_testkit::pki::{TestPki, PASSWORD};

#[test]
fn no_region_is_configured_by_default_and_eurekas_timings_hold() {
    let regions = config(&Dir::new(), &[], &[]).eureka_server.regions;
    assert!(regions.urls.is_empty());
    assert_eq!(regions.fetch_interval, Duration::from_secs(30));
    assert_eq!(regions.connect_timeout, Duration::from_millis(1000));
    assert_eq!(regions.read_timeout, Duration::from_millis(1000));
    assert!(regions.whitelist.is_empty());
    assert!(!regions.disable_delta);
    assert!(!regions.disable_transparent_fallback);
    assert!(regions.gzip);
    assert_eq!(regions.trust_store, None);
    assert_eq!(regions.stale_after, Duration::from_secs(600));
}

#[test]
fn named_region_urls_bind_by_lower_cased_name() {
    let regions = config(
        &Dir::new(),
        &[
            "--eureka.server.remote-region-urls-with-name.us-west=http://w:8761/eureka/",
            "--eureka.server.remoteRegionUrlsWithName.eu=https://u:p@e:8443/eureka/",
        ],
        &[],
    )
    .eureka_server
    .regions;
    assert_eq!(
        regions.urls,
        vec![
            ("eu".to_owned(), "https://u:p@e:8443/eureka/".to_owned()),
            ("us-west".to_owned(), "http://w:8761/eureka/".to_owned()),
        ]
    );
}

#[test]
fn a_region_url_that_is_not_http_is_an_error_naming_the_key() {
    let message = error(
        &Dir::new(),
        &["--eureka.server.remote-region-urls-with-name.eu=ftp://e/"],
        &[],
    );
    assert!(
        message.contains("eureka.server.remote-region-urls-with-name.eu"),
        "{message}"
    );
}

#[test]
fn whitelists_bind_upper_cased_apps_per_region_and_global() {
    let regions = config(
        &Dir::new(),
        &[
            "--eureka.server.remote-region-app-whitelist.eu=orders, Billing",
            "--eureka.server.remote-region-app-whitelist.global=GATEWAY",
        ],
        &[],
    )
    .eureka_server
    .regions;
    assert_eq!(
        regions.whitelist,
        BTreeMap::from([
            (
                "eu".to_owned(),
                vec!["ORDERS".to_owned(), "BILLING".to_owned()]
            ),
            ("global".to_owned(), vec!["GATEWAY".to_owned()]),
        ])
    );
}

#[test]
fn fetch_timings_fallback_delta_and_stale_after_bind() {
    let regions = config(
        &Dir::new(),
        &[
            "--eureka.server.remote-region-registry-fetch-interval=5",
            "--eureka.server.remote-region-connect-timeout-ms=250",
            "--eureka.server.remote-region-read-timeout-ms=750",
            "--eureka.server.disable-delta-for-remote-regions=true",
            "--eureka.server.disable-transparent-fallback-to-other-region=true",
            "--eureka.server.g-zip-content-from-remote-region=false",
            "--heureka.regions.stale-after=90s",
        ],
        &[],
    )
    .eureka_server
    .regions;
    assert_eq!(regions.fetch_interval, Duration::from_secs(5));
    assert_eq!(regions.connect_timeout, Duration::from_millis(250));
    assert_eq!(regions.read_timeout, Duration::from_millis(750));
    assert!(regions.disable_delta);
    assert!(regions.disable_transparent_fallback);
    assert!(!regions.gzip);
    assert_eq!(regions.stale_after, Duration::from_secs(90));
}

#[test]
fn a_zero_fetch_interval_is_an_error() {
    let message = error(
        &Dir::new(),
        &["--eureka.server.remote-region-registry-fetch-interval=0"],
        &[],
    );
    assert!(
        message.contains("remote-region-registry-fetch-interval"),
        "{message}"
    );
}

#[test]
fn a_remote_region_trust_store_that_loads_is_accepted() {
    let dir = Dir::new();
    let pki = TestPki::create(&dir.path.join("pki"));
    let store = format!(
        "--eureka.server.remote-region-trust-store={}",
        pki.trust_p12.display()
    );
    let password = format!("--eureka.server.remote-region-trust-store-password={PASSWORD}");
    let config = config(&dir, &[&store, &password], &[]);
    assert!(config.eureka_server.regions.trust_store.is_some());
    crate::tls::check_client(&config).unwrap();
}

#[test]
fn a_remote_region_trust_store_with_a_wrong_password_is_an_error_naming_its_key() {
    let dir = Dir::new();
    let pki = TestPki::create(&dir.path.join("pki"));
    let store = format!(
        "--eureka.server.remote-region-trust-store={}",
        pki.trust_p12.display()
    );
    let config = config(
        &dir,
        &[
            &store,
            "--eureka.server.remote-region-trust-store-password=wrong",
        ],
        &[],
    );
    let message = crate::tls::check_client(&config).unwrap_err().to_string();
    assert!(
        message.contains("eureka.server.remote-region-trust-store"),
        "{message}"
    );
}

#[test]
fn a_missing_remote_region_trust_store_is_an_error_naming_its_key() {
    let dir = Dir::new();
    let store = format!(
        "--eureka.server.remote-region-trust-store={}",
        dir.path.join("absent.p12").display()
    );
    let config = config(&dir, &[&store], &[]);
    let message = crate::tls::check_client(&config).unwrap_err().to_string();
    assert!(
        message.contains("eureka.server.remote-region-trust-store"),
        "{message}"
    );
}

#[test]
fn the_unimplemented_pool_keys_are_accepted_and_say_they_are_inert() {
    config(
        &Dir::new(),
        &[
            "--eureka.server.remote-region-total-connections=5",
            "--eureka.server.remote-region-fetch-thread-pool-size=2",
            "--eureka.server.remote-region-urls=http://x/",
        ],
        &[],
    );
    let help = crate::config::help::help_text();
    let line = help
        .lines()
        .find(|line| line.contains("eureka.server.remote-region-total-connections "))
        .expect("listed in --help");
    assert!(line.contains("inert"), "{line}");
}
