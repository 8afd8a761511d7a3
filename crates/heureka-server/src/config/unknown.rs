//! Typo protection for the namespaces Heureka owns, `eureka.server.*` and `heureka.*`, and for
//! the TLS keys `server.ssl.*` and `eureka.client.tls.*`: a
//! key there that is neither in the table nor one of Spring's that Heureka ignores is a
//! start-up error, with the closest known key as a hint.

use std::sync::OnceLock;

use heureka_config::names::Shape;
use heureka_config::{ConfigError, Properties};

use super::names::{canonical, table};

/// `eureka.server.*` keys of Spring Cloud's `EurekaServerConfigBean` (spec §9.2) that Heureka
/// accepts and ignores: they tune AWS binding and peer connection pools, none of which Heureka
/// has. Listed so that only real typos are errors.
const IGNORED_SERVER_KEYS: &[&str] = &[
    "peer-node-total-connections",
    "peer-node-total-connections-per-host",
    "peer-node-connection-idle-timeout-seconds",
    "min-threads-for-peer-replication",
    "max-threads-for-peer-replication",
    "max-idle-thread-age-in-minutes-for-peer-replication",
    "max-elements-in-status-replication-pool",
    "min-threads-for-status-replication",
    "max-threads-for-status-replication",
    "max-idle-thread-in-minutes-age-for-status-replication",
    "number-of-replication-retries",
    "min-available-instances-for-peer-replication",
    "peer-eureka-status-refresh-time-interval-ms",
    "log-identity-headers",
    "initial-capacity-of-response-cache",
    "json-codec-name",
    "xml-codec-name",
    "prime-aws-replica-connections",
    "use-aws-asg-api",
    "a-w-s-access-id",
    "a-w-s-secret-key",
    "e-i-p-bind-rebind-retries",
    "e-i-p-binding-retry-interval-ms",
    "e-i-p-binding-retry-interval-ms-when-unbound",
    "a-s-g-query-timeout-ms",
    "a-s-g-update-interval-ms",
    "a-s-g-cache-expiry-timeout-ms",
    "list-auto-scaling-groups-role-name",
    "route53-bind-rebind-retries",
    "route53-binding-retry-interval-ms",
    "route53-domain-t-t-l",
    "binding-strategy",
    // Legacy names of eureka.instance.registry.* (older Spring Cloud releases).
    "expected-number-of-renews-per-min",
    "default-open-for-traffic-count",
];

/// Map-valued `eureka.server.*` keys, accepted with any sub-key and ignored.
const IGNORED_SERVER_MAPS: &[&str] = &["experimental"];

/// Prefixes under which every key must be in the table: Heureka's own, and the TLS keys, where
/// a mistyped name would quietly weaken what is served.
const OWNED_PREFIXES: &[&str] = &["heureka", "server.ssl", "eureka.client.tls"];

/// Whether a canonical key under `eureka.server.` or `heureka.` is one Heureka knows. Keys
/// elsewhere are always accepted, as Spring ignores properties nothing binds.
pub(crate) fn is_accepted(canonical_name: &str) -> bool {
    if let Some(rest) = canonical_name.strip_prefix("eureka.server.") {
        let first = rest.split(['.', '[']).next().unwrap_or(rest);
        static IGNORED: OnceLock<Vec<String>> = OnceLock::new();
        let ignored = IGNORED.get_or_init(|| {
            IGNORED_SERVER_KEYS
                .iter()
                .chain(IGNORED_SERVER_MAPS)
                .map(|name| canonical(name))
                .collect()
        });
        return table().find(canonical_name).is_some()
            || is_map_entry(canonical_name)
            || ignored.iter().any(|name| name == first);
    }
    if let Some(accepted) = list_entry_is_accepted(canonical_name) {
        return accepted;
    }
    if OWNED_PREFIXES
        .iter()
        .any(|prefix| canonical_name.starts_with(&format!("{}.", canonical(prefix))))
    {
        return table().find(canonical_name).is_some() || is_map_entry(canonical_name);
    }
    true
}

/// Whether a name is an entry of one of the table's maps
/// (`eureka.server.remote-region-urls-with-name.eu`).
fn is_map_entry(canonical_name: &str) -> bool {
    table()
        .canonical_keys()
        .iter()
        .filter(|(_, key)| key.reads() == Shape::Map)
        .any(|(_, key)| {
            canonical_name
                .strip_prefix(&canonical(key.map_prefix()))
                .is_some_and(|rest| rest.starts_with('.') && rest.len() > 1)
        })
}

/// For a name in one of the table's lists (`heureka.webhooks[…`): whether it is an index, then
/// one of the properties the table has for that list. `None` for other names.
fn list_entry_is_accepted(canonical_name: &str) -> Option<bool> {
    let (list, rest) = canonical_name.split_once('[')?;
    let properties: Vec<String> = table()
        .canonical_keys()
        .iter()
        .map(|(_, key)| key)
        .filter(|key| key.reads() == Shape::Indexed)
        .map(|key| key.list_property())
        .filter(|(its_list, _)| canonical(its_list) == list)
        .map(|(_, property)| canonical(property))
        .collect();
    if properties.is_empty() {
        return None;
    }
    Some(rest.split_once("].").is_some_and(|(index, property)| {
        index.chars().all(|c| c.is_ascii_digit()) && properties.iter().any(|p| p == property)
    }))
}

/// The bound key closest to a mistyped one, if any is close enough to be a likely typo.
pub(crate) fn suggestion(canonical_name: &str) -> Option<&'static str> {
    let length = canonical_name.chars().count();
    table()
        .canonical_keys()
        .iter()
        .filter(|(_, key)| !key.name.contains('<'))
        // The distance is at least the difference in length: most keys need no computing.
        .filter(|(name, _)| name.chars().count().abs_diff(length) <= 3)
        .map(|(name, key)| (edit_distance(name, canonical_name), key.name))
        .filter(|(distance, _)| *distance <= 3)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// The first key of `properties` that Heureka does not accept, as an error naming its source.
pub(crate) fn reject_unknown_keys(properties: &Properties) -> Result<(), ConfigError> {
    for (canonical, property) in properties.iter() {
        if is_accepted(canonical) {
            continue;
        }
        let hint = suggestion(canonical)
            .map(|name| format!("; did you mean {name}?"))
            .unwrap_or_default();
        return Err(ConfigError::new(format!(
            "unknown key {} ({}): not a setting Heureka or Spring Cloud's Eureka server has{hint} \
             (see --help)",
            property.name, property.origin
        )));
    }
    Ok(())
}
