//! What the cache's tests share: a registry of numbered applications, writes to it, and what a
//! client reads, held against a whole encoding of the same document.

use std::io::Read;
use std::time::Duration;

use bytes::Bytes;
use heureka_core::Registry;
use heureka_wire::Format;

use super::body::CachedBody;
use super::document::DocumentCache;
use super::encoding::Encoding;
use super::source::Source;
use crate::store::Store;

pub(super) fn gunzip_single_member(data: &[u8]) -> Vec<u8> {
    // A single-member decoder (like httpx's): must not need to look past the first member.
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(data)
        .read_to_end(&mut out)
        .unwrap();
    out
}

pub(super) fn registry_with(apps: usize, per_app: usize) -> Store {
    let mut registry = Registry::new(heureka_core::RegistryPolicy::default(), 0);
    for app in 0..apps {
        for n in 0..per_app {
            let name = format!("APP-{app}");
            let instance =
                heureka_core::Instance::new(&name, &format!("{name}-{n}"), "host", "10.0.0.1", 0);
            registry.register(instance, heureka_core::Origin::Client, 0);
        }
    }
    store(registry)
}

/// A store with no sinks, on the wall clock: the caches only read it.
fn store(registry: Registry) -> Store {
    Store::new(registry, crate::clock::Clock::System, Vec::new())
}

/// The deflate segments of a cache's JSON runs, to tell kept runs (same allocation) from
/// recompressed ones.
pub(super) fn compressed_runs<S>(cache: &DocumentCache<S>) -> Vec<Bytes> {
    cache
        .json
        .runs
        .lock()
        .by_first_app
        .values()
        .filter_map(|run| run.deflated.clone())
        .collect()
}

pub(super) fn register(registry: &Store, app: &str, id: &str) {
    let instance = heureka_core::Instance::new(app, id, "host", "10.0.0.1", 0);
    registry.write(|registry, _| {
        let now = registry.version() as i64;
        registry.register(instance, heureka_core::Origin::Client, now);
    });
}

pub(super) fn cancel(registry: &Store, app: &str, id: &str) {
    registry.write(|registry, _| {
        let now = registry.version() as i64;
        registry.cancel(app, id, heureka_core::Origin::Client, now);
    });
}

pub(super) fn whole_full(registry: &Store, format: Format) -> Vec<u8> {
    heureka_wire::encode_applications(&registry.read().applications(), format)
}

pub(super) fn whole_delta(registry: &Store, format: Format) -> Vec<u8> {
    heureka_wire::encode_applications(&registry.read().delta(), format)
}

/// What a client reads in `encoding`, uncompressed.
pub(super) fn read(body: &CachedBody, encoding: Encoding) -> Vec<u8> {
    match encoding {
        Encoding::Gzip => gunzip_single_member(&body.to_vec()),
        Encoding::Plain => body.to_vec(),
    }
}

pub(super) const FORMATS: [Format; 2] = [Format::Json, Format::Xml];

/// Every format and encoding of `registry`'s document equals a whole encoding (`whole`).
pub(super) fn assert_every_form_equals_a_whole_encoding<S: Source>(
    registry: &Store,
    whole: fn(&Store, Format) -> Vec<u8>,
) {
    let cache = DocumentCache::<S>::new(Duration::from_secs(180));
    for format in FORMATS {
        for encoding in Encoding::ALL {
            let body = cache.get(registry, format, encoding);
            assert_eq!(read(&body, encoding), whole(registry, format));
        }
    }
}

/// After a registration in a document of 300 applications, one run is compressed again and the
/// gzip body equals a whole encoding (`whole`).
pub(super) fn assert_a_registration_recompresses_one_run<S: Source>(
    whole: fn(&Store, Format) -> Vec<u8>,
) {
    let registry = registry_with(300, 3);
    let cache = DocumentCache::<S>::new(Duration::from_secs(180));
    cache.get(&registry, Format::Json, Encoding::Gzip);
    let before = compressed_runs(&cache);
    assert!(before.len() > 3, "the document is split into runs");
    register(&registry, "APP-42", "APP-42-new");
    let body = cache.get(&registry, Format::Json, Encoding::Gzip);
    let recompressed = compressed_runs(&cache)
        .iter()
        .filter(|run| !before.iter().any(|old| old.as_ptr() == run.as_ptr()))
        .count();
    assert_eq!(recompressed, 1);
    assert_eq!(read(&body, Encoding::Gzip), whole(&registry, Format::Json));
}

/// Identical reads of every format and encoding build each body once per registry version (and
/// equal a whole encoding, `whole`); a registration in `app` makes each one build more.
pub(super) fn assert_each_body_built_once_per_version<S: Source>(
    registry: &Store,
    whole: fn(&Store, Format) -> Vec<u8>,
    app: &str,
) {
    let cache = DocumentCache::<S>::new(Duration::from_secs(180));
    for expected_builds in [1, 2] {
        for _ in 0..5 {
            for format in FORMATS {
                for encoding in Encoding::ALL {
                    let body = cache.get(registry, format, encoding);
                    assert_eq!(read(&body, encoding), whole(registry, format));
                }
            }
        }
        for format in FORMATS {
            for encoding in Encoding::ALL {
                assert_eq!(
                    cache.builds(format, encoding),
                    expected_builds,
                    "{format:?} {encoding:?}"
                );
            }
        }
        register(registry, app, &format!("{app}-new"));
    }
}
