//! The table of every configuration key Heureka reads or accepts, and Spring's relaxed-name rules.
//!
//! `KEYS` is the single source of truth: the binder reads defaults from it, the environment
//! source derives variable names from it, and `--help` prints it, so the three cannot drift.

use std::sync::OnceLock;

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
        "eureka.instance.registry.expected-number-of-clients-sending-renews",
        "1",
        "seed",
    ),
    key(
        "eureka.instance.registry.default-open-for-traffic-count",
        "1",
        "seed when no peers",
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
        "eureka.client.service-url.<zone>",
        "",
        "peer URLs, comma-separated",
    ),
    key("eureka.instance.hostname", "", "advertised host name"),
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
    key("heureka.base-path", "/eureka", "REST API prefix"),
];

/// Keys whose last part is a map key that keeps its case (`defaultZone`, `com.example`).
pub(crate) const MAP_PREFIXES: &[&str] = &["logging.level", "eureka.client.service-url"];

/// `eureka.server.*` keys of Spring Cloud's `EurekaServerConfigBean` (spec §9.2) that Heureka
/// accepts and ignores: they tune AWS binding, remote regions, peer connection pools and the
/// rate limiter, none of which Heureka has. Listed so that only real typos are errors.
const IGNORED_SERVER_KEYS: &[&str] = &[
    "registry-sync-retries",
    "registry-sync-retry-wait-ms",
    "peer-eureka-nodes-update-interval-ms",
    "peer-node-connect-timeout-ms",
    "peer-node-read-timeout-ms",
    "peer-node-total-connections",
    "peer-node-total-connections-per-host",
    "peer-node-connection-idle-timeout-seconds",
    "max-elements-in-peer-replication-pool",
    "min-threads-for-peer-replication",
    "max-threads-for-peer-replication",
    "max-idle-thread-age-in-minutes-for-peer-replication",
    "max-elements-in-status-replication-pool",
    "min-threads-for-status-replication",
    "max-threads-for-status-replication",
    "max-idle-thread-in-minutes-age-for-status-replication",
    "max-time-for-replication",
    "number-of-replication-retries",
    "sync-when-timestamp-differs",
    "batch-replication",
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

/// The key-table entry for `name` in any relaxed spelling.
pub(crate) fn find(name: &str) -> Option<&'static Key> {
    static CANONICAL_KEYS: OnceLock<Vec<(String, &'static Key)>> = OnceLock::new();
    let table =
        CANONICAL_KEYS.get_or_init(|| KEYS.iter().map(|key| (canonical(key.name), key)).collect());
    let wanted = canonical(name);
    table
        .iter()
        .find(|(canonical_name, _)| *canonical_name == wanted)
        .map(|(_, key)| *key)
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
        return find(canonical_name).is_some()
            || IGNORED_SERVER_KEYS
                .iter()
                .any(|ignored| canonical(ignored) == first)
            || IGNORED_SERVER_MAPS
                .iter()
                .any(|ignored| canonical(ignored) == first);
    }
    if canonical_name.starts_with("heureka.") {
        return find(canonical_name).is_some();
    }
    true
}

/// The bound key closest to a mistyped one, if any is close enough to be a likely typo.
pub(crate) fn suggestion(canonical_name: &str) -> Option<&'static str> {
    KEYS.iter()
        .filter(|key| !key.name.contains('<'))
        .map(|key| {
            (
                edit_distance(&canonical(key.name), canonical_name),
                key.name,
            )
        })
        .filter(|(distance, _)| *distance <= 3)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

/// Spring's canonical form of a property name, used to compare relaxed spellings: each
/// dot-separated element lower-cased without `-` and `_`; indices kept as `[n]`; the map key
/// after a `MAP_PREFIXES` entry kept verbatim.
pub(crate) fn canonical(name: &str) -> String {
    let mut out = String::new();
    let mut in_map_key = false;
    for element in elements(name) {
        let index = element.strip_prefix('[').and_then(|e| e.strip_suffix(']'));
        match index {
            Some(inner) if inner.chars().all(|c| c.is_ascii_digit()) => {
                out.push_str(element);
                continue;
            }
            _ => {}
        }
        if !out.is_empty() {
            out.push('.');
        }
        if in_map_key {
            out.push_str(index.unwrap_or(element));
            continue;
        }
        let element = index.unwrap_or(element);
        out.extend(
            element
                .chars()
                .filter(|c| *c != '-' && *c != '_')
                .flat_map(char::to_lowercase),
        );
        in_map_key = canonical_map_prefixes().contains(&out);
    }
    out
}

/// The environment variable names Spring's `SystemEnvironmentPropertyMapper` maps to `name`:
/// `EUREKA_SERVER_ENABLESELFPRESERVATION` first, then the legacy
/// `EUREKA_SERVER_ENABLE_SELF_PRESERVATION`. Map keys are upper-cased with `.`/`-` as `_`.
pub(crate) fn env_names(name: &str) -> Vec<String> {
    let canonical_name = canonical(name);
    let map_prefix = canonical_map_prefixes()
        .iter()
        .find(|prefix| canonical_name.starts_with(&format!("{prefix}.")));
    let (head, map_key) = match &map_prefix {
        Some(prefix) => (
            (*prefix).clone(),
            Some(canonical_name[prefix.len() + 1..].replace(['.', '-'], "_")),
        ),
        None => (canonical_name.clone(), None),
    };
    let written_head: Vec<&str> = elements(name)
        .into_iter()
        .take(head.split('.').count())
        .collect();
    let uniform = head.replace('.', "_");
    let legacy = written_head.join("_").replace('-', "_");
    let mut names = Vec::new();
    for base in [uniform, legacy] {
        let full = match &map_key {
            Some(map_key) => format!("{base}_{map_key}"),
            None => base,
        }
        .to_uppercase();
        if !names.contains(&full) {
            names.push(full);
        }
    }
    names
}

/// The `--help` text, generated from `KEYS`.
pub(crate) fn help_text() -> String {
    let width = KEYS.iter().map(|key| key.name.len()).max().unwrap_or(0);
    let default_width = KEYS.iter().map(|key| key.default.len()).max().unwrap_or(0);
    let mut text = format!(
        "heureka {version} - a Eureka-compatible service registry server

Usage: heureka [--key=value]...

Settings are read like a Spring Boot Eureka server's, so an existing application.yml works.
Sources, highest precedence first:
  1. command-line arguments   --server.port=8761 (a bare --key means true)
  2. environment variables    SERVER_PORT=8761, EUREKA_SERVER_ENABLESELFPRESERVATION=false
  3. application-{{profile}}.{{properties,yml,yaml}} for spring.profiles.active
  4. ./config/application.{{properties,yml,yaml}}
  5. ./application.{{properties,yml,yaml}}
--spring.config.location=PATH[,PATH] replaces 3-5 (a directory means application.* in it);
--spring.config.additional-location adds PATH[,PATH] on top of them.
Names are relaxed: enableSelfPreservation, enable-self-preservation and
enable_self_preservation are the same key. Values may use ${{key}} and ${{key:default}}.

Options:
  -h, --help     print this help
  -V, --version  print the version

Keys:
  {:width$}  {:default_width$}  ABOUT
",
        "KEY",
        "DEFAULT",
        version = env!("CARGO_PKG_VERSION"),
    );
    for key in KEYS {
        let default = match key.name {
            "eureka.client.service-url.<zone>" => "defaultZone",
            _ if key.default.is_empty() => "-",
            _ => key.default,
        };
        text.push_str(&format!(
            "  {:width$}  {default:default_width$}  {}\n",
            key.name, key.about
        ));
    }
    text.push_str(&format!(
        "  (default eureka.client.service-url.{}={})\n\n\
         Other eureka.server.* keys of Spring Cloud's EurekaServerConfigBean (AWS, remote \
         regions,\npeer pools, rate limiter) are accepted and ignored; any other unknown \
         eureka.server.* or\nheureka.* key is an error. Keys elsewhere are ignored, as in Spring.\n",
        DEFAULT_ZONE.0, DEFAULT_ZONE.1
    ));
    text
}

/// Splits `a.b[0].c` into `a`, `b`, `[0]`, `c`; a bracketed element may contain dots.
pub(crate) fn elements(name: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut depth = 0usize;
    for (at, c) in name.char_indices() {
        match c {
            '[' if depth == 0 => {
                if at > start {
                    parts.push(&name[start..at]);
                }
                start = at;
                depth = 1;
            }
            '[' => depth += 1,
            ']' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    parts.push(&name[start..=at]);
                    start = at + 1;
                }
            }
            '.' if depth == 0 => {
                if at > start {
                    parts.push(&name[start..at]);
                }
                start = at + 1;
            }
            _ => {}
        }
    }
    if start < name.len() {
        parts.push(&name[start..]);
    }
    parts
}

/// `MAP_PREFIXES` in canonical form.
pub(crate) fn canonical_map_prefixes() -> &'static [String] {
    static CANONICAL: OnceLock<Vec<String>> = OnceLock::new();
    CANONICAL.get_or_init(|| {
        MAP_PREFIXES
            .iter()
            .map(|prefix| canonical_plain(prefix))
            .collect()
    })
}

/// The canonical form of a name without map-key handling (used on the prefixes themselves).
fn canonical_plain(name: &str) -> String {
    name.split('.')
        .map(|element| {
            element
                .chars()
                .filter(|c| *c != '-' && *c != '_')
                .flat_map(char::to_lowercase)
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(".")
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
