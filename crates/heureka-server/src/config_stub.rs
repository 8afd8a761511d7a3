//! TEMPORARY stub of the config API until the real module lands.
#![allow(dead_code, missing_docs)]
use std::net::IpAddr;
#[derive(Debug, Clone)]
pub struct Config {
    pub server: ServerConfig,
    pub application_name: String,
    pub security: Option<BasicAuth>,
    pub eureka_server: EurekaServerConfig,
    pub registry: RegistryConfig,
    pub heureka: HeurekaConfig,
    pub logging_levels: Vec<(String, String)>,
    pub sources: Vec<String>,
}
#[derive(Debug, Clone)]
pub struct ServerConfig { pub port: u16, pub address: IpAddr }
#[derive(Debug, Clone)]
pub struct BasicAuth { pub name: String, pub password: String }
#[derive(Debug, Clone)]
pub struct RegistryConfig { pub expected_number_of_clients_sending_renews: u32, pub default_open_for_traffic_count: u32 }
#[derive(Debug, Clone)]
pub struct EurekaServerConfig {
    pub enable_self_preservation: bool,
    pub renewal_percent_threshold: f64,
    pub renewal_threshold_update_interval_ms: u64,
    pub expected_client_renewal_interval_seconds: u32,
    pub eviction_interval_timer_in_ms: u64,
    pub response_cache_update_interval_ms: u64,
    pub response_cache_auto_expiration_in_seconds: u64,
    pub use_read_only_response_cache: bool,
    pub retention_time_in_ms_in_delta_queue: u64,
    pub delta_retention_timer_interval_in_ms: u64,
    pub disable_delta: bool,
    pub wait_time_in_ms_when_sync_empty: u64,
    pub enable_replicated_request_compression: bool,
    pub my_url: Option<String>,
}
#[derive(Debug, Clone)]
pub struct HeurekaConfig { pub legacy_lease_expiry: bool, pub max_request_body_bytes: usize, pub base_path: String }
pub enum Loaded { Run(Config), Help(String), Version(String) }
#[derive(Debug)]
pub struct ConfigError(pub String);
impl std::fmt::Display for ConfigError { fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str(&self.0) } }
impl std::error::Error for ConfigError {}
pub fn load(args: &[String], _env: &dyn Fn(&str) -> Option<String>, _cwd: &std::path::Path) -> Result<Loaded, ConfigError> {
    let mut c = Config::default_for_tests();
    for a in args {
        if let Some(p) = a.strip_prefix("--server.port=") { c.server.port = p.parse().map_err(|_| ConfigError("bad port".into()))?; }
        if let Some(p) = a.strip_prefix("--eureka.server.enable-self-preservation=") { c.eureka_server.enable_self_preservation = p == "true"; }
        if let Some(p) = a.strip_prefix("--eureka.server.eviction-interval-timer-in-ms=") { c.eureka_server.eviction_interval_timer_in_ms = p.parse().unwrap(); }
    }
    Ok(Loaded::Run(c))
}
impl Config {
    pub fn default_for_tests() -> Config {
        Config {
            server: ServerConfig { port: 8761, address: "0.0.0.0".parse().unwrap() },
            application_name: "heureka".into(),
            security: None,
            eureka_server: EurekaServerConfig { enable_self_preservation: true, renewal_percent_threshold: 0.85, renewal_threshold_update_interval_ms: 900_000, expected_client_renewal_interval_seconds: 30, eviction_interval_timer_in_ms: 60_000, response_cache_update_interval_ms: 30_000, response_cache_auto_expiration_in_seconds: 180, use_read_only_response_cache: true, retention_time_in_ms_in_delta_queue: 180_000, delta_retention_timer_interval_in_ms: 30_000, disable_delta: false, wait_time_in_ms_when_sync_empty: 300_000, enable_replicated_request_compression: false, my_url: None },
            registry: RegistryConfig { expected_number_of_clients_sending_renews: 1, default_open_for_traffic_count: 1 },
            heureka: HeurekaConfig { legacy_lease_expiry: false, max_request_body_bytes: 1 << 20, base_path: "/eureka".into() },
            logging_levels: vec![],
            sources: vec![],
        }
    }
}
