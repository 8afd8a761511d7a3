//! The table of every configuration key Heureka reads or accepts.
//!
//! `KEYS` is the single source of truth: the binder reads defaults from it, the environment
//! source derives variable names from it, and `--help` prints it, so the three cannot drift.

use std::collections::HashMap;
use std::sync::OnceLock;

use heureka_config::{Names, Schema};

/// One key the binder reads.
#[derive(Debug)]
pub(crate) struct Key {
    /// The Spring spelling (kebab-case). `<zone>` / `<target>` mark a map key.
    pub(crate) name: &'static str,
    /// The default as text; empty means "unset".
    pub(crate) default: &'static str,
    /// One line for `--help`.
    pub(crate) about: &'static str,
}

const fn key(name: &'static str, default: &'static str, about: &'static str) -> Key {
    Key {
        name,
        default,
        about,
    }
}

/// The default `eureka.client.service-url` map: Spring Cloud's `EurekaClientConfigBean`.
pub(crate) const DEFAULT_ZONE: (&str, &str) = ("defaultZone", "http://localhost:8761/eureka/");

pub(crate) const KEYS: &[Key] = &[
    key("server.port", "8761", "HTTP port (0 picks a free one)"),
    key("server.address", "0.0.0.0", "IP address to listen on"),
    key(
        "server.tomcat.connection-timeout",
        "20s",
        "a new connection's request head must arrive within",
    ),
    key(
        "server.tomcat.keep-alive-timeout",
        "60s",
        "an idle connection's next request head, within",
    ),
    key(
        "server.tomcat.max-connections",
        "8192",
        "connections served at once (then idle ones close)",
    ),
    key(
        "server.max-http-request-header-size",
        "8KB",
        "request line + headers limit (431)",
    ),
    key(
        "server.max-http-header-size",
        "",
        "older name of server.max-http-request-header-size",
    ),
    key(
        "spring.lifecycle.timeout-per-shutdown-phase",
        "30s",
        "grace for in-flight requests on SIGTERM",
    ),
    key("spring.application.name", "heureka", "application name"),
    key(
        "spring.security.user.name",
        "",
        "HTTP basic-auth user (needs the password too)",
    ),
    key(
        "spring.security.user.password",
        "",
        "HTTP basic-auth password",
    ),
    key(
        "spring.profiles.active",
        "",
        "profiles: also read application-{profile}.*",
    ),
    key(
        "spring.config.name",
        "application",
        "base name of the config files",
    ),
    key(
        "spring.config.location",
        "",
        "files/directories replacing the default locations",
    ),
    key(
        "spring.config.additional-location",
        "",
        "files/directories read on top of them",
    ),
    key(
        "eureka.server.enable-self-preservation",
        "true",
        "stop evicting when renewals drop",
    ),
    key(
        "eureka.server.renewal-percent-threshold",
        "0.85",
        "share of expected renewals, in (0, 1]",
    ),
    key(
        "eureka.server.renewal-threshold-update-interval-ms",
        "900000",
        "threshold recomputation",
    ),
    key(
        "eureka.server.expected-client-renewal-interval-seconds",
        "30",
        "client heartbeat period",
    ),
    key(
        "eureka.server.eviction-interval-timer-in-ms",
        "60000",
        "eviction task period",
    ),
    key(
        "eureka.server.response-cache-update-interval-ms",
        "30000",
        "read-only cache refresh",
    ),
    key(
        "eureka.server.response-cache-auto-expiration-in-seconds",
        "180",
        "cache entry lifetime",
    ),
    key(
        "eureka.server.use-read-only-response-cache",
        "true",
        "accepted; reads are always fresh",
    ),
    key(
        "eureka.server.retention-time-in-m-s-in-delta-queue",
        "180000",
        "delta queue retention",
    ),
    key(
        "eureka.server.delta-retention-timer-interval-in-ms",
        "30000",
        "delta queue pruning",
    ),
    key("eureka.server.disable-delta", "false", "serve no deltas"),
    key(
        "eureka.server.wait-time-in-ms-when-sync-empty",
        "300000",
        "refuse reads after empty sync",
    ),
    key(
        "eureka.server.enable-replicated-request-compression",
        "false",
        "gzip replication",
    ),
    key(
        "eureka.server.my-url",
        "",
        "this server's own URL among the peers",
    ),
    key(
        "eureka.server.registry-sync-retries",
        "0",
        "start-up sync attempts (5 when registering)",
    ),
    key(
        "eureka.server.registry-sync-retry-wait-ms",
        "30000",
        "wait between start-up sync attempts",
    ),
    key(
        "eureka.server.peer-eureka-nodes-update-interval-ms",
        "600000",
        "re-read the config for the peer list",
    ),
    key(
        "eureka.server.peer-node-connect-timeout-ms",
        "200",
        "replication connect timeout",
    ),
    key(
        "eureka.server.peer-node-read-timeout-ms",
        "200",
        "replication batch answer timeout",
    ),
    key(
        "eureka.server.max-elements-in-peer-replication-pool",
        "10000",
        "per-peer replication queue limit",
    ),
    key(
        "eureka.server.max-time-for-replication",
        "30000",
        "drop replication tasks older than this",
    ),
    key(
        "eureka.server.sync-when-timestamp-differs",
        "true",
        "adopt a peer's newer copy (409)",
    ),
    key(
        "eureka.server.batch-replication",
        "false",
        "accepted and inert; batches are always sent",
    ),
    key(
        "eureka.instance.registry.expected-number-of-clients-sending-renews",
        "1",
        "clients assumed before any register",
    ),
    key(
        "eureka.instance.registry.default-open-for-traffic-count",
        "1",
        "clients assumed when peers had none",
    ),
    key(
        "eureka.client.register-with-eureka",
        "true",
        "register with the peers",
    ),
    key(
        "eureka.client.fetch-registry",
        "true",
        "sync the registry from the peers",
    ),
    key(
        "eureka.client.eureka-server-read-timeout-seconds",
        "8",
        "start-up sync: wait for a peer's registry",
    ),
    key(
        "eureka.client.service-url.<zone>",
        "",
        "peer URLs, comma-separated",
    ),
    key(
        "eureka.client.region",
        "us-east-1",
        "region of the zones below",
    ),
    key(
        "eureka.client.availability-zones.<region>",
        "",
        "zones in order, comma-separated; own first",
    ),
    key("eureka.instance.hostname", "", "advertised host name"),
    key(
        "eureka.instance.lease-renewal-interval-in-seconds",
        "30",
        "this server's own heartbeat period",
    ),
    key(
        "eureka.instance.lease-expiration-duration-in-seconds",
        "90",
        "this server's own lease duration",
    ),
    key(
        "eureka.instance.prefer-ip-address",
        "false",
        "advertise the IP instead",
    ),
    key("eureka.instance.ip-address", "", "advertised IP address"),
    key(
        "eureka.instance.instance-id",
        "",
        "this server's instance id",
    ),
    key(
        "management.endpoints.web.exposure.include",
        "health,info,prometheus",
        "actuator endpoints served (* for all)",
    ),
    key(
        "management.endpoints.web.exposure.exclude",
        "",
        "actuator endpoints not served",
    ),
    key(
        "management.endpoints.web.base-path",
        "/actuator",
        "prefix of the actuator endpoints",
    ),
    key(
        "management.endpoint.health.show-details",
        "when-authorized",
        "never|when-authorized|always",
    ),
    key(
        "management.prometheus.metrics.export.enabled",
        "true",
        "serve /actuator/prometheus and /metrics",
    ),
    key(
        "management.metrics.export.prometheus.enabled",
        "true",
        "the same, Spring Boot 2's name",
    ),
    key(
        "server.tomcat.accesslog.enabled",
        "false",
        "log every request (as heureka.access-log)",
    ),
    key(
        "logging.level.<target>",
        "",
        "trace|debug|info|warn|error|off; root for all",
    ),
    key(
        "heureka.legacy-lease-expiry",
        "false",
        "reproduce Eureka's 2x lease expiry bug",
    ),
    key(
        "heureka.max-request-body-size",
        "1MB",
        "request body limit (B, KB, MB, GB)",
    ),
    key(
        "heureka.request-body-timeout",
        "30s",
        "a request body must arrive in full within (408)",
    ),
    key("heureka.base-path", "/eureka", "REST API prefix"),
    key(
        "heureka.access-log",
        "false",
        "log every request: method, path, status, time",
    ),
    key(
        "heureka.replication.anti-entropy-interval-ms",
        "10000",
        "compare with peers and repair (0 = off)",
    ),
    key(
        "heureka.replication.batch-delay-ms",
        "500",
        "longest a heartbeat waits to be batched",
    ),
    key(
        "heureka.replication.batch-size",
        "250",
        "most tasks in one replication batch",
    ),
    key("eureka.dashboard.enabled", "true", "serve the dashboard"),
    key(
        "eureka.dashboard.path",
        "/",
        "where the dashboard is served",
    ),
    key(
        "eureka.environment",
        "test",
        "environment shown on the dashboard",
    ),
    key(
        "eureka.datacenter",
        "default",
        "data center shown on the dashboard",
    ),
    key(
        "heureka.webhooks[<n>].url",
        "",
        "POST events to this URL (see docs/events.md)",
    ),
    key(
        "heureka.webhooks[<n>].events",
        "",
        "event types to send there (default: all but renewals)",
    ),
];

/// The properties of one `heureka.webhooks[<n>]` entry.
pub(crate) const WEBHOOK_PROPERTIES: &[&str] = &["url", "events"];

/// Keys whose last part is a map key that keeps its case (`defaultZone`, `com.example`).
pub(crate) const MAP_PREFIXES: &[&str] = &[
    "logging.level",
    "eureka.client.service-url",
    "eureka.client.availability-zones",
];

/// `eureka.server.*` keys of Spring Cloud's `EurekaServerConfigBean` (spec §9.2) that Heureka
/// accepts and ignores: they tune AWS binding, remote regions, peer connection pools and the
/// rate limiter, none of which Heureka has. Listed so that only real typos are errors.
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
    "rate-limiter-enabled",
    "rate-limiter-burst-size",
    "rate-limiter-registry-fetch-average-rate",
    "rate-limiter-full-fetch-average-rate",
    "rate-limiter-throttle-standard-clients",
    "rate-limiter-privileged-clients",
    "remote-region-urls",
    "remote-region-registry-fetch-interval",
    "remote-region-connect-timeout-ms",
    "remote-region-read-timeout-ms",
    "remote-region-total-connections",
    "remote-region-total-connections-per-host",
    "remote-region-connection-idle-timeout-seconds",
    "remote-region-fetch-thread-pool-size",
    "remote-region-trust-store",
    "remote-region-trust-store-password",
    "disable-transparent-fallback-to-other-region",
    "disable-delta-for-remote-regions",
    "g-zip-content-from-remote-region",
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
const IGNORED_SERVER_MAPS: &[&str] = &[
    "remote-region-urls-with-name",
    "remote-region-app-whitelist",
    "experimental",
];

/// The bound keys in canonical form, in table order, computed once: a load looks keys up a
/// few hundred times and canonicalising the whole table each time dominated its cost.
fn canonical_keys() -> &'static [(String, &'static Key)] {
    static CANONICAL_KEYS: OnceLock<Vec<(String, &'static Key)>> = OnceLock::new();
    CANONICAL_KEYS.get_or_init(|| KEYS.iter().map(|key| (canonical(key.name), key)).collect())
}

/// The key-table entry for `name` in any relaxed spelling.
/// The server's relaxed-name rules: `MAP_PREFIXES` keep their map keys as written.
pub(crate) fn names() -> &'static Names {
    static NAMES: OnceLock<Names> = OnceLock::new();
    NAMES.get_or_init(|| Names::new(MAP_PREFIXES))
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
        return find(canonical_name).is_some() || ignored.iter().any(|name| name == first);
    }
    if let Some(rest) = canonical_name.strip_prefix("heureka.webhooks[") {
        // `heureka.webhooks[<n>].<property>`: an index, then one of the known properties.
        return rest.split_once("].").is_some_and(|(index, property)| {
            index.chars().all(|c| c.is_ascii_digit()) && WEBHOOK_PROPERTIES.contains(&property)
        });
    }
    if canonical_name.starts_with("heureka.") {
        return find(canonical_name).is_some();
    }
    true
}

/// The bound key closest to a mistyped one, if any is close enough to be a likely typo.
pub(crate) fn suggestion(canonical_name: &str) -> Option<&'static str> {
    let length = canonical_name.chars().count();
    canonical_keys()
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
