//! The key table checked against itself: each test fails naming the entry that is wrong, so an
//! inconsistent entry cannot get past `cargo test`.

use std::collections::HashMap;

use super::super::binding::Shape;
use super::super::names::canonical;
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
            is_kebab_case(key.name),
            "{}: not in Spring's canonical form (lower-case kebab-case elements, then `.<key>` \
             for a map's entries or `[<n>].` for a list's)",
            key.name
        );
    }
}

#[test]
fn no_two_entries_are_the_same_key() {
    let mut seen = HashMap::new();
    for key in KEYS {
        if let Some(first) = seen.insert(canonical(key.name), key.name) {
            panic!(
                "{}: the same key as {first} in Spring's relaxed names",
                key.name
            );
        }
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

/// Lower-case kebab-case elements; a map's entries end in `.<key>`, a list's have `[<n>]`.
fn is_kebab_case(name: &str) -> bool {
    let name = name.replace("[<n>].", ".");
    let name = match name.rsplit_once('.') {
        Some((prefix, last)) if is_marker(last) => prefix,
        _ => &name,
    };
    name.split('.').all(|element| {
        !element.is_empty()
            && !element.starts_with('-')
            && !element.ends_with('-')
            && element
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    })
}

/// The shape a name has, or `None` when its markers are misplaced.
fn shape_of(name: &str) -> Option<Shape> {
    let markers = name.matches('<').count();
    if let Some((list, property)) = name.split_once("[<n>].") {
        return (markers == 1 && !list.contains('[') && !property.contains(['[', '.']))
            .then_some(Shape::Indexed);
    }
    match name.rsplit_once('.') {
        Some((_, last)) if is_marker(last) => (markers == 1).then_some(Shape::Map),
        _ => (markers == 0 && !name.contains('[')).then_some(Shape::Single),
    }
}

/// `<zone>`, `<target>`: a map key written as a placeholder.
fn is_marker(element: &str) -> bool {
    element.len() > 2 && element.starts_with('<') && element.ends_with('>')
}
