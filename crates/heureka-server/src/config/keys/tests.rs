//! The key table checked against itself: each test fails naming the entry that is wrong, so an
//! inconsistent entry cannot get past `cargo test`.

use heureka_config::names::{is_canonical, shape_of, Shape};

use super::super::names::names;
use super::{Binding, KEYS};

/// The keys `heureka_config::load` reads before anything is bound, to choose the files
/// (`early` in its `lib.rs`): the ones an entry may leave to the loader.
const READ_BY_THE_LOADER: &[&str] = &[
    "spring.config.location",
    "spring.config.additional-location",
    "spring.config.name",
    "spring.profiles.active",
];

#[test]
fn every_name_is_in_springs_canonical_form() {
    for key in KEYS {
        assert!(
            is_canonical(key.name),
            "{}: not in Spring's canonical form (lower-case kebab-case elements, then `.<key>` \
             for a map's entries or `[<n>].` for a list's)",
            key.name
        );
    }
}

#[test]
fn no_two_entries_are_the_same_key() {
    if let Some((key, first)) = names().first_repeat(KEYS.iter().map(|key| key.name)) {
        panic!("{key}: the same key as {first} in Spring's relaxed names");
    }
}

#[test]
fn every_name_has_the_shape_its_binding_reads() {
    for key in KEYS {
        let reads = key.reads();
        let named = shape_of(key.name);
        assert_eq!(
            named,
            Some(reads),
            "{}: the name's shape is {named:?}, its binding reads {reads:?}",
            key.name
        );
    }
}

#[test]
fn an_older_name_names_a_bound_key_and_says_so() {
    for key in KEYS {
        let Binding::OlderNameOf(newer) = key.binding else {
            continue;
        };
        let target = KEYS.iter().find(|target| target.name == newer);
        let target = target.unwrap_or_else(|| panic!("{}: {newer} is not in the table", key.name));
        assert!(
            matches!(target.binding, Binding::Bound(_)) && target.reads() == Shape::Single,
            "{}: {newer} is not bound as one key",
            key.name
        );
        assert_eq!(key.about, format!("older name of {newer}"), "{}", key.name);
    }
}

#[test]
fn an_inert_key_says_so_in_help() {
    for key in KEYS {
        if matches!(key.binding, Binding::Inert) {
            assert!(
                key.about.contains("inert"),
                "{}: its --help line must say it is inert",
                key.name
            );
        }
    }
}

#[test]
fn the_keys_left_to_the_loader_are_the_ones_it_reads() {
    let left: Vec<&str> = KEYS
        .iter()
        .filter(|key| matches!(key.binding, Binding::Loader))
        .map(|key| key.name)
        .collect();
    for name in &left {
        assert!(
            READ_BY_THE_LOADER.contains(name),
            "{name}: left to the loader, which does not read it"
        );
    }
    for name in READ_BY_THE_LOADER {
        assert!(
            left.contains(name),
            "{name}: read by the loader, not in the table as Loader"
        );
    }
}
