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
        }
    }
}
