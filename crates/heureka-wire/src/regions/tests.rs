//! The remote regions document: read back as written, spelled as the contract says.

use super::*;

fn ready_region() -> RegionView {
    RegionView {
        name: "us-west".to_owned(),
        url: "http://h:8761/eureka/".to_owned(),
        state: "ready".to_owned(),
        last_success: Some(1_733_400_000_000),
        last_attempt: Some(1_733_400_001_000),
        lag_ms: Some(1234),
        stale_after_ms: 600_000,
        applications: 3,
        instances: 12,
        error: None,
        fetches: FetchCounts {
            full: 1,
            delta: 10,
            mismatches: 2,
            failures: 0,
        },
    }
}

#[test]
fn a_ready_and_a_starting_region_read_back() {
    let starting = RegionView {
        name: "eu \"west\"".to_owned(),
        url: "https://e:8443/eureka/".to_owned(),
        state: "starting".to_owned(),
        stale_after_ms: 600_000,
        error: Some("connection refused".to_owned()),
        fetches: FetchCounts {
            failures: 4,
            ..FetchCounts::default()
        },
        ..RegionView::default()
    };
    let doc = RegionsDoc {
        region: "us-east-1".to_owned(),
        fallback: true,
        regions: vec![ready_region(), starting],
    };
    assert_eq!(decode_regions(&encode_regions(&doc)).unwrap(), doc);
}

#[test]
fn the_document_is_spelled_as_the_contract() {
    let doc = RegionsDoc {
        region: "us-east-1".to_owned(),
        fallback: false,
        regions: vec![ready_region()],
    };
    assert_eq!(
        String::from_utf8(encode_regions(&doc)).unwrap(),
        r#"{"region":"us-east-1","fallback":false,"regions":[{"name":"us-west","url":"http://h:8761/eureka/","state":"ready","lastSuccess":1733400000000,"lastAttempt":1733400001000,"lagMs":1234,"staleAfterMs":600000,"applications":3,"instances":12,"error":null,"fetches":{"full":1,"delta":10,"mismatches":2,"failures":0}}]}"#
    );
}

#[test]
fn a_region_never_fetched_has_null_times() {
    let text = r#"{"region":"r","fallback":true,"regions":[{"name":"x","url":"u","state":"starting","lastSuccess":null,"lastAttempt":null,"lagMs":null,"staleAfterMs":5,"applications":0,"instances":0,"error":null,"fetches":{"full":0,"delta":0,"mismatches":0,"failures":0}}]}"#;
    let doc = decode_regions(text.as_bytes()).unwrap();
    assert_eq!(doc.regions[0].last_success, None);
    assert_eq!(doc.regions[0].lag_ms, None);
    assert_eq!(String::from_utf8(encode_regions(&doc)).unwrap(), text);
}

#[test]
fn a_document_without_a_regions_list_is_refused() {
    assert!(decode_regions(br#"{"region":"r","fallback":true}"#).is_err());
}
