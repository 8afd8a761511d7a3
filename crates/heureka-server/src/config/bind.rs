//! Stage two of loading: merged properties to the typed, validated [`Config`]. Each value is
//! read with placeholders resolved, or the key table's default, and a bad one is reported
//! with its key and source.

use std::collections::BTreeMap;

use heureka_config::{Binder, Properties, Resolver};

use super::{keys, names, values};
use super::{
    BasicAuth, Config, ConfigError, ConnectionConfig, DashboardConfig, EurekaClientConfig,
    EurekaInstanceConfig, EurekaServerConfig, Exposure, HeurekaConfig, ManagementConfig,
    RegistryConfig, ReplicationConfig, ServerConfig, ShowDetails, WebhookConfig,
};

/// Stage two: typed, validated values.
pub(crate) fn bind(
    properties: &Properties,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let fallback = |key: &str| names::placeholder_fallback(key, env);
    let defaults = |key: &str| {
        debug_assert!(
            names::find(key).is_some(),
            "{key} is missing from keys::KEYS"
        );
        names::default_of(key).to_owned()
    };
    let binder = Binder::new(
        Resolver {
            properties,
            env,
            fallback: &fallback,
        },
        &defaults,
    );
    let boolean = |key: &'static str| binder.parse(key, "true or false", values::parse_bool);
    let number_u64 =
        |key: &'static str| binder.parse(key, "a whole number", values::parse_number::<u64>);
    let number_u32 =
        |key: &'static str| binder.parse(key, "a whole number", values::parse_number::<u32>);
    Ok(Config {
        server: ServerConfig {
            port: binder.parse(
                "server.port",
                "a port from 0 to 65535",
                values::parse_number,
            )?,
            address: binder.parse("server.address", "an IP address", values::parse_ip)?,
        },
        connections: bind_connections(&binder)?,
        application_name: binder.setting("spring.application.name")?.value,
        security: bind_security(&binder)?,
        eureka_server: EurekaServerConfig {
            enable_self_preservation: boolean("eureka.server.enable-self-preservation")?,
            renewal_percent_threshold: binder.parse(
                "eureka.server.renewal-percent-threshold",
                "a number greater than 0 and at most 1",
                |text| values::parse_number::<f64>(text).filter(|p| *p > 0.0 && *p <= 1.0),
            )?,
            renewal_threshold_update_interval_ms: number_u64(
                "eureka.server.renewal-threshold-update-interval-ms",
            )?,
            expected_client_renewal_interval_seconds: binder.parse(
                "eureka.server.expected-client-renewal-interval-seconds",
                "a whole number of seconds",
                |text| match values::parse_number::<i64>(text)? {
                    seconds if seconds <= 0 => Some(30),
                    seconds => u32::try_from(seconds).ok(),
                },
            )?,
            eviction_interval_timer_in_ms: number_u64(
                "eureka.server.eviction-interval-timer-in-ms",
            )?,
            response_cache_update_interval_ms: number_u64(
                "eureka.server.response-cache-update-interval-ms",
            )?,
            response_cache_auto_expiration_in_seconds: number_u64(
                "eureka.server.response-cache-auto-expiration-in-seconds",
            )?,
            use_read_only_response_cache: boolean("eureka.server.use-read-only-response-cache")?,
            retention_time_in_ms_in_delta_queue: number_u64(
                "eureka.server.retention-time-in-m-s-in-delta-queue",
            )?,
            delta_retention_timer_interval_in_ms: number_u64(
                "eureka.server.delta-retention-timer-interval-in-ms",
            )?,
            disable_delta: boolean("eureka.server.disable-delta")?,
            wait_time_in_ms_when_sync_empty: number_u64(
                "eureka.server.wait-time-in-ms-when-sync-empty",
            )?,
            enable_replicated_request_compression: boolean(
                "eureka.server.enable-replicated-request-compression",
            )?,
            my_url: binder.optional("eureka.server.my-url", "a URL", |t| {
                Some(t.trim().to_owned())
            })?,
            registry_sync_retries: number_u32("eureka.server.registry-sync-retries")?,
            registry_sync_retry_wait_ms: number_u64("eureka.server.registry-sync-retry-wait-ms")?,
            peer_eureka_nodes_update_interval_ms: number_u64(
                "eureka.server.peer-eureka-nodes-update-interval-ms",
            )?,
            peer_node_connect_timeout_ms: number_u64("eureka.server.peer-node-connect-timeout-ms")?,
            peer_node_read_timeout_ms: number_u64("eureka.server.peer-node-read-timeout-ms")?,
            max_elements_in_peer_replication_pool: number_u32(
                "eureka.server.max-elements-in-peer-replication-pool",
            )? as usize,
            max_time_for_replication: number_u64("eureka.server.max-time-for-replication")?,
            sync_when_timestamp_differs: boolean("eureka.server.sync-when-timestamp-differs")?,
        },
        registry: RegistryConfig {
            expected_number_of_clients_sending_renews: number_u32(
                "eureka.instance.registry.expected-number-of-clients-sending-renews",
            )?,
            default_open_for_traffic_count: number_u32(
                "eureka.instance.registry.default-open-for-traffic-count",
            )?,
        },
        client: EurekaClientConfig {
            register_with_eureka: boolean("eureka.client.register-with-eureka")?,
            fetch_registry: boolean("eureka.client.fetch-registry")?,
            eureka_server_read_timeout_seconds: number_u64(
                "eureka.client.eureka-server-read-timeout-seconds",
            )?,
            service_url: bind_service_urls(&binder)?,
            region: binder.parse("eureka.client.region", "a region name", |t| {
                Some(t.trim().to_owned()).filter(|t| !t.is_empty())
            })?,
            availability_zones: bind_availability_zones(&binder)?,
        },
        instance: EurekaInstanceConfig {
            hostname: binder.optional("eureka.instance.hostname", "a host name", |t| {
                Some(t.trim().to_owned())
            })?,
            prefer_ip_address: boolean("eureka.instance.prefer-ip-address")?,
            ip_address: binder.optional(
                "eureka.instance.ip-address",
                "an IP address",
                values::parse_ip,
            )?,
            instance_id: binder.optional("eureka.instance.instance-id", "an id", |t| {
                Some(t.trim().to_owned())
            })?,
            lease_renewal_interval_in_seconds: number_u32(
                "eureka.instance.lease-renewal-interval-in-seconds",
            )?
            .max(1),
            lease_expiration_duration_in_seconds: number_u32(
                "eureka.instance.lease-expiration-duration-in-seconds",
            )?
            .max(1),
        },
        heureka: HeurekaConfig {
            legacy_lease_expiry: boolean("heureka.legacy-lease-expiry")?,
            max_request_body_bytes: binder.parse(
                "heureka.max-request-body-size",
                "a size such as 1048576, 512KB or 2MB",
                values::parse_data_size,
            )?,
            base_path: binder.parse(
                "heureka.base-path",
                "a path starting with '/' and not ending with '/', such as /eureka",
                values::parse_base_path,
            )?,
            replication: ReplicationConfig {
                anti_entropy_interval_ms: number_u64(
                    "heureka.replication.anti-entropy-interval-ms",
                )?,
                batch_delay_ms: number_u64("heureka.replication.batch-delay-ms")?,
                batch_size: (number_u32("heureka.replication.batch-size")?).max(1) as usize,
            },
            webhooks: bind_webhooks(&binder)?,
        },
        dashboard: DashboardConfig {
            enabled: boolean("eureka.dashboard.enabled")?,
            path: binder.parse(
                "eureka.dashboard.path",
                "a path starting with '/', such as / or /dashboard",
                values::parse_dashboard_path,
            )?,
            environment: binder.setting("eureka.environment")?.value,
            datacenter: binder.setting("eureka.datacenter")?.value,
        },
        management: bind_management(&binder)?,
        logging_levels: bind_logging_levels(&binder)?,
        sources: Vec::new(),
    })
}

fn bind_connections(binder: &Binder<'_>) -> Result<ConnectionConfig, ConfigError> {
    let duration = |key: &'static str| {
        binder.parse(
            key,
            "a positive duration such as 20s, 500ms or PT1M",
            values::parse_duration,
        )
    };
    // Spring Boot 3 renamed server.max-http-header-size; the old name still works when the new
    // one is not set.
    let header_size_key = match binder
        .properties()
        .get("server.max-http-request-header-size")
    {
        None if binder
            .properties()
            .get("server.max-http-header-size")
            .is_some() =>
        {
            "server.max-http-header-size"
        }
        _ => "server.max-http-request-header-size",
    };
    Ok(ConnectionConfig {
        connection_timeout: duration("server.tomcat.connection-timeout")?,
        keep_alive_timeout: duration("server.tomcat.keep-alive-timeout")?,
        request_body_timeout: duration("heureka.request-body-timeout")?,
        max_connections: binder.parse(
            "server.tomcat.max-connections",
            "a whole number greater than 0",
            |text| values::parse_number::<usize>(text).filter(|count| *count > 0),
        )?,
        max_header_bytes: binder.parse(
            header_size_key,
            "a size such as 8192, 8KB or 1MB",
            values::parse_data_size,
        )?,
        shutdown_grace: duration("spring.lifecycle.timeout-per-shutdown-phase")?,
    })
}

fn bind_security(binder: &Binder<'_>) -> Result<Option<BasicAuth>, ConfigError> {
    let name = binder.setting("spring.security.user.name")?;
    let password = binder.setting("spring.security.user.password")?;
    match (name.value.is_empty(), password.value.is_empty()) {
        (true, true) => Ok(None),
        (false, false) => Ok(Some(BasicAuth {
            name: name.value,
            password: password.value,
        })),
        (false, true) => Err(ConfigError::new(format!(
            "spring.security.user.name is set ({}) but spring.security.user.password is not: \
             basic authentication needs both",
            name.origin
        ))),
        (true, false) => Err(ConfigError::new(format!(
            "spring.security.user.password is set ({}) but spring.security.user.name is not: \
             basic authentication needs both (Spring Boot's implicit name 'user' must be \
             written out)",
            password.origin
        ))),
    }
}

fn bind_service_urls(binder: &Binder<'_>) -> Result<BTreeMap<String, Vec<String>>, ConfigError> {
    let mut zones = BTreeMap::new();
    for (zone, property) in binder.properties().map_entries("eureka.client.service-url") {
        let key = format!("eureka.client.service-url.{zone}");
        let setting = binder.resolve(&key, &property.value, &property.origin)?;
        let mut urls = Vec::new();
        for url in setting
            .value
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
        {
            let url = values::parse_service_url(url).ok_or_else(|| {
                ConfigError::invalid(&key, url, &setting.origin, "an http:// or https:// URL")
            })?;
            urls.push(url);
        }
        if !urls.is_empty() {
            zones.insert(zone.to_owned(), urls);
        }
    }
    if zones.is_empty() {
        let (zone, url) = keys::DEFAULT_ZONE;
        zones.insert(zone.to_owned(), vec![url.to_owned()]);
    }
    Ok(zones)
}

fn bind_availability_zones(
    binder: &Binder<'_>,
) -> Result<BTreeMap<String, Vec<String>>, ConfigError> {
    let mut regions = BTreeMap::new();
    for (region, property) in binder
        .properties()
        .map_entries("eureka.client.availability-zones")
    {
        let key = format!("eureka.client.availability-zones.{region}");
        let setting = binder.resolve(&key, &property.value, &property.origin)?;
        let zones: Vec<String> = setting
            .value
            .split(',')
            .map(str::trim)
            .filter(|zone| !zone.is_empty())
            .map(str::to_owned)
            .collect();
        if !zones.is_empty() {
            regions.insert(region.to_owned(), zones);
        }
    }
    Ok(regions)
}

/// `heureka.webhooks[<n>].url` and `.events`, in index order; an entry needs its URL.
fn bind_webhooks(binder: &Binder<'_>) -> Result<Vec<WebhookConfig>, ConfigError> {
    let mut entries: BTreeMap<u32, (Option<String>, Vec<String>)> = BTreeMap::new();
    for (name, property) in binder.properties().iter() {
        let Some((index, field)) = name
            .strip_prefix("heureka.webhooks[")
            .and_then(|rest| rest.split_once("]."))
        else {
            continue;
        };
        let Ok(index) = index.parse::<u32>() else {
            continue;
        };
        let key = format!("heureka.webhooks[{index}].{field}");
        let setting = binder.resolve(&key, &property.value, &property.origin)?;
        let entry = entries.entry(index).or_default();
        match field {
            "url" => {
                let url = values::parse_http_url(&setting.value).ok_or_else(|| {
                    ConfigError::invalid(
                        &key,
                        &setting.value,
                        &setting.origin,
                        "an http:// or https:// URL",
                    )
                })?;
                entry.0 = Some(url);
            }
            _ => {
                let mut events = Vec::new();
                for event in setting
                    .value
                    .split(',')
                    .map(str::trim)
                    .filter(|e| !e.is_empty())
                {
                    if !heureka_wire::InstanceEventKind::ALL_EVENT_NAMES.contains(&event) {
                        return Err(ConfigError::invalid(
                            &key,
                            event,
                            &setting.origin,
                            "event types from docs/events.md, such as evicted,self-preservation-entered",
                        ));
                    }
                    events.push(event.to_owned());
                }
                entry.1 = events;
            }
        }
    }
    entries
        .into_iter()
        .map(|(index, (url, events))| match url {
            Some(url) => Ok(WebhookConfig { url, events }),
            None => Err(ConfigError::new(format!(
                "heureka.webhooks[{index}] has no url: each webhook needs heureka.webhooks[{index}].url"
            ))),
        })
        .collect()
}

fn bind_management(binder: &Binder<'_>) -> Result<ManagementConfig, ConfigError> {
    let boolean = |key: &'static str| binder.parse(key, "true or false", values::parse_bool);
    let names = |key: &'static str| -> Result<Vec<String>, ConfigError> {
        let setting = binder.setting(key)?;
        Ok(setting
            .value
            .split(',')
            .map(|name| name.trim().to_ascii_lowercase())
            .filter(|name| !name.is_empty())
            .collect())
    };
    let include = names("management.endpoints.web.exposure.include")?;
    let exclude = names("management.endpoints.web.exposure.exclude")?;
    let listed = |list: &[String], endpoint: &str| list.iter().any(|n| n == "*" || n == endpoint);
    let exposed = |endpoint: &str| listed(&include, endpoint) && !listed(&exclude, endpoint);
    let prometheus_export = boolean("management.prometheus.metrics.export.enabled")?
        && boolean("management.metrics.export.prometheus.enabled")?;
    Ok(ManagementConfig {
        base_path: binder.parse(
            "management.endpoints.web.base-path",
            "a path starting with '/' and not ending with '/', such as /actuator",
            values::parse_base_path,
        )?,
        exposed: Exposure {
            health: exposed("health"),
            info: exposed("info"),
            prometheus: exposed("prometheus") && prometheus_export,
        },
        show_details: binder.parse(
            "management.endpoint.health.show-details",
            "one of never, when-authorized, always",
            |text| match text.trim().to_ascii_lowercase().replace('_', "-").as_str() {
                "never" => Some(ShowDetails::Never),
                "when-authorized" => Some(ShowDetails::WhenAuthorized),
                "always" => Some(ShowDetails::Always),
                _ => None,
            },
        )?,
        access_log: boolean("heureka.access-log")? || boolean("server.tomcat.accesslog.enabled")?,
    })
}

fn bind_logging_levels(binder: &Binder<'_>) -> Result<Vec<(String, String)>, ConfigError> {
    let mut levels = Vec::new();
    for (target, property) in binder.properties().map_entries("logging.level") {
        let key = format!("logging.level.{target}");
        let setting = binder.resolve(&key, &property.value, &property.origin)?;
        let level = values::parse_level(&setting.value).ok_or_else(|| {
            ConfigError::invalid(
                &key,
                &setting.value,
                &setting.origin,
                "one of trace, debug, info, warn, error, off",
            )
        })?;
        levels.push((target.to_owned(), level.to_owned()));
    }
    levels.sort_by_key(|(target, _)| !target.eq_ignore_ascii_case("root"));
    Ok(levels)
}
