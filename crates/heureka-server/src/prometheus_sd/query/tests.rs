//! The filters a Prometheus HTTP SD request may carry, and their canonical form.

use super::*;

fn parse(query: &str) -> Result<SdQuery, String> {
    SdQuery::parse(form_urlencoded::parse(query.as_bytes()))
}

fn with_metadata(pairs: &[(&str, &str)]) -> Instance {
    let mut instance = Instance::new("ORDERS", "o1", "h", "10.0.0.1", 0);
    for (key, value) in pairs {
        instance.metadata.insert(key.to_string(), value.to_string());
    }
    instance
}

#[test]
fn no_parameter_selects_every_application_and_instance() {
    let query = parse("").unwrap();
    assert!(query.selects_app("ANYTHING"));
    assert!(query.selects(&with_metadata(&[])));
}

#[test]
fn apps_are_matched_in_any_case_and_repeatable() {
    let query = parse("app=orders&app=Billing").unwrap();
    assert!(query.selects_app("ORDERS"));
    assert!(query.selects_app("BILLING"));
    assert!(!query.selects_app("STOCK"));
}

#[test]
fn every_metadata_filter_must_match_exactly() {
    let query = parse("metadata.zone=eu-1&metadata.team=core").unwrap();
    assert!(query.selects(&with_metadata(&[("zone", "eu-1"), ("team", "core")])));
    assert!(!query.selects(&with_metadata(&[("zone", "eu-1")])));
    assert!(!query.selects(&with_metadata(&[("zone", "EU-1"), ("team", "core")])));
}

#[test]
fn scrape_true_keeps_only_instances_asking_to_be_scraped() {
    let query = parse("scrape=true").unwrap();
    assert!(query.selects(&with_metadata(&[("prometheus.io/scrape", "true")])));
    assert!(!query.selects(&with_metadata(&[("prometheus.io/scrape", "false")])));
    assert!(!query.selects(&with_metadata(&[])));
    assert!(parse("scrape=false").unwrap().selects(&with_metadata(&[])));
}

#[test]
fn the_same_question_spelled_differently_has_one_key() {
    let a = parse("app=billing&metadata.b=2&app=ORDERS&metadata.a=1&app=orders").unwrap();
    let b = parse("metadata.a=1&app=Orders&metadata.b=2&app=BILLING").unwrap();
    assert_eq!(a, b);
    assert_eq!(a.key(), "app=BILLING&app=ORDERS&metadata.a=1&metadata.b=2");
    assert_ne!(a.key(), parse("app=BILLING").unwrap().key());
}

#[test]
fn a_key_cannot_be_forged_by_a_value_holding_separators() {
    let tricky = parse("metadata.a=1%26app%3DX").unwrap();
    let plain = parse("metadata.a=1&app=X").unwrap();
    assert_ne!(tricky.key(), plain.key());
}

#[test]
fn unknown_parameters_and_bad_scrape_values_are_refused() {
    assert!(parse("apps=ORDERS").unwrap_err().contains("'apps'"));
    assert!(parse("metadata.=x").is_err());
    assert!(parse("scrape=yes").unwrap_err().contains("'yes'"));
}

#[test]
fn queries_are_bounded_in_count_and_length() {
    let many = vec!["app=A"; MAX_PARAMETERS + 1].join("&");
    assert!(parse(&many).is_err());
    assert!(parse(&vec!["app=A"; MAX_PARAMETERS].join("&")).is_ok());
    let long = format!("app={}", "A".repeat(MAX_LENGTH + 1));
    assert!(parse(&long).is_err());
}
