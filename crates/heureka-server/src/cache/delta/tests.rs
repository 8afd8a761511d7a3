//! The delta: equal to a whole encoding in every form, after changes, purges and cancels.

use std::time::Duration;

use heureka_wire::Format;

use super::*;
use crate::cache::encoding::Encoding;
use crate::cache::fixtures::{
    assert_a_registration_recompresses_one_run, assert_each_body_built_once_per_version,
    assert_every_form_equals_a_whole_encoding, read, registry_with, whole_delta, FORMATS,
};
use crate::store::Store;

#[test]
fn delta_written_one_application_at_a_time_equals_a_whole_encoding() {
    let registry = registry_with(40, 3);
    registry
        .write(|registry, _| registry.cancel("APP-7", "APP-7-1", heureka_core::Origin::Client, 1));
    assert_every_form_equals_a_whole_encoding::<Delta>(&registry, whole_delta);
}

#[test]
fn large_delta_fetches_equal_a_whole_encoding_in_both_formats() {
    assert_every_form_equals_a_whole_encoding::<Delta>(&registry_with(1_500, 4), whole_delta);
}

#[test]
fn identical_delta_fetches_build_each_body_once_per_version_and_a_write_once_more() {
    assert_each_body_built_once_per_version::<Delta>(&registry_with(40, 3), whole_delta, "APP-9");
}

fn register_at(registry: &Store, app: &str, id: &str, now: i64) {
    let instance = heureka_core::Instance::new(app, id, "host", "10.0.0.1", 0);
    registry.write(|registry, _| registry.register(instance, heureka_core::Origin::Client, now));
}

#[test]
fn a_delta_after_one_change_re_encodes_only_that_changes_run() {
    assert_a_registration_recompresses_one_run::<Delta>(whole_delta);
}

#[test]
fn a_purge_that_shrinks_an_applications_delta_without_changing_it_renews_its_run() {
    // One application, so its run's members are the same before and after but for the
    // number of its delta items.
    let registry = registry_with(1, 3);
    register_at(&registry, "APP-0", "APP-0-late", 100_000);
    let cache = DeltaCache::new(Duration::from_secs(180));
    for format in FORMATS {
        for encoding in Encoding::ALL {
            cache.get(&registry, format, encoding);
        }
    }
    // Retention is 180 s: this drops the items queued at 0 and keeps APP-0-late, so
    // APP-0's part of the delta shrinks while its version stays.
    registry.write(|registry, _| registry.purge_recently_changed(190_000));
    for format in FORMATS {
        for encoding in Encoding::ALL {
            let body = cache.get(&registry, format, encoding);
            assert_eq!(read(&body, encoding), whole_delta(&registry, format));
        }
    }
}

#[test]
fn a_delta_shows_an_application_whose_last_instance_was_cancelled() {
    let registry = registry_with(40, 2);
    let cache = DeltaCache::new(Duration::from_secs(180));
    cache.get(&registry, Format::Json, Encoding::Gzip);
    for id in ["APP-8-0", "APP-8-1"] {
        registry.write(|registry, _| registry.cancel("APP-8", id, heureka_core::Origin::Client, 1));
    }
    for format in FORMATS {
        for encoding in Encoding::ALL {
            let body = cache.get(&registry, format, encoding);
            let text = read(&body, encoding);
            assert_eq!(text, whole_delta(&registry, format));
            assert!(String::from_utf8(text).unwrap().contains("DELETED"));
        }
    }
}
