//! Stage two of loading: merged properties to the typed, validated [`Config`], by one walk
//! over the key table. Each entry's binding reads its key (placeholders resolved, or the
//! entry's default) and writes it where it goes; a bad value is reported with its key and
//! source. Rules over several keys run last (`rules.rs`).

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use heureka_config::table::Binding;
use heureka_config::{Binder, ConfigError, Properties, Resolver};

use super::binding::Draft;
use super::model::{
    AuditConfig, Config, ConnectionConfig, ConsumersConfig, DashboardConfig, EurekaClientConfig,
    EurekaInstanceConfig, EurekaServerConfig, EventStreamConfig, Exposure, HealthChecksConfig,
    HeurekaConfig, LimitsConfig, ManagementConfig, PersistenceConfig, RateLimiterConfig,
    RegistryConfig, ReplicationConfig, ServerConfig, ShowDetails,
};
use super::names::{self, table};
use super::rules::Pending;

/// Stage two: typed, validated values, in key-table order.
pub(crate) fn bind(
    properties: &Properties,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let fallback = |key: &str| names::placeholder_fallback(key, env);
    // Bindings ask only for table entries' names, so every lookup finds its entry.
    let defaults = |key: &str| table().default_of(key).to_owned();
    let binder = Binder::new(
        Resolver {
            properties,
            env,
            fallback: &fallback,
        },
        &defaults,
    );
    let mut draft = Draft {
        config: unbound(),
        pending: Pending::new(),
    };
    table().walk(&binder, &mut draft, |binding| match binding {
        Binding::Bound(binding) => Some(binding),
        _ => None,
    })?;
    let Draft {
        mut config,
        pending,
    } = draft;
    pending.finish(&mut config)?;
    Ok(config)
}

/// The configuration before binding. Every field is overwritten by its key's binding (or a
/// rule), except the two that bindings combine into: `access_log` starts off because either
/// of its keys turns it on, and `sources` is filled in by `load`.
fn unbound() -> Config {
    Config {
        server: ServerConfig {
            ssl: None,
            port: 0,
            address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        },
        connections: ConnectionConfig {
            connection_timeout: Duration::ZERO,
            keep_alive_timeout: Duration::ZERO,
            request_body_timeout: Duration::ZERO,
            max_connections: 0,
            max_header_bytes: 0,
            shutdown_grace: Duration::ZERO,
        },
        application_name: String::new(),
        security: None,
        eureka_server: unbound_eureka_server(),
        registry: RegistryConfig {
            expected_number_of_clients_sending_renews: 0,
            default_open_for_traffic_count: 0,
        },
        client: EurekaClientConfig {
            register_with_eureka: false,
            fetch_registry: false,
            eureka_server_read_timeout_seconds: 0,
            service_url: Default::default(),
            region: String::new(),
            availability_zones: Default::default(),
            tls: None,
        },
        instance: EurekaInstanceConfig {
            hostname: None,
            prefer_ip_address: false,
            ip_address: None,
            instance_id: None,
            lease_renewal_interval_in_seconds: 0,
            lease_expiration_duration_in_seconds: 0,
        },
        heureka: HeurekaConfig {
            legacy_lease_expiry: false,
            refuse_takeovers: false,
            max_request_body_bytes: 0,
            base_path: String::new(),
            replication: ReplicationConfig {
                anti_entropy_interval_ms: 0,
                batch_delay_ms: 0,
                batch_size: 0,
                tombstone_retention_ms: 0,
                peers_only: false,
                allowed_addresses: Vec::new(),
                peer_user: None,
            },
            webhooks: Vec::new(),
            limits: LimitsConfig {
                max_name_length: 0,
                max_metadata_entries: 0,
                max_metadata_bytes: 0,
                max_lease_duration: Duration::ZERO,
                max_instances: 0,
            },
            events: EventStreamConfig {
                max_streams: 0,
                max_streams_per_client: 0,
                keep_alive_interval: Duration::ZERO,
                send_timeout: Duration::ZERO,
                max_age: Duration::ZERO,
            },
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            users: Vec::new(),
            audit: AuditConfig {
                enabled: false,
                retained: 0,
            },
            health_checks: HealthChecksConfig {
                enabled: false,
                interval: Duration::ZERO,
                timeout: Duration::ZERO,
                failures_before_down: 0,
                successes_before_up: 0,
                jitter: Duration::ZERO,
                concurrency: 0,
                evict_after: None,
                self_suspicion_percent: 0,
                apps: Vec::new(),
                allowed_networks: Vec::new(),
            },
            consumers: ConsumersConfig {
                max: 0,
                retention: Duration::ZERO,
                active_within: Duration::ZERO,
                behind_after: Duration::ZERO,
            },
            persistence: PersistenceConfig {
                dir: None,
                flush_interval: Duration::ZERO,
            },
        },
        dashboard: DashboardConfig {
            enabled: false,
            path: String::new(),
            environment: String::new(),
            datacenter: String::new(),
        },
        management: ManagementConfig {
            base_path: String::new(),
            exposed: Exposure {
                health: false,
                info: false,
                prometheus: false,
            },
            show_details: ShowDetails::Never,
            access_log: false,
        },
        logging_levels: Vec::new(),
        sources: Vec::new(),
    }
}

fn unbound_eureka_server() -> EurekaServerConfig {
    EurekaServerConfig {
        enable_self_preservation: false,
        renewal_percent_threshold: 0.0,
        renewal_threshold_update_interval_ms: 0,
        expected_client_renewal_interval_seconds: 0,
        eviction_interval_timer_in_ms: 0,
        response_cache_update_interval_ms: 0,
        response_cache_auto_expiration_in_seconds: 0,
        use_read_only_response_cache: false,
        retention_time_in_ms_in_delta_queue: 0,
        delta_retention_timer_interval_in_ms: 0,
        disable_delta: false,
        wait_time_in_ms_when_sync_empty: 0,
        enable_replicated_request_compression: false,
        my_url: None,
        registry_sync_retries: 0,
        registry_sync_retry_wait_ms: 0,
        peer_eureka_nodes_update_interval_ms: 0,
        peer_node_connect_timeout_ms: 0,
        peer_node_read_timeout_ms: 0,
        max_elements_in_peer_replication_pool: 0,
        max_time_for_replication: 0,
        sync_when_timestamp_differs: false,
        rate_limiter: RateLimiterConfig {
            enabled: false,
            throttle_standard_clients: false,
            privileged_clients: Vec::new(),
            burst_size: 0,
            registry_fetch_average_rate: 0,
            full_fetch_average_rate: 0,
        },
    }
}
