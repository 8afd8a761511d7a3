//! The own zone and the order service URLs are tried in (`EndpointUtils.getServiceUrlsFromConfig`,
//! spec §8.6).

use super::*;

fn zoned(own: Option<&str>, prefer_same_zone: bool) -> ClientConfig {
    let mut config = ClientConfig::new(Vec::new(), "orders", "orders-1", "h", "10.0.0.1", 8080);
    config.region = "eu".to_owned();
    config.availability_zones = BTreeMap::from([(
        "eu".to_owned(),
        vec!["z1".to_owned(), "z2".to_owned(), "z3".to_owned()],
    )]);
    config.service_url = BTreeMap::from([
        ("z1".to_owned(), vec!["http://one/eureka/".to_owned()]),
        (
            "z2".to_owned(),
            vec![
                "http://two/eureka/".to_owned(),
                "http://two-b/eureka/".to_owned(),
            ],
        ),
        ("z3".to_owned(), vec!["http://three/eureka/".to_owned()]),
    ]);
    if let Some(zone) = own {
        config.metadata.insert("zone".to_owned(), zone.to_owned());
    }
    config.prefer_same_zone_eureka = prefer_same_zone;
    config
}

#[test]
fn own_zone_is_the_metadata_zone() {
    assert_eq!(zoned(Some("z2"), true).own_zone(), "z2");
}

#[test]
fn own_zone_is_else_the_first_availability_zone_of_the_region() {
    assert_eq!(zoned(None, true).own_zone(), "z1");
    let mut other_region = zoned(None, true);
    other_region.region = "us".to_owned();
    assert_eq!(other_region.own_zone(), DEFAULT_ZONE);
}

#[test]
fn own_zone_urls_come_first_then_the_others_in_cyclic_order() {
    assert_eq!(
        zoned(Some("z2"), true).ordered_service_urls(),
        [
            "http://two/eureka/",
            "http://two-b/eureka/",
            "http://three/eureka/",
            "http://one/eureka/"
        ]
    );
    let zones: Vec<String> = zoned(Some("z3"), true)
        .zone_service_urls()
        .into_iter()
        .map(|zone| zone.zone)
        .collect();
    assert_eq!(zones, ["z3", "z1", "z2"]);
}

#[test]
fn without_zone_preference_the_first_other_zone_comes_first() {
    assert_eq!(
        zoned(Some("z1"), false).ordered_service_urls(),
        [
            "http://two/eureka/",
            "http://two-b/eureka/",
            "http://three/eureka/",
            "http://one/eureka/"
        ]
    );
}

#[test]
fn an_unknown_own_zone_starts_at_the_first_zone() {
    assert_eq!(
        zoned(Some("elsewhere"), true).ordered_service_urls()[0],
        "http://one/eureka/"
    );
}

#[test]
fn zone_names_compare_without_case() {
    assert_eq!(
        zoned(Some("Z3"), true).ordered_service_urls()[0],
        "http://three/eureka/"
    );
}

#[test]
fn a_zone_without_urls_uses_the_default_zone_once() {
    let mut config = zoned(Some("z1"), true);
    config.service_url = BTreeMap::from([
        ("z2".to_owned(), vec!["http://two/eureka/".to_owned()]),
        (
            DEFAULT_ZONE.to_owned(),
            vec!["http://fallback/eureka/".to_owned()],
        ),
    ]);
    let grouped = config.zone_service_urls();
    assert_eq!(
        grouped,
        [
            ZoneUrls {
                zone: "z1".to_owned(),
                urls: vec!["http://fallback/eureka/".to_owned()]
            },
            ZoneUrls {
                zone: "z2".to_owned(),
                urls: vec!["http://two/eureka/".to_owned()]
            },
        ]
    );
}

#[test]
fn without_availability_zones_only_the_default_zone_is_used() {
    let mut config = ClientConfig::new(
        vec!["http://a/eureka/".to_owned(), "http://b/eureka/".to_owned()],
        "orders",
        "orders-1",
        "h",
        "10.0.0.1",
        8080,
    );
    assert_eq!(
        config.ordered_service_urls(),
        ["http://a/eureka/", "http://b/eureka/"]
    );
    // A zone the region does not list is not consulted, as in the Java client.
    config
        .service_url
        .insert("z9".to_owned(), vec!["http://z9/eureka/".to_owned()]);
    assert_eq!(
        config.ordered_service_urls(),
        ["http://a/eureka/", "http://b/eureka/"]
    );
}
