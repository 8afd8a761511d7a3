//! A large build encodes its stale runs between registry locks, and its plan keeps them.

use std::collections::HashMap;
use std::time::Duration;

use heureka_wire::Format;

use super::*;
use crate::cache::delta::Delta;
use crate::cache::encoding::Encoding;
use crate::cache::fixtures::{cancel, read, register, registry_with, whole_delta, whole_full};
use crate::cache::full::Full;
use crate::cache::pages::Pages;

const PLAIN: Wanted = Wanted {
    gzip: false,
    plain: true,
};

/// Runs' plain bytes by first application, to tell kept runs (same allocation) from
/// re-encoded ones.
fn plain_runs(runs: &Runs) -> HashMap<String, Bytes> {
    let runs = runs.by_first_app.iter();
    runs.map(|(name, run)| (name.to_string(), run.plain.clone().expect("plain")))
        .collect()
}

const MAX_AGE: Duration = Duration::from_secs(180);

/// A registry of 1,500 applications, and runs in `format` that the unlocked pass of a build
/// of `S` has encoded from it.
fn unlocked<S: Source>(format: Format) -> (Store, ApplicationsPieces, Runs) {
    let registry = registry_with(1_500, 4);
    let pieces = ApplicationsPieces { format };
    let mut runs = Runs::default();
    runs.encode_stale_unlocked::<S>(&registry, pieces, MAX_AGE, PLAIN);
    (registry, pieces, runs)
}

/// What a client reads of the runs' gzip body, uncompressed.
fn gzip_read(runs: &mut Runs, pieces: ApplicationsPieces) -> Vec<u8> {
    read(&runs.gzip_body(pieces, true), Encoding::Gzip)
}

/// A large build's unlocked pass encodes its runs, the plan keeps every one of them, and
/// the body equals a whole encoding (`whole`).
fn assert_plan_keeps_the_unlocked_runs<S: Source>(whole: fn(&Store, Format) -> Vec<u8>) {
    let (registry, pieces, mut runs) = unlocked::<S>(Format::Json);
    let encoded = plain_runs(&runs);
    assert!(encoded.len() > 10, "the pass encoded the runs");
    runs.replan::<S>(&registry, pieces, MAX_AGE, PLAIN);
    let planned = plain_runs(&runs);
    assert_eq!(planned.len(), encoded.len());
    assert!(planned
        .iter()
        .all(|(name, plain)| encoded[name].as_ptr() == plain.as_ptr()));
    assert_eq!(gzip_read(&mut runs, pieces), whole(&registry, Format::Json));
}

#[test]
fn a_large_build_encodes_before_its_plan_and_the_plan_keeps_all_of_it() {
    assert_plan_keeps_the_unlocked_runs::<Full>(whole_full);
}

#[test]
fn a_change_after_the_unlocked_encoding_is_encoded_again_by_the_plan() {
    let (registry, pieces, mut runs) = unlocked::<Full>(Format::Xml);
    let encoded = plain_runs(&runs);
    register(&registry, "APP-42", "APP-42-new");
    runs.replan::<Full>(&registry, pieces, MAX_AGE, PLAIN);
    let re_encoded = plain_runs(&runs)
        .iter()
        .filter(|(name, plain)| encoded[*name].as_ptr() != plain.as_ptr())
        .count();
    assert_eq!(re_encoded, 1);
    assert_eq!(
        gzip_read(&mut runs, pieces),
        whole_full(&registry, Format::Xml)
    );
}

#[test]
fn a_large_delta_build_encodes_before_its_plan_and_the_plan_keeps_all_of_it() {
    assert_plan_keeps_the_unlocked_runs::<Delta>(whole_delta);
}

#[test]
fn delta_changes_after_the_unlocked_encoding_are_encoded_again_by_the_plan() {
    let (registry, pieces, mut runs) = unlocked::<Delta>(Format::Xml);
    register(&registry, "APP-42", "APP-42-new");
    // Replaces APP-7's live item by a DELETED one: same number of items.
    let now = registry.read().version() as i64;
    assert!(registry.write(|registry, _| registry.cancel(
        "APP-7",
        "APP-7-1",
        heureka_core::Origin::Client,
        now
    )));
    runs.replan::<Delta>(&registry, pieces, MAX_AGE, PLAIN);
    assert_eq!(
        gzip_read(&mut runs, pieces),
        whole_delta(&registry, Format::Xml)
    );
}

#[test]
fn a_build_after_a_few_changes_skips_the_unlocked_pass_and_one_after_many_does_not() {
    let registry = registry_with(1_500, 4);
    let pieces = ApplicationsPieces {
        format: Format::Json,
    };
    let mut runs = Runs::default();
    assert!(runs.may_encode_much(registry.read().version(), registry.instant(), MAX_AGE));
    runs.replan::<Full>(&registry, pieces, MAX_AGE, PLAIN);
    register(&registry, "APP-42", "APP-42-new");
    assert!(!runs.may_encode_much(registry.read().version(), registry.instant(), MAX_AGE));
    for n in 0..500 {
        register(&registry, &format!("APP-{n}"), "another");
    }
    assert!(runs.may_encode_much(registry.read().version(), registry.instant(), MAX_AGE));
    assert!(runs.may_encode_much(runs.version, registry.instant(), Duration::ZERO));
}

/// A body of several pages reads as the whole encoding, and after one registration all of
/// its pages but one or two are the same buffers as before.
#[test]
fn a_registration_changes_one_or_two_pages_of_a_large_gzip_body() {
    let registry = registry_with(1_500, 40);
    let pieces = ApplicationsPieces {
        format: Format::Json,
    };
    let mut runs = Runs {
        pages: Pages::of_about(64 * 1024),
        ..Runs::default()
    };
    runs.replan::<Full>(&registry, pieces, MAX_AGE, PLAIN);
    let before = runs.gzip_parts(pieces, true, 0);
    assert!(before.len() > 4, "{} parts", before.len());
    let read_parts = |parts: &[Bytes]| read(&CachedBody::of(parts.to_vec()), Encoding::Gzip);
    assert_eq!(read_parts(&before), whole_full(&registry, Format::Json));

    register(&registry, "APP-777", "one-more");
    runs.replan::<Full>(&registry, pieces, MAX_AGE, PLAIN);
    let after = runs.gzip_parts(pieces, true, 0);
    let shared = |part: &Bytes| before.iter().any(|old| old.as_ptr() == part.as_ptr());
    let pages = &after[1..after.len() - 1];
    let copied = pages.iter().filter(|page| !shared(page)).count();
    assert!(
        (1..=2).contains(&copied),
        "{copied} of {} pages copied",
        pages.len()
    );
    assert_eq!(read_parts(&after), whole_full(&registry, Format::Json));
}

/// A change between two plans: an instance joins an application, one leaves (the application
/// goes with its last), or a new application comes.
#[derive(Clone, Copy, Debug)]
enum Edit {
    Join(usize),
    Leave(usize, usize),
    NewApp(usize),
}

fn edit() -> impl proptest::strategy::Strategy<Value = Edit> {
    use proptest::prelude::*;
    prop_oneof![
        (0..300usize).prop_map(Edit::Join),
        (0..300usize, 0..2usize).prop_map(|(app, n)| Edit::Leave(app, n)),
        (0..300usize).prop_map(Edit::NewApp),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    /// Whatever changed between plans, the runs a plan keeps whole and those it encodes again
    /// read as a whole encoding of the registry, plan after plan.
    #[test]
    fn every_plan_after_any_changes_reads_as_a_whole_encoding(
        batches in proptest::collection::vec(proptest::collection::vec(edit(), 1..8), 1..5)
    ) {
        let registry = registry_with(300, 2);
        let pieces = ApplicationsPieces { format: Format::Json };
        let mut runs = Runs::default();
        runs.replan::<Full>(&registry, pieces, MAX_AGE, PLAIN);
        for (round, batch) in batches.iter().enumerate() {
            for (k, edit) in batch.iter().enumerate() {
                match *edit {
                    Edit::Join(app) => {
                        register(&registry, &format!("APP-{app}"), &format!("new-{round}-{k}"))
                    }
                    Edit::Leave(app, n) => {
                        cancel(&registry, &format!("APP-{app}"), &format!("APP-{app}-{n}"))
                    }
                    Edit::NewApp(app) => {
                        register(&registry, &format!("NEW-{app}"), &format!("n-{round}-{k}"))
                    }
                }
            }
            runs.replan::<Full>(&registry, pieces, MAX_AGE, PLAIN);
            proptest::prop_assert_eq!(
                gzip_read(&mut runs, pieces),
                whole_full(&registry, Format::Json)
            );
        }
    }
}
