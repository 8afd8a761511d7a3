//! Finding the key table's entries by any relaxed spelling, and what the loader needs to know
//! of them: the relaxed-name rules, the keys to look up in the environment, and the values of
//! `${placeholders}` that no source sets.

use std::collections::HashMap;
use std::sync::OnceLock;

use heureka_config::names::Shape;
use heureka_config::{Names, Schema};

use super::keys::{Key, DEFAULT_ZONE, KEYS};

/// The bound keys in canonical form, in table order, computed once: a load looks keys up a
/// few hundred times and canonicalising the whole table each time dominated its cost.
pub(crate) fn canonical_keys() -> &'static [(String, &'static Key)] {
    static CANONICAL_KEYS: OnceLock<Vec<(String, &'static Key)>> = OnceLock::new();
    CANONICAL_KEYS.get_or_init(|| KEYS.iter().map(|key| (canonical(key.name), key)).collect())
}

/// The server's relaxed-name rules: the table's maps (`logging.level.<target>`…) keep their
/// map keys as written (`defaultZone`, `com.example`).
pub(crate) fn names() -> &'static Names {
    static NAMES: OnceLock<Names> = OnceLock::new();
    NAMES.get_or_init(|| {
        let map_prefixes: Vec<&str> = KEYS
            .iter()
            .filter(|key| key.reads() == Shape::Map)
            .map(Key::map_prefix)
            .collect();
        Names::new(&map_prefixes)
    })
}

/// Spring's canonical form of `name` under the server's rules.
pub(crate) fn canonical(name: &str) -> String {
    names().canonical(name)
}

/// What the loader needs to know of the server's keys: every key in the table is looked up in
/// the environment, and so are the two map entries everyone sets there (`defaultZone`,
/// `root`); other map entries only when a file or the command line names them.
pub(crate) fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let default_zone = format!("eureka.client.service-url.{}", DEFAULT_ZONE.0);
        Schema::new(
            names().clone(),
            KEYS.iter()
                .filter(|key| !key.name.contains('<'))
                .map(|key| key.name.to_owned())
                .chain([default_zone, "logging.level.root".to_owned()]),
        )
    })
}

/// The value of a `${placeholder}` no source and no `:default` gives: the key's default, or
/// for `spring.cloud.client.hostname` the `HOSTNAME` variable (else `localhost`).
pub(crate) fn placeholder_fallback(
    key: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let table_default = default_of(key);
    if !table_default.is_empty() {
        return Some(table_default.to_owned());
    }
    if canonical(key) == canonical("spring.cloud.client.hostname") {
        // Spring Cloud's HostInfoEnvironmentPostProcessor provides this one; instance ids are
        // commonly built from it.
        return Some(env("HOSTNAME").unwrap_or_else(|| "localhost".to_owned()));
    }
    None
}

/// The key-table entry for `name` in any relaxed spelling.
pub(crate) fn find(name: &str) -> Option<&'static Key> {
    by_name(name).map(|(_, key)| key)
}

/// Each key by its own spelling.
fn spelled() -> &'static HashMap<&'static str, (&'static str, &'static Key)> {
    static SPELLED: OnceLock<HashMap<&'static str, (&'static str, &'static Key)>> = OnceLock::new();
    SPELLED.get_or_init(|| {
        canonical_keys()
            .iter()
            .map(|(canonical_name, key)| (key.name, (canonical_name.as_str(), *key)))
            .collect()
    })
}

fn by_name(name: &str) -> Option<(&'static str, &'static Key)> {
    static CANONICAL: OnceLock<HashMap<&'static str, &'static Key>> = OnceLock::new();
    if let Some(found) = spelled().get(name) {
        return Some(*found);
    }
    let table = CANONICAL.get_or_init(|| {
        canonical_keys()
            .iter()
            .map(|(canonical_name, key)| (canonical_name.as_str(), *key))
            .collect()
    });
    table
        .get_key_value(canonical(name).as_str())
        .map(|(canonical_name, key)| (*canonical_name, *key))
}

/// The default of a bound key, or "" when it has none.
pub(crate) fn default_of(name: &str) -> &'static str {
    find(name).map_or("", |key| key.default)
}
