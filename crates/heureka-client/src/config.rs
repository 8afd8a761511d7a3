//! What a client needs to know about itself and its servers.

use std::time::Duration;

/// The client's settings; [`ClientConfig::new`] fills the Java client's defaults (§8.8).
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Eureka service URLs in the order they are tried, e.g. `http://host:8761/eureka/`.
    pub service_urls: Vec<String>,
    /// The application name; upper-cased on the wire, as Eureka does.
    pub app_name: String,
    pub instance_id: String,
    pub host_name: String,
    pub ip_addr: String,
    pub port: u16,
    /// How often the lease is renewed (`lease-renewal-interval-in-seconds`, 30 s).
    pub lease_renewal_interval: Duration,
    /// How long the server keeps the lease without a renewal (`lease-expiration-duration-in-seconds`, 90 s).
    pub lease_duration: Duration,
    /// How often the local registry copy is refreshed (`registry-fetch-interval-seconds`, 30 s).
    pub registry_fetch_interval: Duration,
    /// How long a service URL that failed is skipped before it is tried again.
    pub quarantine: Duration,
    /// Timeout of one HTTP request (the Java client's read timeout, 8 s).
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
}

impl ClientConfig {
    pub fn new(
        service_urls: Vec<String>,
        app_name: &str,
        instance_id: &str,
        host_name: &str,
        ip_addr: &str,
        port: u16,
    ) -> ClientConfig {
        ClientConfig {
            service_urls,
            app_name: app_name.to_owned(),
            instance_id: instance_id.to_owned(),
            host_name: host_name.to_owned(),
            ip_addr: ip_addr.to_owned(),
            port,
            lease_renewal_interval: Duration::from_secs(30),
            lease_duration: Duration::from_secs(90),
            registry_fetch_interval: Duration::from_secs(30),
            quarantine: Duration::from_secs(30),
            request_timeout: Duration::from_secs(8),
            instance_info_replication_interval: Duration::from_secs(30),
            initial_instance_info_replication_interval: Duration::from_secs(40),
            on_demand_update_status_change: true,
            heartbeat_executor_exponential_back_off_bound: 10,
            cache_refresh_executor_exponential_back_off_bound: 10,
            session_reconnect_interval: Duration::from_secs(20 * 60),
        }
    }
}
