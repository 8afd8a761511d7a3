//! The merged documents' cache: built once per key, and only the current versions kept.

use std::cell::Cell;

use heureka_core::Applications;
use heureka_wire::Format;

use super::*;

fn key(versions: (u64, u64), encoding: Encoding) -> MergedKey {
    MergedKey {
        delta: false,
        regions: vec![0],
        format: Format::Json,
        encoding,
        versions,
    }
}

fn empty() -> Applications {
    Applications {
        versions_delta: 1,
        apps_hashcode: String::new(),
        applications: Vec::new(),
    }
}

#[test]
fn a_body_is_built_once_per_key() {
    let cache = MergedCache::default();
    let builds = Cell::new(0);
    let build = || {
        builds.set(builds.get() + 1);
        empty()
    };
    let first = cache.get(key((1, 1), Encoding::Plain), build);
    let again = cache.get(key((1, 1), Encoding::Plain), build);
    assert_eq!(first, again);
    assert_eq!(builds.get(), 1);
    assert_eq!(cache.ready(&key((1, 1), Encoding::Plain)), Some(first));
}

#[test]
fn a_gzip_body_inflates_to_the_plain_one() {
    use std::io::Read;
    let cache = MergedCache::default();
    let plain = cache.get(key((1, 1), Encoding::Plain), empty);
    let gzip = cache.get(key((1, 1), Encoding::Gzip), empty);
    let mut inflated = Vec::new();
    flate2::read::GzDecoder::new(&gzip[..])
        .read_to_end(&mut inflated)
        .unwrap();
    assert_eq!(inflated, plain.to_vec());
}

#[test]
fn bodies_of_older_versions_are_dropped_when_a_newer_one_is_built() {
    let cache = MergedCache::default();
    cache.get(key((1, 1), Encoding::Plain), empty);
    cache.get(key((1, 2), Encoding::Plain), empty);
    assert_eq!(cache.ready(&key((1, 1), Encoding::Plain)), None);
    assert!(cache.ready(&key((1, 2), Encoding::Plain)).is_some());
}
