//! A document cache's bodies: built once per version, ready without waiting, and only in the
//! encodings clients ask for.

use std::sync::Arc;

use super::*;
use crate::cache::delta::DeltaCache;
use crate::cache::fixtures::{read, register, registry_with, FORMATS};
use crate::cache::full::FullFetchCache;
use crate::cache::runs::Run;

#[test]
fn a_read_after_a_write_sees_it_in_every_document_format_and_encoding() {
    let registry = registry_with(40, 3);
    let full = FullFetchCache::new(Duration::from_secs(180));
    let delta = DeltaCache::new(Duration::from_secs(180));
    for n in 0..3 {
        let id = format!("APP-5-late-{n}");
        register(&registry, "APP-5", &id);
        for format in FORMATS {
            for encoding in Encoding::ALL {
                for body in [
                    full.get(&registry, format, encoding),
                    delta.get(&registry, format, encoding),
                ] {
                    let text = String::from_utf8(read(&body, encoding)).unwrap();
                    assert!(text.contains(&id), "{format:?} {encoding:?} misses {id}");
                }
            }
        }
    }
}

/// Whether every run of `slot` holds its plain bytes and its deflate segment.
fn forms_kept(slot: &Slot) -> (bool, bool) {
    let runs = slot.runs.lock();
    let all = |form: fn(&Run) -> bool| runs.by_first_app.values().all(form);
    (
        all(|run| run.plain.is_some()),
        all(|run| run.deflated.is_some()),
    )
}

#[test]
fn plain_only_reads_compress_nothing() {
    let registry = registry_with(300, 3);
    let full = FullFetchCache::new(Duration::from_secs(180));
    let delta = DeltaCache::new(Duration::from_secs(180));
    for _ in 0..2 {
        register(
            &registry,
            "APP-42",
            &format!("APP-42-{}", registry.read().version()),
        );
        for format in FORMATS {
            full.get(&registry, format, Encoding::Plain);
            delta.get(&registry, format, Encoding::Plain);
        }
    }
    for slot in [&full.json, &full.xml, &delta.json, &delta.xml] {
        assert_eq!(forms_kept(slot), (true, false));
    }
    for format in FORMATS {
        assert_eq!(full.builds(format, Encoding::Gzip), 0);
        assert_eq!(delta.builds(format, Encoding::Gzip), 0);
    }
}

#[test]
fn gzip_only_reads_keep_no_plain_copy() {
    let registry = registry_with(300, 3);
    let full = FullFetchCache::new(Duration::from_secs(180));
    let delta = DeltaCache::new(Duration::from_secs(180));
    for format in FORMATS {
        full.get(&registry, format, Encoding::Gzip);
        delta.get(&registry, format, Encoding::Gzip);
    }
    for slot in [&full.json, &full.xml, &delta.json, &delta.xml] {
        assert_eq!(forms_kept(slot), (false, true));
    }
}

#[test]
fn a_gzip_body_after_plain_only_reads_is_the_same_document() {
    let registry = registry_with(300, 3);
    let full = FullFetchCache::new(Duration::from_secs(180));
    let delta = DeltaCache::new(Duration::from_secs(180));
    for format in FORMATS {
        let plain = full.get(&registry, format, Encoding::Plain).to_vec();
        let gzip = full.get(&registry, format, Encoding::Gzip);
        assert_eq!(read(&gzip, Encoding::Gzip), plain);
        let plain = delta.get(&registry, format, Encoding::Plain).to_vec();
        let gzip = delta.get(&registry, format, Encoding::Gzip);
        assert_eq!(read(&gzip, Encoding::Gzip), plain);
    }
}

#[test]
fn concurrent_first_fetches_build_once() {
    let registry = registry_with(300, 3);
    let full = FullFetchCache::new(Duration::from_secs(180));
    let delta = DeltaCache::new(Duration::from_secs(180));
    let bodies: Vec<(CachedBody, CachedBody)> = std::thread::scope(|scope| {
        let readers: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    (
                        full.get(&registry, Format::Json, Encoding::Gzip),
                        delta.get(&registry, Format::Json, Encoding::Gzip),
                    )
                })
            })
            .collect();
        readers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    assert_eq!(full.builds(Format::Json, Encoding::Gzip), 1);
    assert_eq!(delta.builds(Format::Json, Encoding::Gzip), 1);
    for (full_body, delta_body) in &bodies {
        assert!(Arc::ptr_eq(&full_body.parts, &bodies[0].0.parts));
        assert!(Arc::ptr_eq(&delta_body.parts, &bodies[0].1.parts));
    }
}

#[test]
fn a_ready_body_is_taken_without_building_and_a_missing_one_is_not_built() {
    let registry = registry_with(40, 3);
    let full = FullFetchCache::new(Duration::from_secs(180));
    assert!(full
        .ready(&registry, Format::Json, Encoding::Gzip)
        .is_none());
    assert_eq!(full.builds(Format::Json, Encoding::Gzip), 0);
    let built = full.get(&registry, Format::Json, Encoding::Gzip);
    let ready = full.ready(&registry, Format::Json, Encoding::Gzip).unwrap();
    assert!(Arc::ptr_eq(&built.parts, &ready.parts));
    assert!(full
        .ready(&registry, Format::Json, Encoding::Plain)
        .is_none());
    register(&registry, "APP-1", "APP-1-new");
    assert!(full
        .ready(&registry, Format::Json, Encoding::Gzip)
        .is_none());
    assert_eq!(full.builds(Format::Json, Encoding::Gzip), 1);
}
