//! Answers read through the store: only UP instances, built once per version and query, and
//! tagged so that equal tags mean equal bodies.

use heureka_core::{Instance, InstanceStatus, Origin, Registry, RegistryPolicy};

use super::*;
use crate::clock::Clock;

fn store() -> Store {
    Store::new(
        Registry::new(RegistryPolicy::default(), 0),
        Clock::System,
        Vec::new(),
    )
}

fn register(store: &Store, app: &str, id: &str) {
    let instance = Instance::new(app, id, &format!("{id}.local"), "10.0.0.1", 0);
    store.write(|registry, now| registry.register(instance, Origin::Client, now));
}

fn set_status(store: &Store, app: &str, id: &str, status: InstanceStatus) {
    store.write(|registry, now| {
        registry.set_status_override(app, id, status, None, Origin::Client, now)
    });
}

fn query(text: &str) -> SdQuery {
    SdQuery::parse(form_urlencoded::parse(text.as_bytes())).unwrap()
}

fn body(answer: &Answer) -> String {
    String::from_utf8(answer.body.to_vec()).unwrap()
}

#[test]
fn only_up_instances_are_targets_and_an_override_removes_one() {
    let (sd, store) = (PrometheusSd::new(true, 1), store());
    register(&store, "ORDERS", "o1");
    register(&store, "ORDERS", "o2");
    assert_eq!(sd.answer(&store, &query("")).targets, 2);
    set_status(&store, "ORDERS", "o2", InstanceStatus::OutOfService);
    let answer = sd.answer(&store, &query(""));
    assert_eq!(answer.targets, 1);
    assert!(body(&answer).contains("\"o1.local:7001\""));
    assert!(!body(&answer).contains("o2.local"));
}

#[test]
fn an_answer_is_built_once_per_version_and_query() {
    let (sd, store) = (PrometheusSd::new(true, 1), store());
    register(&store, "ORDERS", "o1");
    assert!(sd.answer(&store, &query("app=orders")).built);
    assert!(
        !sd.answer(&store, &query("app=ORDERS")).built,
        "same question"
    );
    assert!(sd.answer(&store, &query("")).built, "another question");
    register(&store, "ORDERS", "o2");
    assert!(
        sd.answer(&store, &query("app=orders")).built,
        "a new version"
    );
    let status = sd.status();
    assert_eq!((status.answers_built, status.answers_reused), (3, 1));
    assert_eq!(status.last_targets, 2);
}

#[test]
fn the_etag_changes_with_the_registry_the_query_and_the_process() {
    let (sd, store) = (PrometheusSd::new(true, 1), store());
    register(&store, "ORDERS", "o1");
    let first = sd.answer(&store, &query("")).etag;
    assert_eq!(sd.answer(&store, &query("")).etag, first);
    assert_ne!(sd.answer(&store, &query("app=X")).etag, first);
    assert_ne!(
        PrometheusSd::new(true, 2).answer(&store, &query("")).etag,
        first
    );
    register(&store, "ORDERS", "o2");
    assert_ne!(sd.answer(&store, &query("")).etag, first);
    assert!(
        first.starts_with('"') && first.ends_with('"'),
        "a strong tag"
    );
}

#[test]
fn the_etag_before_building_is_the_one_the_answer_carries() {
    let (sd, store) = (PrometheusSd::new(true, 1), store());
    register(&store, "ORDERS", "o1");
    let version = store.read().version();
    let answer = sd.answer(&store, &query("scrape=true"));
    assert_eq!(sd.etag(version, &query("scrape=true"), false), answer.etag);
    assert_eq!(
        sd.etag(version, &query("scrape=true"), true),
        answer.gzip_etag
    );
    assert_ne!(
        answer.etag, answer.gzip_etag,
        "two representations, two tags"
    );
}

#[test]
fn kept_bodies_are_bounded() {
    let (sd, store) = (PrometheusSd::new(true, 1), store());
    register(&store, "ORDERS", "o1");
    for n in 0..=MAX_KEPT_QUERIES {
        sd.answer(&store, &query(&format!("app=A{n}")));
    }
    assert_eq!(sd.kept.lock().bodies.len(), MAX_KEPT_QUERIES);
    assert_eq!(sd.kept.lock().pieces.len(), MAX_KEPT_QUERIES);
    assert!(sd.answer(&store, &query("app=A0")).built, "the oldest went");
    assert!(!sd.answer(&store, &query("app=A2")).built);
}

/// The kept groups of `app` for `query`, to tell a kept piece (same bytes) from a new one.
fn piece(sd: &PrometheusSd, query: &SdQuery, app: &str) -> Option<Bytes> {
    let kept = sd.kept.lock();
    let (_, pieces) = kept.pieces.iter().find(|(key, _)| *key == query.key())?;
    Some(pieces.get(app)?.groups.clone())
}

#[test]
fn a_change_re_encodes_its_own_application_only() {
    let (sd, store) = (PrometheusSd::new(true, 1), store());
    register(&store, "BILLING", "b1");
    register(&store, "ORDERS", "o1");
    let all = query("");
    sd.answer(&store, &all);
    let (billing, orders) = (piece(&sd, &all, "BILLING"), piece(&sd, &all, "ORDERS"));
    register(&store, "ORDERS", "o2");
    let answer = sd.answer(&store, &all);
    assert_eq!(answer.targets, 3);
    let kept_billing = piece(&sd, &all, "BILLING").unwrap();
    assert_eq!(kept_billing.as_ptr(), billing.unwrap().as_ptr(), "kept");
    assert_ne!(piece(&sd, &all, "ORDERS").unwrap(), orders.unwrap());
    let document: serde_json::Value = serde_json::from_slice(&answer.body.to_vec()).unwrap();
    let ids: Vec<&str> = document
        .as_array()
        .unwrap()
        .iter()
        .map(|group| group["labels"]["instance"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["b1", "o1", "o2"], "in the registry's order");
}

#[test]
fn an_application_that_leaves_the_registry_leaves_the_answer() {
    let (sd, store) = (PrometheusSd::new(true, 1), store());
    register(&store, "BILLING", "b1");
    register(&store, "ORDERS", "o1");
    sd.answer(&store, &query(""));
    store.write(|registry, now| registry.cancel("BILLING", "b1", Origin::Client, now));
    let answer = sd.answer(&store, &query(""));
    assert_eq!(answer.targets, 1);
    assert!(piece(&sd, &query(""), "BILLING").is_none());
    assert!(!body(&answer).contains("b1"));
}

#[test]
fn an_application_with_no_target_is_not_copied_again_until_it_changes() {
    let (sd, store) = (PrometheusSd::new(true, 1), store());
    register(&store, "BILLING", "b1");
    register(&store, "ORDERS", "o1");
    let scrape = query("scrape=true");
    assert_eq!(sd.answer(&store, &scrape).targets, 0);
    let pieces = |sd: &PrometheusSd| {
        let kept = sd.kept.lock();
        let (_, pieces) = kept
            .pieces
            .iter()
            .find(|(key, _)| *key == scrape.key())
            .unwrap();
        let mut kept: Vec<(String, *const Piece)> = pieces
            .iter()
            .map(|(name, piece)| (name.clone(), Arc::as_ptr(piece)))
            .collect();
        kept.sort();
        kept
    };
    let before = pieces(&sd);
    assert_eq!(before.len(), 2, "both kept, empty");
    register(&store, "ORDERS", "o2");
    sd.answer(&store, &scrape);
    let after = pieces(&sd);
    assert_eq!(after[0], before[0], "BILLING's piece kept");
    assert_ne!(after[1], before[1], "ORDERS read again");
}

#[test]
fn an_application_with_no_target_adds_no_separator() {
    let (sd, store) = (PrometheusSd::new(true, 1), store());
    register(&store, "BILLING", "b1");
    register(&store, "ORDERS", "o1");
    register(&store, "STOCK", "s1");
    set_status(&store, "ORDERS", "o1", InstanceStatus::Down);
    let answer = sd.answer(&store, &query(""));
    let document: serde_json::Value = serde_json::from_slice(&answer.body.to_vec()).unwrap();
    assert_eq!(document.as_array().unwrap().len(), 2);
    set_status(&store, "BILLING", "b1", InstanceStatus::Down);
    set_status(&store, "STOCK", "s1", InstanceStatus::Down);
    assert_eq!(body(&sd.answer(&store, &query(""))), "[]");
}

#[test]
fn the_gzip_body_inflates_to_the_plain_one() {
    let (sd, store) = (PrometheusSd::new(true, 1), store());
    for (app, id) in [("BILLING", "b1"), ("ORDERS", "o1"), ("STOCK", "s1")] {
        register(&store, app, id);
    }
    set_status(&store, "ORDERS", "o1", InstanceStatus::Down);
    sd.answer(&store, &query(""));
    register(&store, "STOCK", "s2");
    let answer = sd.answer(&store, &query(""));
    let mut inflated = String::new();
    let gzip = answer.gzip_body();
    let mut reader = flate2::read::GzDecoder::new(&gzip[..]);
    std::io::Read::read_to_string(&mut reader, &mut inflated).unwrap();
    assert_eq!(inflated, body(&answer));
    assert!(gzip.len() < answer.body.to_vec().len());
}
