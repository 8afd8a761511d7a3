//! What a client needs to know about itself and its servers: the settings of a Spring Cloud
//! Eureka client (`eureka.client.*`, `eureka.instance.*`, `spring.cloud.inetutils.*`), with
//! Spring Cloud's defaults.
//!
//! A [`ClientConfig`] is made in code ([`ClientConfig::new`], then fields set), from
//! Spring-style properties written in code ([`ClientConfig::from_properties`]), from one file
//! ([`ClientConfig::from_file`]) or the way a Spring Boot application reads its configuration
//! ([`ClientConfig::from_spring`], [`ClientConfig::from_process`]); `spring.rs` does the
//! binding and `address.rs` finds the instance's own address when none is configured.

use std::collections::BTreeMap;
use std::time::Duration;

use heureka_core::InstanceStatus;

use crate::address::InetSettings;
use crate::tls::ClientTls;

/// The zone Eureka assumes when none is configured, and the key of the fallback service URLs
/// (`eureka.client.service-url.defaultZone`).
pub const DEFAULT_ZONE: &str = "defaultZone";

/// The client's settings. [`ClientConfig::new`] fills the Java client's defaults (§8.8); the
/// `from_*` constructors read Spring's keys, named on each field.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// `eureka.client.service-url.<zone>`: each zone's service URLs, each ending in `/`.
    /// Default `{defaultZone: [http://localhost:8761/eureka/]}`.
    pub service_url: BTreeMap<String, Vec<String>>,
    /// `eureka.client.region`, default `us-east-1`.
    pub region: String,
    /// `eureka.client.availability-zones.<region>`: each region's zones, in order. A region
    /// with none has the one zone `defaultZone`.
    pub availability_zones: BTreeMap<String, Vec<String>>,
    /// `eureka.client.fetch-remote-regions-registry`: the remote regions whose instances every
    /// fetch asks the server for (`?regions=a,b` on `apps` and `apps/delta`), in order of
    /// preference; empty (the default) fetches the local region only. An instance's region is
    /// worked out from its zone ([`crate::InstanceRegionChecker`]); remote-region instances
    /// are offered only when the local region has no `UP` instance of the application. While
    /// it is set the push is not followed (it carries the local region only): the periodic
    /// fetch keeps the copy current.
    pub fetch_remote_regions_registry: Vec<String>,
    /// `eureka.client.prefer-same-zone-eureka`, default `true`: try the own zone's servers
    /// first.
    pub prefer_same_zone_eureka: bool,
    /// `eureka.client.register-with-eureka`, default `true`. When false the client never
    /// registers, renews, replicates, consults a health check or cancels: it only reads the
    /// registry (`set_status` and `update_metadata` then change only what `status()` says).
    pub register_with_eureka: bool,
    /// `eureka.client.fetch-registry`, default `true`. When false the registry is neither
    /// fetched at start nor refreshed: every lookup is empty and no refresh event comes.
    pub fetch_registry: bool,
    /// `heureka.push.enabled`, default `true`: with `fetch_registry`, follow the server's push
    /// (`GET push`, docs/push.md), so that a change reaches the copy as the server makes it
    /// rather than at the next fetch; the periodic fetch goes on as the backstop. A server
    /// without push (the Java server) answers 404, and the client then only fetches. Not a
    /// Spring Cloud key: Heureka's, the one its Spring add-on reads, so that one
    /// `application.yml` turns the push off for both.
    pub push_enabled: bool,
    /// `eureka.client.filter-only-up-instances`, default `true`: `EurekaClient::instances`
    /// returns only `UP` instances; when false, instances of every status, still shuffled
    /// (Java's `shouldFilterOnlyUpInstances`). A [`crate::Selector`] keeps to `UP` instances
    /// by default either way.
    pub filter_only_up_instances: bool,
    /// `eureka.client.healthcheck.enabled`, default `false`. When true and no health check is
    /// given in code, the client checks the instance's own health-check URL (2xx `UP`, else
    /// `DOWN`), as Spring's `EurekaHealthCheckHandler` lets actuator health decide the status.
    /// A check given to `ClientBuilder::health_check` is used whatever this says.
    pub healthcheck_enabled: bool,
    /// The application name (`eureka.instance.appname`, default `spring.application.name`,
    /// else `unknown`); upper-cased on the wire, as Eureka does.
    pub app_name: String,
    /// `eureka.instance.instance-id`, default Spring Cloud's
    /// `${spring.cloud.client.hostname}:${spring.application.name}:${spring.application.instance_id:${server.port}}`
    /// (parts that are unset are left out with their `:`).
    pub instance_id: String,
    /// The host name: `eureka.instance.hostname`, else the one found for the address chosen
    /// (`address.rs`). It is what is registered as `hostName` (and the host of the page URLs)
    /// unless `prefer_ip_address`; Spring binding then puts the IP address here too.
    pub host_name: String,
    /// `eureka.instance.ip-address`, else the first non-loopback address (`address.rs`).
    pub ip_addr: String,
    /// `eureka.instance.prefer-ip-address`, default `false`: register `ip_addr` as the
    /// instance's `hostName` and use it in the page URLs. Callers whose
    /// [`crate::DiscoveryHttpClient`] connects to `hostName` (the default [`crate::Address`])
    /// then reach this instance by IP.
    pub prefer_ip_address: bool,
    /// `eureka.instance.non-secure-port`, default `server.port`, else 8080.
    pub port: u16,
    /// `eureka.instance.non-secure-port-enabled`, default `true`.
    pub port_enabled: bool,
    /// `eureka.instance.secure-port`, default 443.
    pub secure_port: u16,
    /// `eureka.instance.secure-port-enabled`, default `false`.
    pub secure_port_enabled: bool,
    /// How often the lease is renewed (`eureka.instance.lease-renewal-interval-in-seconds`,
    /// 30 s).
    pub lease_renewal_interval: Duration,
    /// How long the server keeps the lease without a renewal
    /// (`eureka.instance.lease-expiration-duration-in-seconds`, 90 s).
    pub lease_duration: Duration,
    /// `eureka.instance.metadata-map.*`, plus `management.port` (the management port,
    /// `management.server.port`, else `server.port`), which Spring always adds.
    pub metadata: BTreeMap<String, String>,
    /// `eureka.instance.virtual-host-name`, default `spring.application.name` (else
    /// `unknown`), as written.
    pub vip_address: String,
    /// `eureka.instance.secure-virtual-host-name`, default `spring.application.name`.
    pub secure_vip_address: String,
    /// The instance's pages: paths and explicit URLs, made absolute in `instance.rs`.
    pub urls: InstanceUrls,
    /// `eureka.instance.initial-status`, default `UP`: the status the first registration
    /// carries, unless `ClientBuilder::status` gives another.
    pub initial_status: InstanceStatus,
    /// `eureka.instance.instance-enabled-onit`, default `false`. **Inert here**: bound so that
    /// the key is accepted, it changes nothing. In Spring it decides only the status before the
    /// application context has started (`STARTING` when false), which Spring replaces with
    /// `initial-status` when it registers; a Rust service starts its client when it is ready.
    /// To register `STARTING` first, set `initial_status` to `STARTING` and call
    /// `set_status(UP)` when ready.
    pub instance_enabled_onit: bool,
    /// `spring.cloud.inetutils.*`: how the own address was chosen.
    pub inet: InetSettings,
    /// How often the local registry copy is refreshed
    /// (`eureka.client.registry-fetch-interval-seconds`, 30 s).
    pub registry_fetch_interval: Duration,
    /// How long a service URL that failed is skipped before it is tried again (30 s). Not a
    /// Spring key (Java keeps a URL quarantined until two thirds of them are); set in code.
    pub quarantine: Duration,
    /// Timeout of one HTTP request (`eureka.client.eureka-server-read-timeout-seconds`, 8 s).
    pub request_timeout: Duration,
    /// How often the health check is consulted and a changed instance re-registered
    /// (`instance-info-replication-interval-seconds`, 30 s).
    pub instance_info_replication_interval: Duration,
    /// When that periodic check first runs
    /// (`initial-instance-info-replication-interval-seconds`, 40 s).
    pub initial_instance_info_replication_interval: Duration,
    /// Whether a status change is sent at once, within the on-demand rate limit, rather than at
    /// the next periodic check (`on-demand-update-status-change`, true).
    pub on_demand_update_status_change: bool,
    /// How far a heartbeat that keeps timing out is backed off, as a multiple of its interval
    /// (`heartbeat-executor-exponential-back-off-bound`, 10).
    pub heartbeat_executor_exponential_back_off_bound: u32,
    /// The same for the registry refresh (`cache-refresh-executor-exponential-back-off-bound`,
    /// 10).
    pub cache_refresh_executor_exponential_back_off_bound: u32,
    /// How long the client keeps to the service URL it failed over to before it starts again
    /// from the first, preferred one; each session lasts this ± 50 %
    /// (`eureka.client.transport.sessioned-client-reconnect-interval-seconds`, 20 min).
    pub session_reconnect_interval: Duration,
    /// Timeout of a connection attempt
    /// (`eureka.client.eureka-server-connect-timeout-seconds`, 5 s).
    pub connect_timeout: Duration,
    /// `eureka.client.tls.*`, read only when `eureka.client.tls.enabled` (as Spring Cloud
    /// does): the trust `https://` service URLs are verified against and the certificate
    /// presented when a server asks. `None`, the default, trusts the public roots.
    pub tls: Option<ClientTls>,
}

/// The instance's home, status and health pages as Spring configures them: a path on the
/// instance's own host and port, unless an explicit URL is given (which may contain
/// `${eureka.hostname}`, replaced by the host name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceUrls {
    /// `eureka.instance.home-page-url-path`, default `/`.
    pub home_page_path: String,
    /// `eureka.instance.home-page-url`, default none.
    pub home_page: Option<String>,
    /// `eureka.instance.status-page-url-path`, default `/actuator/info`.
    pub status_page_path: String,
    /// `eureka.instance.status-page-url`, default none.
    pub status_page: Option<String>,
    /// `eureka.instance.health-check-url-path`, default `/actuator/health`.
    pub health_check_path: String,
    /// `eureka.instance.health-check-url`, default none.
    pub health_check: Option<String>,
    /// `eureka.instance.secure-health-check-url`, default none.
    pub secure_health_check: Option<String>,
    /// The port the status and health pages are served on: `management.server.port`, else
    /// the instance's port. `None` means the instance's port.
    pub management_port: Option<u16>,
}

impl Default for InstanceUrls {
    fn default() -> Self {
        InstanceUrls {
            home_page_path: "/".to_owned(),
            home_page: None,
            status_page_path: "/actuator/info".to_owned(),
            status_page: None,
            health_check_path: "/actuator/health".to_owned(),
            health_check: None,
            secure_health_check: None,
            management_port: None,
        }
    }
}

/// One zone's service URLs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneUrls {
    pub zone: String,
    pub urls: Vec<String>,
}

impl ClientConfig {
    /// A configuration with the given identity and every other setting at Spring Cloud's
    /// default; `service_urls` become the `defaultZone` URLs.
    pub fn new(
        service_urls: Vec<String>,
        app_name: &str,
        instance_id: &str,
        host_name: &str,
        ip_addr: &str,
        port: u16,
    ) -> ClientConfig {
        ClientConfig {
            service_url: BTreeMap::from([(DEFAULT_ZONE.to_owned(), service_urls)]),
            region: "us-east-1".to_owned(),
            availability_zones: BTreeMap::new(),
            fetch_remote_regions_registry: Vec::new(),
            prefer_same_zone_eureka: true,
            register_with_eureka: true,
            fetch_registry: true,
            push_enabled: true,
            filter_only_up_instances: true,
            healthcheck_enabled: false,
            app_name: app_name.to_owned(),
            instance_id: instance_id.to_owned(),
            host_name: host_name.to_owned(),
            ip_addr: ip_addr.to_owned(),
            prefer_ip_address: false,
            port,
            port_enabled: true,
            secure_port: 443,
            secure_port_enabled: false,
            lease_renewal_interval: Duration::from_secs(30),
            lease_duration: Duration::from_secs(90),
            metadata: BTreeMap::from([("management.port".to_owned(), port.to_string())]),
            vip_address: app_name.to_lowercase(),
            secure_vip_address: app_name.to_lowercase(),
            urls: InstanceUrls::default(),
            initial_status: InstanceStatus::Up,
            instance_enabled_onit: false,
            inet: InetSettings::default(),
            registry_fetch_interval: Duration::from_secs(30),
            quarantine: Duration::from_secs(30),
            request_timeout: Duration::from_secs(8),
            instance_info_replication_interval: Duration::from_secs(30),
            initial_instance_info_replication_interval: Duration::from_secs(40),
            on_demand_update_status_change: true,
            heartbeat_executor_exponential_back_off_bound: 10,
            cache_refresh_executor_exponential_back_off_bound: 10,
            session_reconnect_interval: Duration::from_secs(20 * 60),
            connect_timeout: Duration::from_secs(5),
            tls: None,
        }
    }

    /// The instance's own zone: `eureka.instance.metadata-map.zone`, else the first
    /// availability zone of the region, else `defaultZone`. (The Java client ignores the
    /// metadata zone here and takes the first availability zone; the metadata zone is the one
    /// Spring Cloud's load balancer prefers, and naming it is how Spring users say where an
    /// instance is.)
    pub fn own_zone(&self) -> String {
        if let Some(zone) = self
            .metadata
            .get("zone")
            .filter(|zone| !zone.trim().is_empty())
        {
            return zone.trim().to_owned();
        }
        self.zones()
            .into_iter()
            .next()
            .unwrap_or_else(|| DEFAULT_ZONE.to_owned())
    }

    /// The region's zones (`eureka.client.availability-zones.<region>`), or `[defaultZone]`.
    pub fn zones(&self) -> Vec<String> {
        match self.availability_zones.get(&self.region) {
            Some(zones) if !zones.is_empty() => zones.clone(),
            _ => vec![DEFAULT_ZONE.to_owned()],
        }
    }

    /// The service URLs grouped by zone, in the order they are tried, as the Java client's
    /// `EndpointUtils.getServiceUrlsFromConfig` orders them: the region's zones in cyclic
    /// order starting at the own zone (with `prefer_same_zone_eureka`) or at the first other
    /// zone (without), or at the first zone if none qualifies. A zone without URLs of its
    /// own uses the `defaultZone` URLs; a URL already listed for an earlier zone is not
    /// repeated, and zones left with none are dropped.
    pub fn zone_service_urls(&self) -> Vec<ZoneUrls> {
        let zones = self.zones();
        let own = self.own_zone();
        let start = zones
            .iter()
            .position(|zone| zone.eq_ignore_ascii_case(&own) == self.prefer_same_zone_eureka)
            .unwrap_or(0);
        let mut seen = std::collections::BTreeSet::new();
        let mut grouped = Vec::new();
        for offset in 0..zones.len() {
            let zone = &zones[(start + offset) % zones.len()];
            let urls: Vec<String> = self
                .service_url
                .get(zone)
                .filter(|urls| !urls.is_empty())
                .or_else(|| self.service_url.get(DEFAULT_ZONE))
                .into_iter()
                .flatten()
                .filter(|url| seen.insert((*url).clone()))
                .cloned()
                .collect();
            if !urls.is_empty() {
                grouped.push(ZoneUrls {
                    zone: zone.clone(),
                    urls,
                });
            }
        }
        grouped
    }

    /// The service URLs in the order they are tried: [`ClientConfig::zone_service_urls`]
    /// flattened.
    pub fn ordered_service_urls(&self) -> Vec<String> {
        self.zone_service_urls()
            .into_iter()
            .flat_map(|zone| zone.urls)
            .collect()
    }
}

#[cfg(test)]
mod tests;
