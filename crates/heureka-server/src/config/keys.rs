//! The table of every configuration key Heureka reads or accepts.
//!
//! `KEYS` is the single source of truth: the binder reads defaults from it, the environment
//! source derives variable names from it, and `--help` prints it, so the three cannot drift.

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
