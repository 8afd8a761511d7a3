//! The table of every Spring key the client reads.
//!
//! `KEYS` is the single source of truth: an entry is a key's name, its default and its
//! binding (the value type it is read as and where the value goes). `bind.rs` walks the table;
//! the map prefixes (relaxed names), the environment lookups and the defaults of
//! `${placeholders}` are derived from it, and docs/client.md is checked against it. The few
//! keys read by name outside the table walk are named constants that the table holds.
//! `keys/tests.rs` fails, naming the key, when an entry is inconsistent.

use std::sync::OnceLock;

use heureka_config::bindings::non_empty;
use heureka_config::table::{Binding, Table};
use heureka_config::Names;

use super::binding::{field, map, map_part, part, Draft, Key};
use super::values::{
    service_urls, BOOL, BOUND, FILE, LIST, OPTIONAL_PORT, OPTIONAL_TEXT, REGION_NAME, SECONDS,
    SECRET, SERVICE_URLS, STATUS, TEXT, TIMEOUT_SECONDS,
};
use Binding::{Bound, ByRule, First, Placeholder};

#[cfg(test)]
mod tests;

/// An entry; the client prints no `--help`, so it has no line for it.
const fn key(name: &'static str, default: &'static str, binding: Binding<Draft>) -> Key {
    Key::new(name, default, "", binding)
}

/// `spring.application.instance_id`, as Spring Cloud's `IdUtils` reads it (verbatim).
pub(crate) const APPLICATION_INSTANCE_ID: Key = key("spring.application.instance_id", "", ByRule);
/// Cloud Foundry's instance id, as `IdUtils` reads it.
pub(crate) const VCAP_INSTANCE_ID: Key = key("vcap.application.instance_id", "", ByRule);
/// The host name found for the own address (Spring Cloud's `HostInfoEnvironmentPostProcessor`).
pub(crate) const CLIENT_HOSTNAME: Key = key("spring.cloud.client.hostname", "", ByRule);
/// The own address found on the network interfaces.
pub(crate) const CLIENT_IP_ADDRESS: Key = key("spring.cloud.client.ip-address", "", Placeholder);
/// Read as a port here, and as written by the default instance id.
pub(crate) const SERVER_PORT: Key = key(
    "server.port",
    "",
    Bound(&part(OPTIONAL_PORT, |p, v| p.server_port = v)),
);
/// Read by the loader too, to ask the environment for the region's zones.
pub(crate) const REGION: Key = key(
    "eureka.client.region",
    "us-east-1",
    Bound(&field(REGION_NAME, |c, v| c.region = v)),
);
/// Read by the loader too, to ask the environment for the remote regions' zones.
pub(crate) const REMOTE_REGIONS: Key = key(
    "eureka.client.fetch-remote-regions-registry",
    "",
    Bound(&field(LIST, |c, v| c.fetch_remote_regions_registry = v)),
);
/// Named by the pattern check, which reports the key holding the bad pattern.
pub(crate) const PREFERRED_NETWORKS: Key = key(
    "spring.cloud.inetutils.preferred-networks",
    "",
    First(&field(LIST, |c, v| c.inet.preferred_networks = v)),
);
/// Named by the pattern check too.
pub(crate) const IGNORED_INTERFACES: Key = key(
    "spring.cloud.inetutils.ignored-interfaces",
    "",
    First(&field(LIST, |c, v| c.inet.ignored_interfaces = v)),
);

pub(crate) const KEYS: &[Key] = &[
    key(
        "spring.application.name",
        "",
        Bound(&part(OPTIONAL_TEXT, |p, v| p.application_name = v)),
    ),
    APPLICATION_INSTANCE_ID,
    VCAP_INSTANCE_ID,
    CLIENT_HOSTNAME,
    CLIENT_IP_ADDRESS,
    SERVER_PORT,
    key(
        "management.server.port",
        "",
        Bound(&part(OPTIONAL_PORT, |p, v| p.management_port = v)),
    ),
    key(
        "eureka.client.service-url.<zone>",
        "",
        Bound(&map(SERVICE_URLS, |c, zones| {
            c.service_url = service_urls(zones)
        })),
    ),
    REGION,
    key(
        "eureka.client.availability-zones.<region>",
        "",
        Bound(&map(LIST, |c, regions| {
            c.availability_zones = non_empty(regions)
        })),
    ),
    REMOTE_REGIONS,
    key(
        "eureka.client.prefer-same-zone-eureka",
        "true",
        Bound(&field(BOOL, |c, v| c.prefer_same_zone_eureka = v)),
    ),
    key(
        "eureka.client.register-with-eureka",
        "true",
        Bound(&field(BOOL, |c, v| c.register_with_eureka = v)),
    ),
    key(
        "eureka.client.fetch-registry",
        "true",
        Bound(&field(BOOL, |c, v| c.fetch_registry = v)),
    ),
    key(
        "heureka.push.enabled",
        "true",
        Bound(&field(BOOL, |c, v| c.push_enabled = v)),
    ),
    key(
        "eureka.client.registry-fetch-interval-seconds",
        "30",
        Bound(&field(SECONDS, |c, v| c.registry_fetch_interval = v)),
    ),
    key(
        "eureka.client.eureka-server-read-timeout-seconds",
        "8",
        Bound(&field(SECONDS, |c, v| c.request_timeout = v)),
    ),
    key(
        "eureka.client.eureka-server-connect-timeout-seconds",
        "5",
        Bound(&field(SECONDS, |c, v| c.connect_timeout = v)),
    ),
    key(
        "eureka.client.tls.enabled",
        "false",
        Bound(&part(BOOL, |p, v| p.tls.enabled = v)),
    ),
    key(
        "eureka.client.tls.key-store",
        "",
        Bound(&part(FILE, |p, v| p.tls.key_store = v)),
    ),
    key(
        "eureka.client.tls.key-store-type",
        "",
        Bound(&part(OPTIONAL_TEXT, |p, v| p.tls.key_store_type = v)),
    ),
    key(
        "eureka.client.tls.key-store-password",
        "",
        Bound(&part(SECRET, |p, v| p.tls.key_store_password = v)),
    ),
    key(
        "eureka.client.tls.key-alias",
        "",
        Bound(&part(OPTIONAL_TEXT, |p, v| p.tls.key_alias = v)),
    ),
    key(
        "eureka.client.tls.key-password",
        "",
        Bound(&part(SECRET, |p, v| p.tls.key_password = v)),
    ),
    key(
        "eureka.client.tls.trust-store",
        "",
        Bound(&part(FILE, |p, v| p.tls.trust_store = v)),
    ),
    key(
        "eureka.client.tls.trust-store-type",
        "",
        Bound(&part(OPTIONAL_TEXT, |p, v| p.tls.trust_store_type = v)),
    ),
    key(
        "eureka.client.tls.trust-store-password",
        "",
        Bound(&part(SECRET, |p, v| p.tls.trust_store_password = v)),
    ),
    key(
        "eureka.client.filter-only-up-instances",
        "true",
        Bound(&field(BOOL, |c, v| c.filter_only_up_instances = v)),
    ),
    key(
        "eureka.client.healthcheck.enabled",
        "false",
        Bound(&field(BOOL, |c, v| c.healthcheck_enabled = v)),
    ),
    key(
        "eureka.client.instance-info-replication-interval-seconds",
        "30",
        Bound(&field(SECONDS, |c, v| {
            c.instance_info_replication_interval = v
        })),
    ),
    key(
        "eureka.client.initial-instance-info-replication-interval-seconds",
        "40",
        Bound(&field(SECONDS, |c, v| {
            c.initial_instance_info_replication_interval = v
        })),
    ),
    key(
        "eureka.client.on-demand-update-status-change",
        "true",
        Bound(&field(BOOL, |c, v| c.on_demand_update_status_change = v)),
    ),
    key(
        "eureka.client.heartbeat-executor-exponential-back-off-bound",
        "10",
        Bound(&field(BOUND, |c, v| {
            c.heartbeat_executor_exponential_back_off_bound = v
        })),
    ),
    key(
        "eureka.client.cache-refresh-executor-exponential-back-off-bound",
        "10",
        Bound(&field(BOUND, |c, v| {
            c.cache_refresh_executor_exponential_back_off_bound = v
        })),
    ),
    key(
        "eureka.client.transport.sessioned-client-reconnect-interval-seconds",
        "1200",
        Bound(&field(SECONDS, |c, v| c.session_reconnect_interval = v)),
    ),
    key(
        "eureka.instance.appname",
        "",
        Bound(&part(OPTIONAL_TEXT, |p, v| p.appname = v)),
    ),
    key(
        "eureka.instance.instance-id",
        "",
        Bound(&part(OPTIONAL_TEXT, |p, v| p.instance_id = v)),
    ),
    key(
        "eureka.instance.hostname",
        "",
        Bound(&part(OPTIONAL_TEXT, |p, v| p.hostname = v)),
    ),
    key(
        "eureka.instance.ip-address",
        "",
        Bound(&part(OPTIONAL_TEXT, |p, v| p.ip_address = v)),
    ),
    key(
        "eureka.instance.prefer-ip-address",
        "false",
        Bound(&field(BOOL, |c, v| c.prefer_ip_address = v)),
    ),
    key(
        "eureka.instance.non-secure-port",
        "",
        Bound(&part(OPTIONAL_PORT, |p, v| p.non_secure_port = v)),
    ),
    key(
        "eureka.instance.non-secure-port-enabled",
        "true",
        Bound(&field(BOOL, |c, v| c.port_enabled = v)),
    ),
    key(
        "eureka.instance.secure-port",
        "",
        Bound(&part(OPTIONAL_PORT, |p, v| p.secure_port = v)),
    ),
    key(
        "eureka.instance.secure-port-enabled",
        "false",
        Bound(&field(BOOL, |c, v| c.secure_port_enabled = v)),
    ),
    key(
        "eureka.instance.lease-renewal-interval-in-seconds",
        "30",
        Bound(&field(SECONDS, |c, v| c.lease_renewal_interval = v)),
    ),
    key(
        "eureka.instance.lease-expiration-duration-in-seconds",
        "90",
        Bound(&field(SECONDS, |c, v| c.lease_duration = v)),
    ),
    key(
        "eureka.instance.virtual-host-name",
        "",
        Bound(&part(OPTIONAL_TEXT, |p, v| p.virtual_host_name = v)),
    ),
    key(
        "eureka.instance.secure-virtual-host-name",
        "",
        Bound(&part(OPTIONAL_TEXT, |p, v| p.secure_virtual_host_name = v)),
    ),
    key(
        "eureka.instance.metadata-map.<key>",
        "",
        Bound(&map_part(TEXT, |p, entries| p.metadata = entries)),
    ),
    key(
        "eureka.instance.home-page-url-path",
        "/",
        Bound(&field(TEXT, |c, v| c.urls.home_page_path = v)),
    ),
    key(
        "eureka.instance.home-page-url",
        "",
        Bound(&field(OPTIONAL_TEXT, |c, v| c.urls.home_page = v)),
    ),
    key(
        "eureka.instance.status-page-url-path",
        "/actuator/info",
        Bound(&field(TEXT, |c, v| c.urls.status_page_path = v)),
    ),
    key(
        "eureka.instance.status-page-url",
        "",
        Bound(&field(OPTIONAL_TEXT, |c, v| c.urls.status_page = v)),
    ),
    key(
        "eureka.instance.health-check-url-path",
        "/actuator/health",
        Bound(&field(TEXT, |c, v| c.urls.health_check_path = v)),
    ),
    key(
        "eureka.instance.health-check-url",
        "",
        Bound(&field(OPTIONAL_TEXT, |c, v| c.urls.health_check = v)),
    ),
    key(
        "eureka.instance.secure-health-check-url",
        "",
        Bound(&field(OPTIONAL_TEXT, |c, v| c.urls.secure_health_check = v)),
    ),
    key(
        "eureka.instance.initial-status",
        "UP",
        Bound(&field(STATUS, |c, v| c.initial_status = v)),
    ),
    key(
        "eureka.instance.instance-enabled-onit",
        "false",
        Bound(&field(BOOL, |c, v| c.instance_enabled_onit = v)),
    ),
    PREFERRED_NETWORKS,
    IGNORED_INTERFACES,
    key(
        "spring.cloud.inetutils.use-only-site-local-interfaces",
        "false",
        First(&field(BOOL, |c, v| {
            c.inet.use_only_site_local_interfaces = v
        })),
    ),
    key(
        "spring.cloud.inetutils.default-hostname",
        "localhost",
        First(&field(TEXT, |c, v| c.inet.default_hostname = v)),
    ),
    key(
        "spring.cloud.inetutils.default-ip-address",
        "127.0.0.1",
        First(&field(TEXT, |c, v| c.inet.default_ip_address = v)),
    ),
    key(
        "spring.cloud.inetutils.timeout-seconds",
        "1",
        First(&field(TIMEOUT_SECONDS, |c, v| c.inet.timeout = v)),
    ),
];

/// The client's key table with its lookups, worked out once.
pub(crate) fn table() -> &'static Table<Draft> {
    static TABLE: OnceLock<Table<Draft>> = OnceLock::new();
    TABLE.get_or_init(|| Table::new(KEYS))
}

/// The maps whose keys are kept as written (`defaultZone`, `management.port`): the table's
/// map entries, which the user guide must name.
#[cfg(test)]
pub(crate) fn map_prefixes() -> impl Iterator<Item = &'static str> {
    KEYS.iter()
        .filter(|key| key.reads() == heureka_config::names::Shape::Map)
        .map(Key::map_prefix)
}

/// The client's relaxed-name rules.
pub(crate) fn names() -> &'static Names {
    table().names()
}

/// The table entry for `name` in any relaxed spelling.
pub(crate) fn find(name: &str) -> Option<&'static Key> {
    table().find(name)
}
