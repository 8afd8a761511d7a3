//! The table of every configuration key Heureka reads or accepts.
//!
//! `KEYS` is the single source of truth. An entry is a key's name, its default, its `--help`
//! line and its binding: the value type it is read as and where the value goes, or that it is
//! inert, read by the loader, an older name of another key, or refused with its reason.
//! `heureka_config::table` walks the table (`bind.rs`); the environment source derives variable names from it and `--help`
//! prints it, so none of them can drift. Adding a key is adding an entry (and, for a new
//! setting, its field in `Config`); `keys/tests.rs` fails, naming the key, when an entry is
//! inconsistent.

use std::time::Duration;

use heureka_config::bindings::{non_empty, IfSet};
use heureka_config::table::Binding::{self, Bound, Inert, Loader, OlderNameOf, Refused};
use heureka_config::table::Refusal::{Always, When};

use super::binding::{field, indexed, map, map_part, part, Draft, Key};
use super::refused::separate_management_port;
use super::rules;
use super::values::{
    ACTUATOR_BASE_PATH, ADDRESS_RANGES, API_BASE_PATH, APP_NAMES, AS_WRITTEN, BODY_SIZE, BOOL,
    CHECK_MODE, CLIENT_NAMES, CONNECTION_COUNT, DASHBOARD_PATH, DURATION_OR_ZERO, ENDPOINT_NAMES,
    EVENT_NAMES, FRACTION, HEADER_SIZE, HOST_NAMES, HTTP_URL, IP_ADDRESS, LEASE_DURATION,
    LOG_LEVEL, METADATA_SIZE, NAMESPACE_NAMES, NAMESPACE_PREFIX, NAME_LENGTH, NEVER_OR_DURATION,
    OPTIONAL_IP_ADDRESS, OPTIONAL_TEXT, ORIGINS, PERCENT, PORT, POSITIVE_COUNT, POSITIVE_U32,
    REGION, RENEWAL_INTERVAL_SECONDS, ROLE_NAMES, SERVICE_URLS, SHOW_DETAILS, TEXT, TIMEOUT,
    WHOLE_U32, WHOLE_U64, WHOLE_USIZE, ZONES,
};
use super::values::{DNS_DOMAIN, DNS_TTL};

#[cfg(test)]
mod tests;

/// Where health checks may connect by default: loopback, the private ranges (RFC 1918), the
/// carrier-grade NAT range Kubernetes networks use (100.64.0.0/10) and IPv6's unique local
/// addresses. Not link-local (169.254.0.0/16 and fe80::/10 hold cloud metadata services), not
/// public addresses. Those and the metadata services inside allowed ranges are refused
/// whatever this key says (`health_checks/probe.rs`, `NEVER_PROBED`).
const DEFAULT_PROBE_NETWORKS: &str =
    "127.0.0.0/8,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,100.64.0.0/10,::1/128,fc00::/7";

const fn key(
    name: &'static str,
    default: &'static str,
    about: &'static str,
    binding: Binding<Draft>,
) -> Key {
    Key::new(name, default, about, binding)
}

/// The TLS keys, kept as set for the rules of `ssl.rs`.
const IF_SET: IfSet = IfSet;

pub(crate) const KEYS: &[Key] = &[
    key(
        "server.port",
        "8761",
        "HTTP port (0 picks a free one)",
        Bound(&field(PORT, |c, v| c.server.port = v)),
    ),
    key(
        "server.address",
        "0.0.0.0",
        "IP address to listen on",
        Bound(&field(IP_ADDRESS, |c, v| c.server.address = v)),
    ),
    key(
        "server.tomcat.connection-timeout",
        "20s",
        "a new connection's request head must arrive within",
        Bound(&field(TIMEOUT, |c, v| c.connections.connection_timeout = v)),
    ),
    key(
        "server.tomcat.keep-alive-timeout",
        "60s",
        "an idle connection's next request head, within",
        Bound(&field(TIMEOUT, |c, v| c.connections.keep_alive_timeout = v)),
    ),
    key(
        "server.tomcat.max-connections",
        "8192",
        "connections served at once (then idle ones close)",
        Bound(&field(CONNECTION_COUNT, |c, v| {
            c.connections.max_connections = v
        })),
    ),
    key(
        "server.max-http-request-header-size",
        "8KB",
        "request line + headers limit (431)",
        Bound(&field(HEADER_SIZE, |c, v| {
            c.connections.max_header_bytes = v
        })),
    ),
    key(
        "server.max-http-header-size",
        "",
        "older name of server.max-http-request-header-size",
        OlderNameOf("server.max-http-request-header-size"),
    ),
    key(
        "server.ssl.enabled",
        "",
        "serve HTTPS (on when any server.ssl key is set)",
        Bound(&part(IF_SET, |p, v| p.ssl.enabled = v)),
    ),
    key(
        "server.ssl.bundle",
        "",
        "serve HTTPS with this spring.ssl.bundle",
        Bound(&part(IF_SET, |p, v| p.ssl.bundle = v)),
    ),
    key(
        "server.ssl.key-store",
        "",
        "PKCS12 or JKS file of the certificate and key",
        Bound(&part(IF_SET, |p, v| p.ssl.key_store = v)),
    ),
    key(
        "server.ssl.key-store-type",
        "",
        "PKCS12 or JKS (unset: the file says)",
        Bound(&part(IF_SET, |p, v| p.ssl.key_store_type = v)),
    ),
    key(
        "server.ssl.key-store-password",
        "",
        "the key store's password",
        Bound(&part(IF_SET, |p, v| p.ssl.key_store_password = v)),
    ),
    key(
        "server.ssl.key-alias",
        "",
        "the key store entry to serve",
        Bound(&part(IF_SET, |p, v| p.ssl.key_alias = v)),
    ),
    key(
        "server.ssl.key-password",
        "",
        "that entry's password (default: the store's)",
        Bound(&part(IF_SET, |p, v| p.ssl.key_password = v)),
    ),
    key(
        "server.ssl.certificate",
        "",
        "PEM certificate chain file",
        Bound(&part(IF_SET, |p, v| p.ssl.certificate = v)),
    ),
    key(
        "server.ssl.certificate-private-key",
        "",
        "PEM private key file",
        Bound(&part(IF_SET, |p, v| p.ssl.certificate_private_key = v)),
    ),
    key(
        "server.ssl.trust-store",
        "",
        "PKCS12 or JKS of CAs client certificates need",
        Bound(&part(IF_SET, |p, v| p.ssl.trust_store = v)),
    ),
    key(
        "server.ssl.trust-store-type",
        "",
        "PKCS12 or JKS (unset: the file says)",
        Bound(&part(IF_SET, |p, v| p.ssl.trust_store_type = v)),
    ),
    key(
        "server.ssl.trust-store-password",
        "",
        "the trust store's password",
        Bound(&part(IF_SET, |p, v| p.ssl.trust_store_password = v)),
    ),
    key(
        "server.ssl.trust-certificate",
        "",
        "PEM file of CAs client certificates need",
        Bound(&part(IF_SET, |p, v| p.ssl.trust_certificate = v)),
    ),
    key(
        "server.ssl.client-auth",
        "",
        "none|want|need: ask for client certificates",
        Bound(&part(IF_SET, |p, v| p.ssl.client_auth = v)),
    ),
    key(
        "server.ssl.enabled-protocols",
        "",
        "TLSv1.2,TLSv1.3 or one of them",
        Bound(&part(IF_SET, |p, v| p.ssl.enabled_protocols = v)),
    ),
    key(
        "server.ssl.ciphers",
        "",
        "IANA cipher suite names (default: rustls's)",
        Bound(&part(IF_SET, |p, v| p.ssl.ciphers = v)),
    ),
    key(
        "server.ssl.protocol",
        "",
        "accepted: TLS, TLSv1.2 or TLSv1.3",
        Bound(&part(IF_SET, |p, v| p.ssl.protocol = v)),
    ),
    key(
        "spring.ssl.bundle.jks.<bundle>",
        "",
        "keystore.*, key.*, truststore.*, reload-on-update, options.*",
        Bound(&map_part(IF_SET, |p, entries| {
            p.ssl.bundles.extend(entries.into_iter().filter_map(|(_, v)| v))
        })),
    ),
    key(
        "spring.ssl.bundle.pem.<bundle>",
        "",
        "keystore.certificate|private-key, truststore.certificate, reload-on-update, options.*",
        Bound(&map_part(IF_SET, |p, entries| {
            p.ssl.bundles.extend(entries.into_iter().filter_map(|(_, v)| v))
        })),
    ),
    key(
        "spring.ssl.bundle.watch.file.quiet-period",
        "10s",
        "reload a changed bundle file once quiet this long",
        Bound(&part(IF_SET, |p, v| p.ssl.quiet_period = v)),
    ),
    key(
        "server.http2.enabled",
        "false",
        "accepted and inert: HTTP/1.1 is served",
        Inert,
    ),
    key(
        "spring.lifecycle.timeout-per-shutdown-phase",
        "30s",
        "grace for in-flight requests on SIGTERM",
        Bound(&field(TIMEOUT, |c, v| c.connections.shutdown_grace = v)),
    ),
    key(
        "spring.application.name",
        "heureka",
        "application name",
        Bound(&field(TEXT, |c, v| c.application_name = v)),
    ),
    key(
        "spring.security.user.name",
        "",
        "HTTP basic-auth user (needs the password too)",
        Bound(&part(AS_WRITTEN, |p, v| p.user_name = v)),
    ),
    key(
        "spring.security.user.password",
        "",
        "HTTP basic-auth password",
        Bound(&part(AS_WRITTEN, |p, v| p.user_password = v)),
    ),
    key(
        "spring.profiles.active",
        "",
        "profiles: also read application-{profile}.*",
        Loader,
    ),
    key(
        "spring.config.name",
        "application",
        "base name of the config files",
        Loader,
    ),
    key(
        "spring.config.location",
        "",
        "files/directories replacing the default locations",
        Loader,
    ),
    key(
        "spring.config.additional-location",
        "",
        "files/directories read on top of them",
        Loader,
    ),
    key(
        "eureka.server.enable-self-preservation",
        "true",
        "stop evicting when renewals drop",
        Bound(&field(BOOL, |c, v| {
            c.eureka_server.enable_self_preservation = v
        })),
    ),
    key(
        "eureka.server.renewal-percent-threshold",
        "0.85",
        "share of expected renewals, in (0, 1]",
        Bound(&field(FRACTION, |c, v| {
            c.eureka_server.renewal_percent_threshold = v
        })),
    ),
    key(
        "eureka.server.renewal-threshold-update-interval-ms",
        "900000",
        "threshold recomputation",
        Bound(&field(WHOLE_U64, |c, v| {
            c.eureka_server.renewal_threshold_update_interval_ms = v
        })),
    ),
    key(
        "eureka.server.expected-client-renewal-interval-seconds",
        "30",
        "client heartbeat period",
        Bound(&field(RENEWAL_INTERVAL_SECONDS, |c, v| {
            c.eureka_server.expected_client_renewal_interval_seconds = v
        })),
    ),
    key(
        "eureka.server.eviction-interval-timer-in-ms",
        "60000",
        "eviction task period",
        Bound(&field(WHOLE_U64, |c, v| {
            c.eureka_server.eviction_interval_timer_in_ms = v
        })),
    ),
    key(
        "eureka.server.response-cache-update-interval-ms",
        "30000",
        "read-only cache refresh",
        Bound(&field(WHOLE_U64, |c, v| {
            c.eureka_server.response_cache_update_interval_ms = v
        })),
    ),
    key(
        "eureka.server.response-cache-auto-expiration-in-seconds",
        "180",
        "cache entry lifetime",
        Bound(&field(WHOLE_U64, |c, v| {
            c.eureka_server.response_cache_auto_expiration_in_seconds = v
        })),
    ),
    key(
        "eureka.server.use-read-only-response-cache",
        "true",
        "accepted; reads are always fresh",
        Bound(&field(BOOL, |c, v| {
            c.eureka_server.use_read_only_response_cache = v
        })),
    ),
    key(
        "eureka.server.retention-time-in-m-s-in-delta-queue",
        "180000",
        "delta queue retention",
        Bound(&field(WHOLE_U64, |c, v| {
            c.eureka_server.retention_time_in_ms_in_delta_queue = v
        })),
    ),
    key(
        "eureka.server.delta-retention-timer-interval-in-ms",
        "30000",
        "delta queue pruning",
        Bound(&field(WHOLE_U64, |c, v| {
            c.eureka_server.delta_retention_timer_interval_in_ms = v
        })),
    ),
    key(
        "eureka.server.disable-delta",
        "false",
        "serve no deltas",
        Bound(&field(BOOL, |c, v| c.eureka_server.disable_delta = v)),
    ),
    key(
        "eureka.server.wait-time-in-ms-when-sync-empty",
        "300000",
        "refuse reads after empty sync",
        Bound(&field(WHOLE_U64, |c, v| {
            c.eureka_server.wait_time_in_ms_when_sync_empty = v
        })),
    ),
    key(
        "eureka.server.enable-replicated-request-compression",
        "false",
        "gzip replication",
        Bound(&field(BOOL, |c, v| {
            c.eureka_server.enable_replicated_request_compression = v
        })),
    ),
    key(
        "eureka.server.my-url",
        "",
        "this server's own URL among the peers",
        Bound(&field(OPTIONAL_TEXT, |c, v| c.eureka_server.my_url = v)),
    ),
    key(
        "eureka.server.registry-sync-retries",
        "0",
        "start-up sync attempts (5 when registering)",
        Bound(&field(WHOLE_U32, |c, v| {
            c.eureka_server.registry_sync_retries = v
        })),
    ),
    key(
        "eureka.server.registry-sync-retry-wait-ms",
        "30000",
        "wait between start-up sync attempts",
        Bound(&field(WHOLE_U64, |c, v| {
            c.eureka_server.registry_sync_retry_wait_ms = v
        })),
    ),
    key(
        "eureka.server.peer-eureka-nodes-update-interval-ms",
        "600000",
        "re-read the config for the peer list",
        Bound(&field(WHOLE_U64, |c, v| {
            c.eureka_server.peer_eureka_nodes_update_interval_ms = v
        })),
    ),
    key(
        "eureka.server.peer-node-connect-timeout-ms",
        "200",
        "replication connect timeout",
        Bound(&field(WHOLE_U64, |c, v| {
            c.eureka_server.peer_node_connect_timeout_ms = v
        })),
    ),
    key(
        "eureka.server.peer-node-read-timeout-ms",
        "200",
        "replication batch answer timeout",
        Bound(&field(WHOLE_U64, |c, v| {
            c.eureka_server.peer_node_read_timeout_ms = v
        })),
    ),
    key(
        "eureka.server.max-elements-in-peer-replication-pool",
        "10000",
        "per-peer replication queue limit",
        Bound(&field(WHOLE_U32, |c, v| {
            c.eureka_server.max_elements_in_peer_replication_pool = v as usize
        })),
    ),
    key(
        "eureka.server.max-time-for-replication",
        "30000",
        "drop replication tasks older than this",
        Bound(&field(WHOLE_U64, |c, v| {
            c.eureka_server.max_time_for_replication = v
        })),
    ),
    key(
        "eureka.server.sync-when-timestamp-differs",
        "true",
        "adopt a peer's newer copy (409)",
        Bound(&field(BOOL, |c, v| {
            c.eureka_server.sync_when_timestamp_differs = v
        })),
    ),
    key(
        "eureka.server.rate-limiter-enabled",
        "false",
        "503 registry fetches over the rate (else only count)",
        Bound(&field(BOOL, |c, v| {
            c.eureka_server.rate_limiter.enabled = v
        })),
    ),
    key(
        "eureka.server.rate-limiter-throttle-standard-clients",
        "false",
        "also limit DiscoveryIdentity-Name DefaultClient",
        Bound(&field(BOOL, |c, v| {
            c.eureka_server.rate_limiter.throttle_standard_clients = v
        })),
    ),
    key(
        "eureka.server.rate-limiter-privileged-clients",
        "",
        "DiscoveryIdentity-Names never limited",
        Bound(&field(CLIENT_NAMES, |c, v| {
            c.eureka_server.rate_limiter.privileged_clients = v
        })),
    ),
    key(
        "eureka.server.rate-limiter-burst-size",
        "10",
        "registry fetches allowed at once",
        Bound(&field(POSITIVE_U32, |c, v| {
            c.eureka_server.rate_limiter.burst_size = v
        })),
    ),
    key(
        "eureka.server.rate-limiter-registry-fetch-average-rate",
        "500",
        "registry fetches per second, on average",
        Bound(&field(POSITIVE_U32, |c, v| {
            c.eureka_server.rate_limiter.registry_fetch_average_rate = v
        })),
    ),
    key(
        "eureka.server.rate-limiter-full-fetch-average-rate",
        "100",
        "full fetches ({base}/apps) per second, on average",
        Bound(&field(POSITIVE_U32, |c, v| {
            c.eureka_server.rate_limiter.full_fetch_average_rate = v
        })),
    ),
    key(
        "eureka.server.batch-replication",
        "false",
        "accepted and inert; batches are always sent",
        Inert,
    ),
    key(
        "eureka.server.remote-region-urls-with-name.<region>",
        "",
        "a remote region's server base URL, fetched read-only (docs/regions.md)",
        Bound(&map(HTTP_URL, |c, regions| {
            c.eureka_server.regions.urls = rules::region_urls(regions)
        })),
    ),
    key(
        "eureka.server.remote-region-registry-fetch-interval",
        "30",
        "seconds between fetches of each remote region",
        Bound(&field(POSITIVE_U32, |c, v| {
            c.eureka_server.regions.fetch_interval = Duration::from_secs(u64::from(v))
        })),
    ),
    key(
        "eureka.server.remote-region-connect-timeout-ms",
        "1000",
        "remote region connect timeout",
        Bound(&field(POSITIVE_U32, |c, v| {
            c.eureka_server.regions.connect_timeout = Duration::from_millis(u64::from(v))
        })),
    ),
    key(
        "eureka.server.remote-region-read-timeout-ms",
        "1000",
        "remote region answer timeout",
        Bound(&field(POSITIVE_U32, |c, v| {
            c.eureka_server.regions.read_timeout = Duration::from_millis(u64::from(v))
        })),
    ),
    key(
        "eureka.server.remote-region-app-whitelist.<region>",
        "",
        "apps served from a region (key global: regions without one)",
        Bound(&map(APP_NAMES, |c, regions| {
            c.eureka_server.regions.whitelist = rules::region_whitelist(regions)
        })),
    ),
    key(
        "eureka.server.disable-delta-for-remote-regions",
        "false",
        "fetch remote regions in full every time",
        Bound(&field(BOOL, |c, v| c.eureka_server.regions.disable_delta = v)),
    ),
    key(
        "eureka.server.disable-transparent-fallback-to-other-region",
        "false",
        "reads without regions= serve the local region only",
        Bound(&field(BOOL, |c, v| {
            c.eureka_server.regions.disable_transparent_fallback = v
        })),
    ),
    key(
        "eureka.server.g-zip-content-from-remote-region",
        "true",
        "ask remote regions for gzip",
        Bound(&field(BOOL, |c, v| c.eureka_server.regions.gzip = v)),
    ),
    key(
        "eureka.server.remote-region-trust-store",
        "",
        "PKCS12 or JKS of CAs for https:// regions",
        Bound(&part(IF_SET, |p, v| p.region_trust.store = v)),
    ),
    key(
        "eureka.server.remote-region-trust-store-password",
        "",
        "that trust store's password",
        Bound(&part(IF_SET, |p, v| p.region_trust.password = v)),
    ),
    key(
        "eureka.server.remote-region-urls",
        "",
        "accepted and inert: name regions with remote-region-urls-with-name",
        Inert,
    ),
    key(
        "eureka.server.remote-region-total-connections",
        "1000",
        "accepted and inert: one connection pool per region",
        Inert,
    ),
    key(
        "eureka.server.remote-region-total-connections-per-host",
        "500",
        "accepted and inert: one connection pool per region",
        Inert,
    ),
    key(
        "eureka.server.remote-region-connection-idle-timeout-seconds",
        "30",
        "accepted and inert: one connection pool per region",
        Inert,
    ),
    key(
        "eureka.server.remote-region-fetch-thread-pool-size",
        "20",
        "accepted and inert: one task per region",
        Inert,
    ),
    key(
        "eureka.instance.registry.expected-number-of-clients-sending-renews",
        "1",
        "clients assumed before any register",
        Bound(&field(WHOLE_U32, |c, v| {
            c.registry.expected_number_of_clients_sending_renews = v
        })),
    ),
    key(
        "eureka.instance.registry.default-open-for-traffic-count",
        "1",
        "clients assumed when peers had none",
        Bound(&field(WHOLE_U32, |c, v| {
            c.registry.default_open_for_traffic_count = v
        })),
    ),
    key(
        "eureka.client.register-with-eureka",
        "true",
        "register with the peers",
        Bound(&field(BOOL, |c, v| c.client.register_with_eureka = v)),
    ),
    key(
        "eureka.client.fetch-registry",
        "true",
        "sync the registry from the peers",
        Bound(&field(BOOL, |c, v| c.client.fetch_registry = v)),
    ),
    key(
        "eureka.client.eureka-server-read-timeout-seconds",
        "8",
        "start-up sync: wait for a peer's registry",
        Bound(&field(WHOLE_U64, |c, v| {
            c.client.eureka_server_read_timeout_seconds = v
        })),
    ),
    key(
        "eureka.client.service-url.<zone>",
        "",
        "peer URLs, comma-separated",
        Bound(&map(SERVICE_URLS, |c, zones| {
            c.client.service_url = rules::service_urls(zones)
        })),
    ),
    key(
        "eureka.client.region",
        "us-east-1",
        "region of the zones below",
        Bound(&field(REGION, |c, v| c.client.region = v)),
    ),
    key(
        "eureka.client.availability-zones.<region>",
        "",
        "zones in order, comma-separated; own first",
        Bound(&map(ZONES, |c, regions| {
            c.client.availability_zones = non_empty(regions)
        })),
    ),
    key(
        "eureka.client.tls.enabled",
        "",
        "use the tls keys below for https:// peers",
        Bound(&part(IF_SET, |p, v| p.client_tls.enabled = v)),
    ),
    key(
        "eureka.client.tls.key-store",
        "",
        "PKCS12 or JKS: the certificate peers may ask for",
        Bound(&part(IF_SET, |p, v| p.client_tls.key_store = v)),
    ),
    key(
        "eureka.client.tls.key-store-type",
        "",
        "PKCS12 or JKS (unset: the file says)",
        Bound(&part(IF_SET, |p, v| p.client_tls.key_store_type = v)),
    ),
    key(
        "eureka.client.tls.key-store-password",
        "",
        "the key store's password",
        Bound(&part(IF_SET, |p, v| p.client_tls.key_store_password = v)),
    ),
    key(
        "eureka.client.tls.key-alias",
        "",
        "the key store entry to present",
        Bound(&part(IF_SET, |p, v| p.client_tls.key_alias = v)),
    ),
    key(
        "eureka.client.tls.key-password",
        "",
        "that entry's password (default: the store's)",
        Bound(&part(IF_SET, |p, v| p.client_tls.key_password = v)),
    ),
    key(
        "eureka.client.tls.trust-store",
        "",
        "PKCS12 or JKS of CAs peers' certificates need (default: the system's)",
        Bound(&part(IF_SET, |p, v| p.client_tls.trust_store = v)),
    ),
    key(
        "eureka.client.tls.trust-store-type",
        "",
        "PKCS12 or JKS (unset: the file says)",
        Bound(&part(IF_SET, |p, v| p.client_tls.trust_store_type = v)),
    ),
    key(
        "eureka.client.tls.trust-store-password",
        "",
        "the trust store's password",
        Bound(&part(IF_SET, |p, v| p.client_tls.trust_store_password = v)),
    ),
    key(
        "eureka.instance.hostname",
        "",
        "advertised host name",
        Bound(&field(OPTIONAL_TEXT, |c, v| c.instance.hostname = v)),
    ),
    key(
        "eureka.instance.lease-renewal-interval-in-seconds",
        "30",
        "this server's own heartbeat period",
        Bound(&field(WHOLE_U32, |c, v| {
            c.instance.lease_renewal_interval_in_seconds = v.max(1)
        })),
    ),
    key(
        "eureka.instance.lease-expiration-duration-in-seconds",
        "90",
        "this server's own lease duration",
        Bound(&field(WHOLE_U32, |c, v| {
            c.instance.lease_expiration_duration_in_seconds = v.max(1)
        })),
    ),
    key(
        "eureka.instance.prefer-ip-address",
        "false",
        "advertise the IP instead",
        Bound(&field(BOOL, |c, v| c.instance.prefer_ip_address = v)),
    ),
    key(
        "eureka.instance.ip-address",
        "",
        "advertised IP address",
        Bound(&field(OPTIONAL_IP_ADDRESS, |c, v| {
            c.instance.ip_address = v
        })),
    ),
    key(
        "eureka.instance.instance-id",
        "",
        "this server's instance id",
        Bound(&field(OPTIONAL_TEXT, |c, v| c.instance.instance_id = v)),
    ),
    key(
        "management.endpoints.web.exposure.include",
        "health,info,prometheus",
        "actuator endpoints served (* for all)",
        Bound(&part(ENDPOINT_NAMES, |p, v| p.exposure_include = v)),
    ),
    key(
        "management.endpoints.web.exposure.exclude",
        "",
        "actuator endpoints not served",
        Bound(&part(ENDPOINT_NAMES, |p, v| p.exposure_exclude = v)),
    ),
    key(
        "management.endpoints.web.base-path",
        "/actuator",
        "prefix of the actuator endpoints",
        Bound(&field(ACTUATOR_BASE_PATH, |c, v| {
            c.management.base_path = v
        })),
    ),
    key(
        "management.endpoint.health.show-details",
        "when-authorized",
        "never|when-authorized|always",
        Bound(&field(SHOW_DETAILS, |c, v| c.management.show_details = v)),
    ),
    key(
        "management.prometheus.metrics.export.enabled",
        "true",
        "serve /actuator/prometheus and /metrics",
        Bound(&part(BOOL, |p, v| p.prometheus_export &= v)),
    ),
    key(
        "management.metrics.export.prometheus.enabled",
        "true",
        "the same, Spring Boot 2's name",
        Bound(&part(BOOL, |p, v| p.prometheus_export &= v)),
    ),
    key(
        "server.tomcat.accesslog.enabled",
        "false",
        "log every request (as heureka.access-log)",
        Bound(&field(BOOL, |c, v| c.management.access_log |= v)),
    ),
    key(
        "logging.level.<target>",
        "",
        "trace|debug|info|warn|error|off; root for all",
        Bound(&map(LOG_LEVEL, |c, levels| {
            c.logging_levels = rules::root_first(levels)
        })),
    ),
    key(
        "heureka.legacy-lease-expiry",
        "false",
        "reproduce Eureka's 2x lease expiry bug",
        Bound(&field(BOOL, |c, v| c.heureka.legacy_lease_expiry = v)),
    ),
    key(
        "heureka.refuse-takeovers",
        "false",
        "refuse (409) registering an id whose live lease is elsewhere",
        Bound(&field(BOOL, |c, v| c.heureka.refuse_takeovers = v)),
    ),
    key(
        "heureka.max-request-body-size",
        "1MB",
        "request body limit (B, KB, MB, GB)",
        Bound(&field(BODY_SIZE, |c, v| {
            c.heureka.max_request_body_bytes = v
        })),
    ),
    key(
        "heureka.request-body-timeout",
        "30s",
        "a request body must arrive in full within (408)",
        Bound(&field(TIMEOUT, |c, v| {
            c.connections.request_body_timeout = v
        })),
    ),
    key(
        "heureka.limits.max-name-length",
        "256",
        "bytes of app name, instance id, VIP address (400)",
        Bound(&field(NAME_LENGTH, |c, v| {
            c.heureka.limits.max_name_length = v
        })),
    ),
    key(
        "heureka.limits.max-metadata-entries",
        "128",
        "metadata entries per instance (400)",
        Bound(&field(POSITIVE_COUNT, |c, v| {
            c.heureka.limits.max_metadata_entries = v
        })),
    ),
    key(
        "heureka.limits.max-metadata-bytes",
        "32KB",
        "metadata keys and values per instance (400)",
        Bound(&field(METADATA_SIZE, |c, v| {
            c.heureka.limits.max_metadata_bytes = v
        })),
    ),
    key(
        "heureka.limits.max-lease-duration",
        "1h",
        "longer leases are shortened to this (WARN)",
        Bound(&field(LEASE_DURATION, |c, v| {
            c.heureka.limits.max_lease_duration = v
        })),
    ),
    key(
        "heureka.limits.max-instances",
        "2000000",
        "instances in all; a new one beyond is refused (403)",
        Bound(&field(POSITIVE_COUNT, |c, v| {
            c.heureka.limits.max_instances = v
        })),
    ),
    key(
        "heureka.base-path",
        "/eureka",
        "REST API prefix",
        Bound(&field(API_BASE_PATH, |c, v| c.heureka.base_path = v)),
    ),
    key(
        "heureka.access-log",
        "false",
        "log every request: method, path, status, time",
        Bound(&field(BOOL, |c, v| c.management.access_log |= v)),
    ),
    key(
        "heureka.audit.enabled",
        "true",
        "record administrative acts and refusals (heureka::audit)",
        Bound(&field(BOOL, |c, v| c.heureka.audit.enabled = v)),
    ),
    key(
        "heureka.audit.retained",
        "1000",
        "audit entries kept in memory for the dashboard",
        Bound(&field(POSITIVE_COUNT, |c, v| c.heureka.audit.retained = v)),
    ),
    key(
        "heureka.health-checks.enabled",
        "false",
        "probe each instance's healthCheckUrl (or port) from the server",
        Bound(&field(BOOL, |c, v| c.heureka.health_checks.enabled = v)),
    ),
    key(
        "heureka.health-checks.interval",
        "2s",
        "probe each instance this often",
        Bound(&field(TIMEOUT, |c, v| c.heureka.health_checks.interval = v)),
    ),
    key(
        "heureka.health-checks.timeout",
        "2s",
        "a probe unanswered this long failed",
        Bound(&field(TIMEOUT, |c, v| c.heureka.health_checks.timeout = v)),
    ),
    key(
        "heureka.health-checks.failures-before-down",
        "2",
        "consecutive failed probes that make an instance DOWN",
        Bound(&field(POSITIVE_U32, |c, v| {
            c.heureka.health_checks.failures_before_down = v
        })),
    ),
    key(
        "heureka.health-checks.successes-before-up",
        "1",
        "consecutive passed probes that lift it again",
        Bound(&field(POSITIVE_U32, |c, v| {
            c.heureka.health_checks.successes_before_up = v
        })),
    ),
    key(
        "heureka.health-checks.jitter",
        "1s",
        "spread each instance's probes by a random offset up to this",
        Bound(&field(DURATION_OR_ZERO, |c, v| {
            c.heureka.health_checks.jitter = v
        })),
    ),
    key(
        "heureka.health-checks.concurrency",
        "64",
        "probes in flight at once",
        Bound(&field(POSITIVE_COUNT, |c, v| {
            c.heureka.health_checks.concurrency = v
        })),
    ),
    key(
        "heureka.health-checks.evict-after",
        "0",
        "remove an instance failing this long (0: never; never in self-preservation)",
        Bound(&field(NEVER_OR_DURATION, |c, v| {
            c.heureka.health_checks.evict_after = v
        })),
    ),
    key(
        "heureka.health-checks.self-suspicion-percent",
        "50",
        "more than this % of passing instances failing at once: suspect own network",
        Bound(&field(PERCENT, |c, v| {
            c.heureka.health_checks.self_suspicion_percent = v
        })),
    ),
    key(
        "heureka.health-checks.apps.<app>",
        "",
        "off, http or tcp for one application",
        Bound(&map(CHECK_MODE, |c, apps| {
            c.heureka.health_checks.apps = apps
                .into_iter()
                .map(|(app, mode)| (app.to_uppercase(), mode))
                .collect()
        })),
    ),
    key(
        "heureka.health-checks.allowed-networks",
        DEFAULT_PROBE_NETWORKS,
        "probe only addresses in these CIDRs (0.0.0.0/0,::/0 = any but link-local and cloud metadata)",
        Bound(&field(ADDRESS_RANGES, |c, v| {
            c.heureka.health_checks.allowed_networks = v
        })),
    ),
    key(
        "heureka.consumers.max",
        "10000",
        "consumers of the registry kept (the quietest make room)",
        Bound(&field(POSITIVE_COUNT, |c, v| c.heureka.consumers.max = v)),
    ),
    key(
        "heureka.consumers.retention",
        "5m",
        "forget a consumer quiet this long",
        Bound(&field(TIMEOUT, |c, v| c.heureka.consumers.retention = v)),
    ),
    key(
        "heureka.consumers.active-within",
        "90s",
        "a drain waits for periodic consumers that fetched this recently",
        Bound(&field(TIMEOUT, |c, v| {
            c.heureka.consumers.active_within = v
        })),
    ),
    key(
        "heureka.consumers.behind-after",
        "60s",
        "heureka_consumers_behind: older version, no fetch for this long",
        Bound(&field(TIMEOUT, |c, v| c.heureka.consumers.behind_after = v)),
    ),
    key(
        "heureka.persistence.dir",
        "",
        "keep the registry on disk here and restore it on start (off when empty)",
        Bound(&field(OPTIONAL_TEXT, |c, v| c.heureka.persistence.dir = v)),
    ),
    key(
        "heureka.persistence.flush-interval",
        "1s",
        "writes reach the disk in batches this often: at most this much is lost to a crash",
        Bound(&field(TIMEOUT, |c, v| {
            c.heureka.persistence.flush_interval = v
        })),
    ),
    key(
        "heureka.security.allowed-origins",
        "",
        "browser origins whose pages may write (403 otherwise)",
        Bound(&field(ORIGINS, |c, v| c.heureka.allowed_origins = v)),
    ),
    key(
        "heureka.security.allowed-hosts",
        "",
        "Host names browsers may use besides IPs, localhost, own and peer names (* = any)",
        Bound(&field(HOST_NAMES, |c, v| c.heureka.allowed_hosts = v)),
    ),
    key(
        "heureka.security.users[<n>].name",
        "",
        "a user (Basic name); see README \"Users and roles\"",
        Bound(&indexed(TEXT, |p, n, name| p.user(n).name = Some(name))),
    ),
    key(
        "heureka.security.users[<n>].password",
        "",
        "its password: plain, {noop}plain or {bcrypt}$2a$...",
        Bound(&indexed(TEXT, |p, n, password| {
            p.user(n).password = Some(password)
        })),
    ),
    key(
        "heureka.security.users[<n>].certificate",
        "",
        "a client certificate's CN or SAN name that is this user",
        Bound(&indexed(TEXT, |p, n, name| {
            p.user(n).certificate = Some(name)
        })),
    ),
    key(
        "heureka.security.users[<n>].roles",
        "",
        "read, register, admin, peer (comma-separated)",
        Bound(&indexed(ROLE_NAMES, |p, n, roles| {
            p.user(n).roles = Some(roles)
        })),
    ),
    key(
        "heureka.security.users[<n>].apps",
        "",
        "apps its register role is limited to (default: all)",
        Bound(&indexed(APP_NAMES, |p, n, apps| p.user(n).apps = apps)),
    ),
    key(
        "heureka.security.users[<n>].namespaces",
        "",
        "namespaces it is limited to (default: all)",
        Bound(&indexed(NAMESPACE_NAMES, |p, n, names| {
            p.user(n).namespaces = names
        })),
    ),
    key(
        "heureka.replication.anti-entropy-interval-ms",
        "10000",
        "compare with peers and repair (0 = off)",
        Bound(&field(WHOLE_U64, |c, v| {
            c.heureka.replication.anti_entropy_interval_ms = v
        })),
    ),
    key(
        "heureka.replication.batch-delay-ms",
        "500",
        "longest a heartbeat waits to be batched",
        Bound(&field(WHOLE_U64, |c, v| {
            c.heureka.replication.batch_delay_ms = v
        })),
    ),
    key(
        "heureka.replication.tombstone-retention-ms",
        "300000",
        "keep removed instances' times this long",
        Bound(&field(WHOLE_U64, |c, v| {
            c.heureka.replication.tombstone_retention_ms = v
        })),
    ),
    key(
        "heureka.replication.batch-size",
        "250",
        "most tasks in one replication batch",
        Bound(&field(WHOLE_U32, |c, v| {
            c.heureka.replication.batch_size = v.max(1) as usize
        })),
    ),
    key(
        "heureka.replication.peers-only",
        "true",
        "accept replication only from peers (false: anyone, as Eureka)",
        Bound(&field(BOOL, |c, v| c.heureka.replication.peers_only = v)),
    ),
    key(
        "heureka.replication.allowed-addresses",
        "",
        "also accept replication from these IPs/CIDRs (NAT, tools)",
        Bound(&field(ADDRESS_RANGES, |c, v| {
            c.heureka.replication.allowed_addresses = v
        })),
    ),
    key(
        "heureka.replication.peer-user.name",
        "",
        "peers' credentials: accepted from any address; sent where a peer URL has none",
        Bound(&part(AS_WRITTEN, |p, v| p.peer_user_name = v)),
    ),
    key(
        "heureka.replication.peer-user.password",
        "",
        "their password (Java peers put both in their service URLs)",
        Bound(&part(AS_WRITTEN, |p, v| p.peer_user_password = v)),
    ),
    key(
        "eureka.dashboard.enabled",
        "true",
        "serve the dashboard",
        Bound(&field(BOOL, |c, v| c.dashboard.enabled = v)),
    ),
    key(
        "eureka.dashboard.path",
        "/",
        "where the dashboard is served",
        Bound(&field(DASHBOARD_PATH, |c, v| c.dashboard.path = v)),
    ),
    key(
        "eureka.environment",
        "test",
        "environment shown on the dashboard",
        Bound(&field(TEXT, |c, v| c.dashboard.environment = v)),
    ),
    key(
        "eureka.datacenter",
        "default",
        "data center shown on the dashboard",
        Bound(&field(TEXT, |c, v| c.dashboard.datacenter = v)),
    ),
    key(
        "heureka.events.max-streams",
        "256",
        "event streams open at once (then 429)",
        Bound(&field(CONNECTION_COUNT, |c, v| {
            c.heureka.events.max_streams = v
        })),
    ),
    key(
        "heureka.events.max-streams-per-client",
        "8",
        "event streams open at once per client IP (then 429)",
        Bound(&field(CONNECTION_COUNT, |c, v| {
            c.heureka.events.max_streams_per_client = v
        })),
    ),
    key(
        "heureka.events.keep-alive-interval",
        "15s",
        "comment line on a quiet event stream this often",
        Bound(&field(TIMEOUT, |c, v| {
            c.heureka.events.keep_alive_interval = v
        })),
    ),
    key(
        "heureka.events.send-timeout",
        "30s",
        "close a stream whose client stopped reading for",
        Bound(&field(TIMEOUT, |c, v| c.heureka.events.send_timeout = v)),
    ),
    key(
        "heureka.events.max-stream-age",
        "30m",
        "end an event stream this long after it began",
        Bound(&field(TIMEOUT, |c, v| c.heureka.events.max_age = v)),
    ),
    key(
        "heureka.push.enabled",
        "true",
        "serve {base}/push, the stream consumers follow (docs/push.md)",
        Bound(&field(BOOL, |c, v| c.heureka.push.enabled = v)),
    ),
    key(
        "heureka.push.max-subscribers",
        "20000",
        "push streams open at once (then 429)",
        Bound(&field(CONNECTION_COUNT, |c, v| {
            c.heureka.push.max_subscribers = v
        })),
    ),
    key(
        "heureka.push.max-subscribers-per-client",
        "1000",
        "push streams open at once per client IP (then 429)",
        Bound(&field(CONNECTION_COUNT, |c, v| {
            c.heureka.push.max_subscribers_per_client = v
        })),
    ),
    key(
        "heureka.push.keep-alive-interval",
        "15s",
        "comment line on a quiet push stream this often",
        Bound(&field(TIMEOUT, |c, v| c.heureka.push.keep_alive_interval = v)),
    ),
    key(
        "heureka.push.send-timeout",
        "30s",
        "close a push stream whose client stopped reading for",
        Bound(&field(TIMEOUT, |c, v| c.heureka.push.send_timeout = v)),
    ),
    key(
        "heureka.push.max-stream-age",
        "10m",
        "end a push stream this long after it began (it resumes)",
        Bound(&field(TIMEOUT, |c, v| c.heureka.push.max_age = v)),
    ),
    key(
        "heureka.push.replay",
        "4096",
        "deltas kept for push streams that resume",
        Bound(&field(POSITIVE_COUNT, |c, v| c.heureka.push.replay = v)),
    ),
    key(
        "heureka.xds.enabled",
        "false",
        "serve xDS (ADS) for proxyless gRPC and Envoy on heureka.xds.port (docs/xds.md)",
        Bound(&field(BOOL, |c, v| c.heureka.xds.enabled = v)),
    ),
    key(
        "heureka.xds.port",
        "18000",
        "the xDS port, on server.address",
        Bound(&field(PORT, |c, v| c.heureka.xds.port = v)),
    ),
    key(
        "heureka.xds.max-streams",
        "10000",
        "xDS streams, and connections, open at once (then RESOURCE_EXHAUSTED)",
        Bound(&field(CONNECTION_COUNT, |c, v| c.heureka.xds.max_streams = v)),
    ),
    key(
        "heureka.dns.enabled",
        "false",
        "answer A/AAAA/SRV for UP instances over DNS, UDP and TCP (docs/dns.md)",
        Bound(&field(BOOL, |c, v| c.heureka.dns.enabled = v)),
    ),
    key(
        "heureka.dns.address",
        "",
        "IP address DNS listens on (default: server.address)",
        Bound(&field(OPTIONAL_IP_ADDRESS, |c, v| c.heureka.dns.address = v)),
    ),
    key(
        "heureka.dns.port",
        "8600",
        "DNS port, UDP and TCP (0 picks a free one)",
        Bound(&field(PORT, |c, v| c.heureka.dns.port = v)),
    ),
    key(
        "heureka.dns.domain",
        "eureka.",
        "zone answered: <app>.<domain>, _<app>._tcp.<domain>, _<app>._https.<domain>",
        Bound(&field(DNS_DOMAIN, |c, v| c.heureka.dns.domain = v)),
    ),
    key(
        "heureka.dns.ttl",
        "5s",
        "TTL of DNS answers and of negative answers (SOA minimum)",
        Bound(&field(DNS_TTL, |c, v| c.heureka.dns.ttl = v)),
    ),
    key(
        "heureka.dns.max-answers",
        "32",
        "records in one DNS answer at most",
        Bound(&field(POSITIVE_COUNT, |c, v| c.heureka.dns.max_answers = v)),
    ),
    key(
        "heureka.dns.rate-limit",
        "500",
        "DNS queries a second from one source address (then REFUSED)",
        Bound(&field(POSITIVE_U32, |c, v| c.heureka.dns.rate_limit = v)),
    ),
    key(
        "heureka.prometheus-sd.enabled",
        "true",
        "serve {base}/prometheus/sd, Prometheus HTTP service discovery (docs/prometheus-sd.md)",
        Bound(&field(BOOL, |c, v| c.heureka.prometheus_sd.enabled = v)),
    ),
    key(
        "heureka.namespaces.path-prefix",
        "/ns",
        "namespaced API at {prefix}/{name}{base} (docs/namespaces.md)",
        Bound(&field(NAMESPACE_PREFIX, |c, v| {
            c.heureka.namespaces.path_prefix = v
        })),
    ),
    key(
        "heureka.namespaces.auto-create",
        "true",
        "a namespace is created by its first registration",
        Bound(&field(BOOL, |c, v| c.heureka.namespaces.auto_create = v)),
    ),
    key(
        "heureka.namespaces.max",
        "100",
        "namespaces at most besides default",
        Bound(&field(WHOLE_USIZE, |c, v| c.heureka.namespaces.max = v)),
    ),
    key(
        "heureka.namespaces.declared",
        "",
        "namespaces that exist from the start (comma-separated)",
        Bound(&field(NAMESPACE_NAMES, |c, v| c.heureka.namespaces.declared = v)),
    ),
    key(
        "heureka.regions.stale-after",
        "10m",
        "stop serving a remote region this long after its last successful fetch",
        Bound(&field(TIMEOUT, |c, v| c.eureka_server.regions.stale_after = v)),
    ),
    key(
        "heureka.webhooks[<n>].url",
        "",
        "POST events to this URL (see docs/events.md)",
        Bound(&indexed(HTTP_URL, |p, n, url| p.webhook(n).url = Some(url))),
    ),
    key(
        "heureka.webhooks[<n>].events",
        "",
        "event types to send there (default: all but renewals)",
        Bound(&indexed(EVENT_NAMES, |p, n, events| {
            p.webhook(n).events = events
        })),
    ),
    // Spring keys Heureka does not act on and whose silent absence would leave a server less
    // protected than its operator believes: each one set is a start-up error saying what to do
    // instead. They are not in --help and not looked up in the environment.
    key(
        "management.server.port",
        "",
        "",
        Refused(When(separate_management_port)),
    ),
    key(
        "management.server.address",
        "",
        "",
        Refused(Always(
            "Heureka serves the actuator endpoints on the server's own address and port; keep \
             them private with management.endpoints.web.exposure.* and spring.security.user.*",
        )),
    ),
    key(
        "management.server.ssl.<key>",
        "",
        "",
        Refused(Always(
            "Heureka serves the actuator endpoints on the server's own port, under server.ssl.*",
        )),
    ),
    key(
        "spring.security.oauth2.<key>",
        "",
        "",
        Refused(Always(
            "OAuth2 and JWT authentication are not built in; Heureka authenticates with \
             spring.security.user.* (HTTP basic) or client certificates (server.ssl.client-auth)",
        )),
    ),
    key(
        "spring.security.saml2.<key>",
        "",
        "",
        Refused(Always(
            "SAML authentication is not built in; Heureka authenticates with \
             spring.security.user.* (HTTP basic) or client certificates (server.ssl.client-auth)",
        )),
    ),
    key(
        "server.ssl.key-store-provider",
        "",
        "",
        Refused(Always(JVM_PROVIDERS)),
    ),
    key(
        "server.ssl.trust-store-provider",
        "",
        "",
        Refused(Always(JVM_PROVIDERS)),
    ),
    key(
        "server.ssl.server-name-bundles",
        "",
        "",
        Refused(Always(
            "a certificate per host name (SNI) is not supported; serve one certificate whose \
             names cover every host",
        )),
    ),
];

/// Why the key and trust stores' `*-provider` keys are refused.
const JVM_PROVIDERS: &str = "Java security providers do not exist outside a JVM; PKCS12 and JKS \
                             files are read directly";
