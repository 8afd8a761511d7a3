//! The key table as the loader and the binder use it: its lookups by any relaxed spelling
//! (`heureka_config::table`), the keys to look up in the environment, and the values of
//! `${placeholders}` that no source sets.

use std::sync::OnceLock;

use heureka_config::table::Table;
use heureka_config::{Names, Schema};

use super::binding::Draft;
use super::keys::KEYS;
use super::rules::DEFAULT_ZONE;

/// The server's key table with its lookups, worked out once.
pub(crate) fn table() -> &'static Table<Draft> {
    static TABLE: OnceLock<Table<Draft>> = OnceLock::new();
    TABLE.get_or_init(|| Table::new(KEYS))
}

/// The server's relaxed-name rules: the table's maps (`logging.level.<target>`…) keep their
/// map keys as written (`defaultZone`, `com.example`).
pub(crate) fn names() -> &'static Names {
    table().names()
}

/// Spring's canonical form of `name` under the server's rules.
pub(crate) fn canonical(name: &str) -> String {
    table().canonical(name)
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
            table()
                .env_keys()
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
    if let Some(table_default) = table().placeholder_default(key) {
        return Some(table_default);
    }
    if canonical(key) == canonical("spring.cloud.client.hostname") {
        // Spring Cloud's HostInfoEnvironmentPostProcessor provides this one; instance ids are
        // commonly built from it.
        return Some(env("HOSTNAME").unwrap_or_else(|| "localhost".to_owned()));
    }
    None
}
