//! The key table checked against itself: each test fails naming the entry that is wrong, so an
//! inconsistent entry cannot get past `cargo test`.

use heureka_config::names::Shape;

use super::{
    names, Binding, Draft, Key, APPLICATION_INSTANCE_ID, CLIENT_HOSTNAME, CLIENT_IP_ADDRESS,
    IGNORED_INTERFACES, KEYS, PREFERRED_NETWORKS, REGION, REMOTE_REGIONS, SERVER_PORT,
    VCAP_INSTANCE_ID,
};

/// The names Spring Cloud reads verbatim with `Environment.getProperty` (Commons' `IdUtils`),
/// which are therefore spelt as it spells them, `_` and all.
const READ_VERBATIM: &[&str] = &[
    "spring.application.instance_id",
    "vcap.application.instance_id",
];

/// The entries code reads by name outside the table walk (the loader, the rules, the
/// placeholder fallback): each must be an entry of the table, or the walk would not know it.
const READ_BY_NAME: &[&Key] = &[
    &APPLICATION_INSTANCE_ID,
    &VCAP_INSTANCE_ID,
    &CLIENT_HOSTNAME,
    &CLIENT_IP_ADDRESS,
    &SERVER_PORT,
    &REGION,
    &REMOTE_REGIONS,
    &PREFERRED_NETWORKS,
    &IGNORED_INTERFACES,
];

#[test]
fn every_name_is_in_springs_canonical_form() {
    for key in KEYS {
        assert!(
            is_kebab_case(key.name) || READ_VERBATIM.contains(&key.name),
            "{}: not in Spring's canonical form (lower-case kebab-case elements, then `.<key>` \
             for a map's entries)",
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
fn every_key_read_by_name_is_in_the_table() {
    for named in READ_BY_NAME {
        let entry = KEYS.iter().find(|key| key.name == named.name);
        let entry = entry.unwrap_or_else(|| panic!("{}: read by name, not in KEYS", named.name));
        assert!(
            same_kind(entry.binding, named.binding),
            "{}: the table's entry is not the named one",
            named.name
        );
    }
}

#[test]
fn the_rule_and_placeholder_keys_are_read_by_name() {
    for key in KEYS {
        if matches!(key.binding, Binding::ByRule | Binding::Placeholder) {
            assert!(
                READ_BY_NAME.iter().any(|named| named.name == key.name),
                "{}: no binding reads it and no rule names it",
                key.name
            );
        }
    }
}

fn same_kind(a: Binding<Draft>, b: Binding<Draft>) -> bool {
    std::mem::discriminant(&a) == std::mem::discriminant(&b)
}

/// Lower-case kebab-case elements; a map's entries end in `.<key>`. The client's table has no
/// lists, so a list's `[<n>].`, which `names::is_canonical` also accepts, is not allowed here.
fn is_kebab_case(name: &str) -> bool {
    !name.contains("[<n>].") && heureka_config::names::is_canonical(name)
}

/// The shape a name has, or `None` when its marker is misplaced: `names::shape_of`, but the
/// client's table has no lists, and a single key here may not hold a stray `>` either.
fn shape_of(name: &str) -> Option<Shape> {
    match heureka_config::names::shape_of(name)? {
        Shape::Indexed => None,
        Shape::Single if name.contains('>') => None,
        shape => Some(shape),
    }
}
