//! The configuration's types: what a Heureka server is configured with, each field named by
//! the Spring key that sets it. Binding fills them (`bind.rs`); nothing here reads a source.

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use super::address::AddressRange;
use super::ssl_types::{ClientTlsConfig, SslConfig, TrustSource};
pub use crate::security::roles::Role;

/// The typed, validated configuration of a Heureka server. `Config::default()` is every key
/// at its default; the parts' own `Default` (zero, empty, off) is only where binding starts,
/// every field of it then written by its key's binding or a rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `server.*`: where to listen.
    pub server: ServerConfig,
    /// How connections are accepted, timed out and drained at shutdown.
    pub connections: ConnectionConfig,
    /// `spring.application.name`, default `heureka`.
    pub application_name: String,
    /// `spring.security.user.name` and `.password`, default none (no authentication). Both
    /// must be set; Spring Security's generated password has no equivalent here.
    pub security: Option<BasicAuth>,
    /// `eureka.server.*`: registry behaviour (spec §9.2).
    pub eureka_server: EurekaServerConfig,
    /// `eureka.instance.registry.*`: the renewal-threshold seeds.
    pub registry: RegistryConfig,
    /// `eureka.client.*`: how this server talks to its peers.
    pub client: EurekaClientConfig,
    /// `eureka.instance.*`: how this server describes itself.
    pub instance: EurekaInstanceConfig,
    /// `heureka.*`: settings Eureka does not have.
    pub heureka: HeurekaConfig,
    /// `eureka.dashboard.*`, `eureka.environment`, `eureka.datacenter`: the status page.
    pub dashboard: DashboardConfig,
    /// `management.*` (Spring Boot Actuator's names): health, info and metrics endpoints.
    pub management: ManagementConfig,
    /// `logging.level.<target>=<level>`, default none. `root` is the root level; levels are
    /// lower-cased `trace|debug|info|warn|error|off`. `root` comes first, then by target.
    pub logging_levels: Vec<(String, String)>,
    /// Where the settings came from (files read, environment, command line), for the
    /// startup log.
    pub sources: Vec<String>,
}

/// `server.*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// `server.ssl.*`: serve HTTPS; `None` serves plain HTTP.
    pub ssl: Option<SslConfig>,
    /// `server.port`, default `8761` (Eureka's convention; Spring Boot's own default is
    /// 8080). `0` picks a free port.
    pub port: u16,
    /// `server.address`, default `0.0.0.0` (all interfaces).
    pub address: IpAddr,
}

impl ServerConfig {
    /// The address to bind.
    pub fn socket_addr(&self) -> SocketAddr {
        SocketAddr::new(self.address, self.port)
    }
}

/// The limits that keep slow, idle and hostile clients from holding the server, with
/// Spring's key names where Spring has the setting. Durations are Spring `Duration`s (`20s`,
/// `500ms`, `PT1M`; a bare number is milliseconds).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConnectionConfig {
    /// `server.tomcat.connection-timeout`, default `20s`: a new connection's first request head
    /// (request line and headers) must have arrived in full this long after it was accepted.
    /// Tomcat's own default is 60 s, counted between reads; Heureka counts the whole head, so a
    /// client trickling a byte at a time cannot hold a connection (the value is Tomcat's
    /// shipped `server.xml`'s).
    pub connection_timeout: Duration,
    /// `server.tomcat.keep-alive-timeout`, default `60s`: a kept-alive connection is closed
    /// unless its next request head has arrived in full this long after the previous response
    /// was handed over (which includes the time the client takes to read it). Longer than the
    /// 30 s heartbeat, so a client's heartbeats reuse one connection, as with the Java server.
    pub keep_alive_timeout: Duration,
    /// `heureka.request-body-timeout`, default `30s`: a request's body must have arrived in
    /// full this long after its head, or it is answered 408 and the connection closed.
    pub request_body_timeout: Duration,
    /// `server.tomcat.max-connections`, default `8192` (Tomcat's): connections served at once.
    /// A new connection over the limit closes the one that has waited longest for a request
    /// head (idle, or sending its head slowly); when every connection is mid-request, new
    /// connections wait in the backlog until one ends.
    pub max_connections: usize,
    /// `server.max-http-request-header-size` (or its older name
    /// `server.max-http-header-size`), default `8KB` (Spring's): the largest request line plus
    /// headers; a larger head is answered 431 and bounds what a connection buffers before a
    /// request starts.
    pub max_header_bytes: usize,
    /// `spring.lifecycle.timeout-per-shutdown-phase`, default `30s` (Spring's): after SIGTERM,
    /// how long in-flight requests may take to finish before the remaining connections are
    /// closed and the process exits.
    pub shutdown_grace: Duration,
}

/// HTTP basic-auth credentials from `spring.security.user.*`.
#[derive(Clone, PartialEq, Eq)]
pub struct BasicAuth {
    /// `spring.security.user.name`.
    pub name: String,
    /// `spring.security.user.password`.
    pub password: String,
}

impl fmt::Debug for BasicAuth {
    /// Redacts the password so that logging the config cannot leak it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BasicAuth")
            .field("name", &self.name)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// `eureka.server.*` (Spring Cloud's `EurekaServerConfigBean`, spec §9.2). The other keys
/// of that bean are accepted and ignored.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EurekaServerConfig {
    /// `eureka.server.enable-self-preservation`, default `true`: stop evicting when
    /// renewals fall below the threshold (spec §6.8).
    pub enable_self_preservation: bool,
    /// `eureka.server.renewal-percent-threshold`, default `0.85`; in (0, 1].
    pub renewal_percent_threshold: f64,
    /// `eureka.server.renewal-threshold-update-interval-ms`, default `900000` (15 min).
    pub renewal_threshold_update_interval_ms: u64,
    /// `eureka.server.expected-client-renewal-interval-seconds`, default `30`; a non-positive
    /// value means 30, as in Eureka's `AbstractInstanceRegistry`.
    pub expected_client_renewal_interval_seconds: u32,
    /// `eureka.server.eviction-interval-timer-in-ms`, default `60000` (spec §6.12).
    pub eviction_interval_timer_in_ms: u64,
    /// `eureka.server.response-cache-update-interval-ms`, default `30000` (spec §6.11).
    pub response_cache_update_interval_ms: u64,
    /// `eureka.server.response-cache-auto-expiration-in-seconds`, default `180`.
    pub response_cache_auto_expiration_in_seconds: u64,
    /// `eureka.server.use-read-only-response-cache`, default `true`. Heureka serves fresh
    /// reads regardless; kept so existing files load.
    pub use_read_only_response_cache: bool,
    /// `eureka.server.retention-time-in-m-s-in-delta-queue`, default `180000`: how long a
    /// change stays in the delta queue (field `retentionTimeInMSInDeltaQueue`).
    pub retention_time_in_ms_in_delta_queue: u64,
    /// `eureka.server.delta-retention-timer-interval-in-ms`, default `30000`.
    pub delta_retention_timer_interval_in_ms: u64,
    /// `eureka.server.disable-delta`, default `false`.
    pub disable_delta: bool,
    /// `eureka.server.wait-time-in-ms-when-sync-empty`, default `300000` (spec §6.10).
    pub wait_time_in_ms_when_sync_empty: u64,
    /// `eureka.server.enable-replicated-request-compression`, default `false`.
    pub enable_replicated_request_compression: bool,
    /// `eureka.server.my-url`, default none: this server's URL, to skip itself among peers.
    pub my_url: Option<String>,
    /// `eureka.server.registry-sync-retries`, default `0`, which (as in Spring) means 5 when
    /// `eureka.client.register-with-eureka` is true: start-up sync attempts (spec §6.15).
    pub registry_sync_retries: u32,
    /// `eureka.server.registry-sync-retry-wait-ms`, default `30000`.
    pub registry_sync_retry_wait_ms: u64,
    /// `eureka.server.peer-eureka-nodes-update-interval-ms`, default `600000`.
    pub peer_eureka_nodes_update_interval_ms: u64,
    /// `eureka.server.peer-node-connect-timeout-ms`, default `200` (Spring's).
    pub peer_node_connect_timeout_ms: u64,
    /// `eureka.server.peer-node-read-timeout-ms`, default `200` (Spring's): the wait for a
    /// batch's answer.
    pub peer_node_read_timeout_ms: u64,
    /// `eureka.server.max-elements-in-peer-replication-pool`, default `10000`.
    pub max_elements_in_peer_replication_pool: usize,
    /// `eureka.server.max-time-for-replication`, default `30000`.
    pub max_time_for_replication: u64,
    /// `eureka.server.sync-when-timestamp-differs`, default `true`.
    pub sync_when_timestamp_differs: bool,
    /// `eureka.server.rate-limiter-*`: Eureka's limiter on registry fetches.
    pub rate_limiter: RateLimiterConfig,
    /// `eureka.server.remote-region-*` and `heureka.regions.*`: the remote regions fetched
    /// and served beside the local registry (`regions/`, `docs/regions.md`).
    pub regions: RegionsConfig,
}

/// The remote regions: other Eureka servers' registries, fetched read-only and served on
/// reads that ask for them (Eureka's `RemoteRegionRegistry`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RegionsConfig {
    /// `eureka.server.remote-region-urls-with-name.<region>`: each region's server base URL,
    /// region names trimmed and lower-cased, in the order the map is read (by name).
    pub urls: Vec<(String, String)>,
    /// `eureka.server.remote-region-registry-fetch-interval`, default `30` (seconds).
    pub fetch_interval: Duration,
    /// `eureka.server.remote-region-connect-timeout-ms`, default `1000`.
    pub connect_timeout: Duration,
    /// `eureka.server.remote-region-read-timeout-ms`, default `1000`.
    pub read_timeout: Duration,
    /// `eureka.server.remote-region-app-whitelist.<region>`: the apps served from a region
    /// (upper-cased), by lower-cased region name; the entry `global` holds for a region with
    /// none of its own. No entry at all serves every app.
    pub whitelist: BTreeMap<String, Vec<String>>,
    /// `eureka.server.disable-delta-for-remote-regions`, default `false`: every fetch is full.
    pub disable_delta: bool,
    /// `eureka.server.disable-transparent-fallback-to-other-region`, default `false`.
    pub disable_transparent_fallback: bool,
    /// `eureka.server.g-zip-content-from-remote-region`, default `true`: ask for gzip.
    pub gzip: bool,
    /// `eureka.server.remote-region-trust-store` (and `-password`): trusted instead of
    /// `eureka.client.tls.*`'s trust for `https://` regions; loaded at start-up.
    pub trust_store: Option<TrustSource>,
    /// `heureka.regions.stale-after`, default `10m`: a region whose last successful fetch is
    /// older is no longer served.
    pub stale_after: Duration,
}

/// `eureka.server.rate-limiter-*`, with Eureka's defaults and meaning: token buckets on
/// registry fetches (`GET {base}/apps…`), per kind of fetch, shared by every client.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RateLimiterConfig {
    /// `rate-limiter-enabled`, default `false`: refuse fetches over the rate with 503. Off,
    /// fetches over the rate are only counted (`heureka_rate_limited_fetches_total`).
    pub enabled: bool,
    /// `rate-limiter-throttle-standard-clients`, default `false`: also limit Eureka's own
    /// clients (`DiscoveryIdentity-Name: DefaultClient`).
    pub throttle_standard_clients: bool,
    /// `rate-limiter-privileged-clients`, default none: `DiscoveryIdentity-Name`s never limited.
    pub privileged_clients: Vec<String>,
    /// `rate-limiter-burst-size`, default `10`: fetches allowed at once.
    pub burst_size: u32,
    /// `rate-limiter-registry-fetch-average-rate`, default `500` per second: every fetch.
    pub registry_fetch_average_rate: u32,
    /// `rate-limiter-full-fetch-average-rate`, default `100` per second: full fetches
    /// (`{base}/apps`), which count against both buckets.
    pub full_fetch_average_rate: u32,
}

/// `eureka.instance.registry.*`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RegistryConfig {
    /// `eureka.instance.registry.expected-number-of-clients-sending-renews`, default `1`.
    pub expected_number_of_clients_sending_renews: u32,
    /// `eureka.instance.registry.default-open-for-traffic-count`, default `1`: the client
    /// count assumed when the startup sync found no peers.
    pub default_open_for_traffic_count: u32,
}

/// `eureka.client.*` (spec §9.3); only the keys a server uses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EurekaClientConfig {
    /// `eureka.client.register-with-eureka`, default `true`. Standalone servers set false.
    pub register_with_eureka: bool,
    /// `eureka.client.fetch-registry`, default `true`. Standalone servers set false.
    pub fetch_registry: bool,
    /// `eureka.client.eureka-server-read-timeout-seconds`, default `8` (Spring's): how long
    /// the start-up sync waits for a peer's whole registry. A peer holding a million instances
    /// that has not built its document yet needs tens of seconds.
    pub eureka_server_read_timeout_seconds: u64,
    /// `eureka.client.service-url.<zone>`: zone to peer URLs (comma-separated or a YAML
    /// list), each ending in `/`. Default `{defaultZone: [http://localhost:8761/eureka/]}`.
    pub service_url: BTreeMap<String, Vec<String>>,
    /// `eureka.client.region`, default `us-east-1`.
    pub region: String,
    /// `eureka.client.availability-zones.<region>`: the region's zones in order, default none.
    pub availability_zones: BTreeMap<String, Vec<String>>,
    /// `eureka.client.tls.*`, when `eureka.client.tls.enabled`: trust and client certificate
    /// for `https://` peers.
    pub tls: Option<ClientTlsConfig>,
}

/// `eureka.instance.*` (spec §9.3); only the keys a server uses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EurekaInstanceConfig {
    /// `eureka.instance.hostname`, default none (the first non-loopback host name).
    pub hostname: Option<String>,
    /// `eureka.instance.prefer-ip-address`, default `false`: advertise the IP as host name.
    pub prefer_ip_address: bool,
    /// `eureka.instance.ip-address`, default none (the first non-loopback IP).
    pub ip_address: Option<IpAddr>,
    /// `eureka.instance.instance-id`, default none (`host:app:port`).
    pub instance_id: Option<String>,
    /// `eureka.instance.lease-renewal-interval-in-seconds`, default `30`: how often this
    /// server renews its own registration.
    pub lease_renewal_interval_in_seconds: u32,
    /// `eureka.instance.lease-expiration-duration-in-seconds`, default `90`.
    pub lease_expiration_duration_in_seconds: u32,
}

/// `heureka.*`: Heureka's own keys. Unknown keys here are errors.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HeurekaConfig {
    /// `heureka.legacy-lease-expiry`, default `false`. `true` reproduces Eureka's
    /// `Lease.isExpired` bug, which expires a lease only after twice its duration (spec §6.2).
    pub legacy_lease_expiry: bool,
    /// `heureka.refuse-takeovers`, default `false`: a client's registration of an id whose
    /// live lease is at another endpoint gets 409 instead of replacing it (`takeover.rs`).
    pub refuse_takeovers: bool,
    /// `heureka.max-request-body-size`, default `1MB` (1 MiB). Spring `DataSize` syntax:
    /// `1048576`, `512KB`, `2MB`.
    pub max_request_body_bytes: usize,
    /// `heureka.base-path`, default `/eureka`: the REST prefix. Starts with `/`, no trailing
    /// `/`.
    pub base_path: String,
    /// `heureka.replication.*`: what Heureka adds to Eureka's replication.
    pub replication: ReplicationConfig,
    /// `heureka.webhooks[<n>].*`, in index order; default none.
    pub webhooks: Vec<WebhookConfig>,
    /// `heureka.limits.*`: bounds on what clients and peers may register.
    pub limits: LimitsConfig,
    /// `heureka.events.*`: the limits on event streams.
    pub events: EventStreamConfig,
    /// `heureka.push.*`: the push streams consumers follow (`push/`, `docs/push.md`).
    pub push: PushConfig,
    /// `heureka.xds.*`: the xDS server for proxyless gRPC and Envoy (`xds/`, `docs/xds.md`).
    pub xds: XdsConfig,
    /// `heureka.prometheus-sd.*`: Prometheus HTTP service discovery (`prometheus_sd/`,
    /// `docs/prometheus-sd.md`).
    pub prometheus_sd: PrometheusSdConfig,
    /// `heureka.audit.*`: the audit trail of administrative acts (`audit.rs`).
    pub audit: AuditConfig,
    /// `heureka.security.allowed-origins`, default none: the browser origins, besides the
    /// server's own, whose pages may write (`http/cross_site.rs`). Each is normalised to
    /// `scheme://host:port`, lower case, with the scheme's default port written out.
    pub allowed_origins: Vec<String>,
    /// `heureka.security.allowed-hosts`, default none: host names, besides the server's own
    /// and its peers', that a browser may reach it under (`http/hosts.rs`). Lower case; `*`
    /// is any name, `*.example.com` any name under `example.com`.
    pub allowed_hosts: Vec<String>,
    /// `heureka.security.users[<n>].*`, in index order; default none. Any turns
    /// authentication on, as `spring.security.user` and the peer user do.
    pub users: Vec<UserConfig>,
    /// `heureka.health-checks.*`: the server's own checks of instances (`health_checks.rs`).
    pub health_checks: HealthChecksConfig,
    /// `heureka.consumers.*`: who fetches the registry (`consumers.rs`).
    pub consumers: ConsumersConfig,
    /// `heureka.persistence.*`: the registry kept on disk (`persistence.rs`).
    pub persistence: PersistenceConfig,
    /// `heureka.dns.*`: the DNS server (`dns/`, `docs/dns.md`).
    pub dns: DnsConfig,
    /// `heureka.namespaces.*`: registries for many teams in one server (`namespaces/`,
    /// `docs/namespaces.md`).
    pub namespaces: NamespacesConfig,
}

/// `heureka.namespaces.*`: isolated registries, each under `{path-prefix}/{name}{base}`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NamespacesConfig {
    /// `.path-prefix`, default `/ns`: where namespaced paths start.
    pub path_prefix: String,
    /// `.auto-create`, default `true`: a namespace is created by its first registration.
    pub auto_create: bool,
    /// `.max`, default `100`: namespaces at most besides `default`.
    pub max: usize,
    /// `.declared`, default none: namespaces that exist from the start (lower-cased).
    pub declared: Vec<String>,
}

/// `heureka.persistence.*`: keeping the registry on disk so that a restarted node comes back
/// with it. Off by default: nothing changes for those who do not ask.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PersistenceConfig {
    /// `.dir`, default none (off): the directory of the store (created if missing).
    pub dir: Option<String>,
    /// `.flush-interval`, default `1s`: how often acknowledged writes are made durable, in one
    /// batch; at most this much is lost to a crash, nothing to a clean shutdown.
    pub flush_interval: Duration,
}

/// `heureka.consumers.*`: the table of who fetches the registry, and what counts as active.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConsumersConfig {
    /// `.max`, default `10000`: consumers kept; at the cap the quietest makes room.
    pub max: usize,
    /// `.retention`, default `5m`: a consumer quiet this long is forgotten.
    pub retention: Duration,
    /// `.active-within`, default `90s`: a drain waits for the consumers that fetched this
    /// recently (three of Spring's 30 s fetches).
    pub active_within: Duration,
    /// `.behind-after`, default `60s`: `heureka_consumers_behind` counts consumers holding an
    /// older version that have not fetched for this long.
    pub behind_after: Duration,
}

/// `heureka.health-checks.*`: probing each instance's `healthCheckUrl` (or its port) from
/// the server, so that a crashed instance reads DOWN in seconds rather than when its lease
/// lapses. Off by default: nothing changes for those who do not ask.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HealthChecksConfig {
    /// `.enabled`, default `false`.
    pub enabled: bool,
    /// `.interval`, default `5s`: how often each instance is probed.
    pub interval: Duration,
    /// `.timeout`, default `2s`: a probe without an answer by then failed.
    pub timeout: Duration,
    /// `.failures-before-down`, default `2`: consecutive failed probes that make it DOWN.
    pub failures_before_down: u32,
    /// `.successes-before-up`, default `1`: consecutive passed probes that lift it.
    pub successes_before_up: u32,
    /// `.jitter`, default `1s`: each instance's probes start at a random offset up to this,
    /// so that instances registered together are not probed together.
    pub jitter: Duration,
    /// `.concurrency`, default `64`: probes in flight at once from this server.
    pub concurrency: usize,
    /// `.evict-after`, default none: an instance failing this long is removed (as a cancel
    /// would), never while self-preservation holds.
    pub evict_after: Option<Duration>,
    /// `.self-suspicion-percent`, default `50`: when more than this share of the instances that
    /// were passing fail in one interval (and at least three), the server suspects its own
    /// network and marks none DOWN until the share falls again.
    pub self_suspicion_percent: u32,
    /// `.apps.<app>`: `off`, `http` or `tcp` for one application (upper-cased), over the
    /// default (`http` when the instance registered a `healthCheckUrl`, else `tcp`). An
    /// instance's own metadata `heureka.health-check` overrides both.
    pub apps: Vec<(String, CheckMode)>,
    /// `.allowed-networks`, default loopback, RFC 1918, 100.64.0.0/10, `fc00::/7` and `::1`:
    /// the only addresses a probe connects to. Anyone who may register names the address it
    /// is probed at, so without a bound the checks would scan whatever this server can reach
    /// (cloud metadata at 169.254.169.254 included) and report verdicts and latencies back.
    pub allowed_networks: Vec<AddressRange>,
}

/// How an instance is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckMode {
    /// Not at all.
    Off,
    /// `GET` its `healthCheckUrl` (or `secureHealthCheckUrl`); 2xx passes.
    Http,
    /// Connect to its port.
    Tcp,
}

impl CheckMode {
    /// `off`, `http` or `tcp`, any case.
    pub fn from_name(name: &str) -> Option<CheckMode> {
        match name.trim().to_ascii_lowercase().as_str() {
            "off" => Some(CheckMode::Off),
            "http" => Some(CheckMode::Http),
            "tcp" => Some(CheckMode::Tcp),
            _ => None,
        }
    }
}

/// One `heureka.security.users[<n>]` entry: who, how they prove it, and what they may do
/// (`security/roles.rs`).
#[derive(Clone, PartialEq, Eq)]
pub struct UserConfig {
    /// `.name`: the Basic user name, matched ignoring case.
    pub name: String,
    /// `.password` as written: plain text, `{noop}plain` or `{bcrypt}$2a$…` (checked
    /// well-formed), as Spring Security stores passwords.
    pub password: Option<String>,
    /// `.certificate`: a client certificate whose subject CN or a SAN name is this stands for
    /// the user.
    pub certificate: Option<String>,
    /// `.roles`, at least one.
    pub roles: Vec<Role>,
    /// `.apps`, upper-cased: the apps `register` is limited to; empty for every app.
    pub apps: Vec<String>,
    /// `.namespaces`, lower-cased: the only namespaces the user may use; empty for every one.
    pub namespaces: Vec<String>,
}

impl fmt::Debug for UserConfig {
    /// Redacts the password, as [`BasicAuth`] does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserConfig")
            .field("name", &self.name)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("certificate", &self.certificate)
            .field("roles", &self.roles)
            .field("apps", &self.apps)
            .field("namespaces", &self.namespaces)
            .finish()
    }
}

/// `heureka.audit.*`: the audit trail (`audit.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuditConfig {
    /// `heureka.audit.enabled`, default `true`: every administrative act and every minute of
    /// refused credentials or refused replication is logged on `heureka::audit`, kept for the
    /// dashboard and published as an `audit` event.
    pub enabled: bool,
    /// `heureka.audit.retained`, default `1000`: entries kept in memory, the newest.
    pub retained: usize,
}

/// `heureka.limits.*`: bounds Eureka does not have, against clients (with valid credentials)
/// that register without end, with leases that never expire, or with names nobody can
/// heartbeat. Each refusal is a 4xx with a one-line reason; the registry is left as it was.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LimitsConfig {
    /// `heureka.limits.max-name-length`, default `256` bytes: app names, instance ids,
    /// `vipAddress` and `secureVipAddress` (400). Must leave a heartbeat of two such names,
    /// percent-encoded, within `server.max-http-request-header-size` (checked at start-up).
    pub max_name_length: usize,
    /// `heureka.limits.max-metadata-entries`, default `128` per instance (400).
    pub max_metadata_entries: usize,
    /// `heureka.limits.max-metadata-bytes`, default `32KB` of keys and values per instance (400).
    pub max_metadata_bytes: usize,
    /// `heureka.limits.max-lease-duration`, default `1h`: longer `durationInSecs` are
    /// shortened to it, with a WARN. Whole seconds, at least 1 s.
    pub max_lease_duration: Duration,
    /// `heureka.limits.max-instances`, default `2000000`: a new instance beyond it is refused
    /// (403); lower it to what the node's memory holds.
    pub max_instances: usize,
}

/// `heureka.events.*`: the limits on `GET {base}/events`. A stream holds its connection for as
/// long as it lasts, so streams get a budget of their own, well inside
/// `server.tomcat.max-connections`, and every stream ends: when its client stops reading,
/// when it reaches its maximum age (EventSource reconnects by itself), or at shutdown.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventStreamConfig {
    /// `heureka.events.max-streams`, default `256`: streams open at once; one more is
    /// answered 429 and its connection closed.
    pub max_streams: usize,
    /// `heureka.events.max-streams-per-client`, default `8`: streams open at once from one
    /// client IP address (behind a proxy, the proxy's); one more is answered 429.
    pub max_streams_per_client: usize,
    /// `heureka.events.keep-alive-interval`, default `15s`: a comment line is sent this often
    /// on a quiet stream, so proxies keep it open and a vanished client is noticed.
    pub keep_alive_interval: Duration,
    /// `heureka.events.send-timeout`, default `30s`: a stream whose client has taken nothing
    /// (no event, no keep-alive comment) for a keep-alive interval plus this long has stopped
    /// reading, and is closed.
    pub send_timeout: Duration,
    /// `heureka.events.max-stream-age`, default `30m`: a stream is ended this long after it
    /// began; the client reconnects (EventSource does so by itself, told `lagged`).
    pub max_age: Duration,
}

/// `heureka.push.*`: `GET {base}/push` (`docs/push.md`). The streams consumers hold to follow
/// changes as they happen; a budget of their own, sized for a fleet, apart from the
/// dashboard's event streams.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PushConfig {
    /// `heureka.push.enabled`, default `true`; `false` answers 404, as the Java server does.
    pub enabled: bool,
    /// `heureka.push.max-subscribers`, default `20000`: push streams open at once; one more
    /// is answered 429.
    pub max_subscribers: usize,
    /// `heureka.push.max-subscribers-per-client`, default `1000`: push streams open at once
    /// from one client IP address.
    pub max_subscribers_per_client: usize,
    /// `heureka.push.keep-alive-interval`, default `15s`.
    pub keep_alive_interval: Duration,
    /// `heureka.push.send-timeout`, default `30s`: as `heureka.events.send-timeout`.
    pub send_timeout: Duration,
    /// `heureka.push.max-stream-age`, default `10m`: a stream ends this long after it began
    /// and its client resumes, which also spreads clients over the nodes again.
    pub max_age: Duration,
    /// `heureka.push.replay`, default `4096`: deltas kept for streams that resume.
    pub replay: usize,
}

/// `heureka.xds.*`: the ADS server gRPC's `xds:///APP` resolver and Envoy read the registry
/// from, on a port of its own.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct XdsConfig {
    /// `heureka.xds.enabled`, default `false`: the port is opened only when asked for.
    pub enabled: bool,
    /// `heureka.xds.port`, default `18000` (the port Envoy's and gRPC's examples give their
    /// control plane), bound on `server.address`.
    pub port: u16,
    /// `heureka.xds.max-streams`, default `10000`: ADS streams open at once; one more is
    /// refused with RESOURCE_EXHAUSTED.
    pub max_streams: usize,
}

/// `heureka.dns.*`: the registry answered over DNS, UDP and TCP (`dns/`, `docs/dns.md`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DnsConfig {
    /// `heureka.dns.enabled`, default `false`: it opens a port.
    pub enabled: bool,
    /// `heureka.dns.address`, default none: `server.address`.
    pub address: Option<IpAddr>,
    /// `heureka.dns.port`, default `8600` (Consul's DNS port); `0` picks a free one.
    pub port: u16,
    /// `heureka.dns.domain`, default `eureka.`: the zone answered, lower case, ending in `.`.
    pub domain: String,
    /// `heureka.dns.ttl`, default `5s`: of answers and, as the SOA's minimum, of negative ones.
    pub ttl: Duration,
    /// `heureka.dns.max-answers`, default `32`: records in one answer section at most.
    pub max_answers: usize,
    /// `heureka.dns.rate-limit`, default `500`: queries a second from one source address (a
    /// second's worth at once); more are answered REFUSED.
    pub rate_limit: u32,
}

/// `heureka.prometheus-sd.*`: `GET {base}/prometheus/sd` (`docs/prometheus-sd.md`), the UP
/// instances as Prometheus' `http_sd_configs` target groups.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PrometheusSdConfig {
    /// `heureka.prometheus-sd.enabled`, default `true`; `false` answers 404.
    pub enabled: bool,
}

/// `eureka.dashboard.*` and the two labels Spring's dashboard shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DashboardConfig {
    /// `eureka.dashboard.enabled`, default `true`.
    pub enabled: bool,
    /// `eureka.dashboard.path`, default `/`: starts with `/`, no trailing `/` (except `/`).
    pub path: String,
    /// `eureka.environment`, default `test` (Spring's).
    pub environment: String,
    /// `eureka.datacenter`, default `default` (Spring's).
    pub datacenter: String,
}

/// One `heureka.webhooks[<n>]` entry: where to POST events, and which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookConfig {
    /// `heureka.webhooks[<n>].url`: an `http://` or `https://` URL.
    pub url: String,
    /// `heureka.webhooks[<n>].events`: event types (`docs/events.md`); empty means every
    /// type but `renewals`.
    pub events: Vec<String>,
}

/// `heureka.replication.*`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplicationConfig {
    /// `heureka.replication.anti-entropy-interval-ms`, default `10000`; `0` turns it off.
    pub anti_entropy_interval_ms: u64,
    /// `heureka.replication.batch-delay-ms`, default `500` (Eureka's fixed delay): how long a
    /// heartbeat may wait for others to share its batch. Other changes are sent at once.
    pub batch_delay_ms: u64,
    /// `heureka.replication.batch-size`, default `250` (Eureka's fixed size).
    pub batch_size: usize,
    /// `heureka.replication.tombstone-retention-ms`, default `300000`: how long a cancelled or
    /// evicted instance's parts and stamps are kept, so that an older copy arriving late
    /// cannot bring it back. At least a lease, replication's retry horizon
    /// (`max-time-for-replication`) and an anti-entropy interval.
    pub tombstone_retention_ms: u64,
    /// `heureka.replication.peers-only`, default `true`: replication (the peer batch, digest,
    /// stamped and copies endpoints, and writes carrying `x-netflix-discovery-replication:
    /// true`) is accepted only from the peers. `false` accepts it from anyone, as Eureka does.
    pub peers_only: bool,
    /// `heureka.replication.allowed-addresses`, default none: addresses and CIDR blocks
    /// replication is also accepted from (peers behind NAT, operators' tools).
    pub allowed_addresses: Vec<AddressRange>,
    /// `heureka.replication.peer-user.name` and `.password`, default none: credentials only
    /// the peers hold, which identify a peer from any address. Sent to every peer whose
    /// service URL carries no credentials of its own (Java peers put them in their URLs,
    /// `http://name:password@host/eureka/`).
    pub peer_user: Option<BasicAuth>,
}

/// `management.*`: the operator endpoints, named as Spring Boot Actuator names them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ManagementConfig {
    /// `management.endpoints.web.base-path`, default `/actuator`.
    pub base_path: String,
    /// `management.endpoints.web.exposure.include` minus `.exclude`: which of `health`,
    /// `info` and `prometheus` are served. Default all three (Spring exposes only `health`;
    /// Heureka's metrics are on by default).
    pub exposed: Exposure,
    /// `management.endpoint.health.show-details`, default `when-authorized`.
    pub show_details: ShowDetails,
    /// `heureka.access-log` or `server.tomcat.accesslog.enabled`, default `false`: one log line
    /// per request.
    pub access_log: bool,
}

/// The actuator endpoints that are served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Exposure {
    pub health: bool,
    pub info: bool,
    /// `/actuator/prometheus` and `/metrics`; also off when
    /// `management.prometheus.metrics.export.enabled` (or Boot 2's
    /// `management.metrics.export.prometheus.enabled`) is false.
    pub prometheus: bool,
}

/// When `/actuator/health` shows its components. The probes never do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShowDetails {
    #[default]
    Never,
    /// To requests that pass authentication; with authentication off, to every request.
    WhenAuthorized,
    Always,
}

/// What the command line asked for.
// Built once at startup and matched right away, so boxing `Config` would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Loaded {
    /// Run the server with this configuration.
    Run(Config),
    /// `--help` / `-h`: print this text and exit.
    Help(String),
    /// `--version` / `-V`: print this text and exit.
    Version(String),
}
