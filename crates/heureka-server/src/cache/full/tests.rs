//! The full document: equal to a whole encoding in every form, and a change re-encodes only
//! its own run.

use std::sync::Arc;
use std::time::Duration;

use heureka_wire::Format;

use super::*;
use crate::cache::encoding::Encoding;
use crate::cache::fixtures::{
    assert_a_registration_recompresses_one_run, assert_each_body_built_once_per_version,
    assert_every_form_equals_a_whole_encoding, read, register, registry_with, whole_full,
};

#[test]
fn full_document_from_runs_equals_a_whole_encoding_in_both_formats_and_encodings() {
    assert_every_form_equals_a_whole_encoding::<Full>(&registry_with(300, 3), whole_full);
}

#[test]
fn empty_registry_document_is_complete() {
    let registry = registry_with(0, 0);
    let cache = FullFetchCache::new(Duration::from_secs(180));
    let body = cache.get(&registry, Format::Json, Encoding::Plain);
    assert_eq!(
        body.to_vec(),
        r#"{"applications":{"versions__delta":"1","apps__hashcode":"","application":[]}}"#
            .as_bytes()
    );
}

#[test]
fn a_registration_re_encodes_only_its_own_run() {
    assert_a_registration_recompresses_one_run::<Full>(whole_full);
}

#[test]
fn a_large_gzip_build_holds_its_runs_compressed_only() {
    let registry = registry_with(1_500, 4);
    let cache = FullFetchCache::new(Duration::from_secs(180));
    let body = cache.get(&registry, Format::Json, Encoding::Gzip);
    let runs = cache.json.runs.lock();
    assert!(runs.by_first_app.len() > 10);
    assert!(runs
        .by_first_app
        .values()
        .all(|run| run.plain.is_none() && run.deflated.is_some()));
    drop(runs);
    assert_eq!(
        read(&body, Encoding::Gzip),
        whole_full(&registry, Format::Json)
    );
}

#[test]
fn large_full_fetches_equal_a_whole_encoding_in_both_formats() {
    assert_every_form_equals_a_whole_encoding::<Full>(&registry_with(1_500, 4), whole_full);
}

#[test]
fn identical_full_fetches_build_each_body_once_per_version_and_a_write_once_more() {
    assert_each_body_built_once_per_version::<Full>(&registry_with(300, 3), whole_full, "APP-42");
}

#[test]
fn plain_full_body_is_the_kept_runs_and_a_write_renews_only_its_own_run() {
    let registry = registry_with(300, 3);
    let cache = FullFetchCache::new(Duration::from_secs(180));
    let first = cache.get(&registry, Format::Json, Encoding::Plain);
    let again = cache.get(&registry, Format::Json, Encoding::Plain);
    assert!(Arc::ptr_eq(&first.parts, &again.parts), "served as kept");
    register(&registry, "APP-42", "APP-42-new");
    let after = cache.get(&registry, Format::Json, Encoding::Plain);
    let renewed = after
        .parts
        .iter()
        .filter(|part| part.len() > 100)
        .filter(|part| !first.parts.iter().any(|old| old.as_ptr() == part.as_ptr()))
        .count();
    assert_eq!(renewed, 1, "only the registration's run is new");
    assert_eq!(after.to_vec(), whole_full(&registry, Format::Json));
}

#[test]
fn plain_body_asked_after_gzip_only_reads_is_the_same_document() {
    let registry = registry_with(300, 3);
    let cache = FullFetchCache::new(Duration::from_secs(180));
    let gzip = cache.get(&registry, Format::Xml, Encoding::Gzip);
    register(&registry, "APP-42", "APP-42-new");
    cache.get(&registry, Format::Xml, Encoding::Gzip);
    // Runs kept from before plain was asked for are inflated, the changed one kept plain.
    let plain = cache.get(&registry, Format::Xml, Encoding::Plain);
    assert_eq!(plain.to_vec(), whole_full(&registry, Format::Xml));
    assert_ne!(read(&gzip, Encoding::Gzip), plain.to_vec());
}
