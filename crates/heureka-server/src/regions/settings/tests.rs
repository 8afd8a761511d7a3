//! Region settings: credentials out of URLs, whitelists, the regions= parameter, fetcher agents.

use super::*;

fn settings(args: &[&str]) -> RegionsSettings {
    let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
    let dir = heureka_testkit::TempDir::new();
    match crate::config::load(&args, &|_| None, &dir.path).unwrap() {
        crate::config::Loaded::Run(config) => RegionsSettings::from_config(&config),
        other => panic!("{other:?}"),
    }
}

#[test]
fn credentials_in_a_region_url_become_basic_auth_and_leave_the_url() {
    let settings = settings(&[
        "--eureka.server.remote-region-urls-with-name.eu=http://us%40r:p%3Ass@e:8761/eureka",
    ]);
    let region = &settings.regions[0];
    assert_eq!(region.url, "http://e:8761/eureka/");
    assert_eq!(
        region.authorization.as_deref(),
        Some(basic_auth_header("us@r", "p:ss").as_str())
    );
}

#[test]
fn a_regions_own_whitelist_wins_over_the_global_one_and_none_allows_all() {
    let settings = settings(&[
        "--eureka.server.remote-region-urls-with-name.eu=http://e/eureka/",
        "--eureka.server.remote-region-urls-with-name.us=http://u/eureka/",
        "--eureka.server.remote-region-urls-with-name.ap=http://a/eureka/",
        "--eureka.server.remote-region-app-whitelist.eu=ORDERS",
        "--eureka.server.remote-region-app-whitelist.global=GATEWAY",
    ]);
    let by_name = |name: &str| settings.regions.iter().find(|r| r.name == name).unwrap();
    assert!(by_name("eu").allows("orders"));
    assert!(!by_name("eu").allows("GATEWAY"));
    assert!(by_name("us").allows("gateway"));
    assert!(!by_name("us").allows("ORDERS"));
    let open = settings_without_whitelist();
    assert!(open.regions[0].allows("ANYTHING"));
}

fn settings_without_whitelist() -> RegionsSettings {
    settings(&["--eureka.server.remote-region-urls-with-name.eu=http://e/eureka/"])
}

#[test]
fn a_regions_parameter_is_lower_cased_sorted_and_unknown_names_are_set_apart() {
    let settings = settings(&[
        "--eureka.server.remote-region-urls-with-name.us-west=http://w/eureka/",
        "--eureka.server.remote-region-urls-with-name.eu=http://e/eureka/",
    ]);
    let (found, unknown) = settings.requested("US-WEST,mars,eu,eu");
    let names: Vec<&str> = found
        .iter()
        .map(|i| settings.regions[*i].name.as_str())
        .collect();
    assert_eq!(names, ["eu", "us-west"]);
    assert_eq!(unknown, ["mars"]);
}

#[test]
fn region_fetchers_are_known_by_their_agent() {
    assert!(is_fetcher_agent("Java-EurekaClient-RemoteRegion/v1.10"));
    assert!(is_fetcher_agent("Heureka-RemoteRegion/0.1.0"));
    assert!(!is_fetcher_agent("Java-EurekaClient/v1.10"));
}
