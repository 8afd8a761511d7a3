//! Binding a [`ClientConfig`] from Spring's keys, with Spring Cloud Netflix's defaults
//! (`EurekaClientConfigBean`, `EurekaInstanceConfigBean` and what
//! `EurekaClientAutoConfiguration` sets on it) and Spring Cloud Commons' for
//! `spring.cloud.inetutils.*`. The sources are read by `heureka-config`, as the server's are.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use heureka_config::values::{self, DurationUnit};
use heureka_config::{
    Binder, ConfigError, Names, Origin, Properties, Property, Resolver, Schema, Setting,
};
use heureka_core::InstanceStatus;

use crate::address::{self, HostInfo, InetSettings};
use crate::config::{ClientConfig, InstanceUrls, DEFAULT_ZONE};

/// Maps whose keys are kept as written (`defaultZone`, `management.port`).
const MAP_PREFIXES: &[&str] = &[
    "eureka.client.service-url",
    "eureka.client.availability-zones",
    "eureka.instance.metadata-map",
];

/// The default service URL map: Spring Cloud's `EurekaClientConfigBean`.
const DEFAULT_SERVICE_URL: &str = "http://localhost:8761/eureka/";

/// Every scalar key the client reads, with its default as text ("" for unset). Defaults that
/// depend on other keys (`non-secure-port` on `server.port`, `virtual-host-name` on
/// `spring.application.name`…) are unset here and worked out in `bind`.
const KEYS: &[(&str, &str)] = &[
    ("spring.application.name", ""),
    ("spring.application.instance_id", ""),
    ("vcap.application.instance_id", ""),
    ("spring.cloud.client.hostname", ""),
    ("spring.cloud.client.ip-address", ""),
    ("server.port", ""),
    ("management.server.port", ""),
    ("eureka.client.region", "us-east-1"),
    ("eureka.client.prefer-same-zone-eureka", "true"),
    ("eureka.client.register-with-eureka", "true"),
    ("eureka.client.fetch-registry", "true"),
    ("eureka.client.registry-fetch-interval-seconds", "30"),
    ("eureka.client.eureka-server-read-timeout-seconds", "8"),
    ("eureka.client.eureka-server-connect-timeout-seconds", "5"),
    ("eureka.client.filter-only-up-instances", "true"),
    ("eureka.client.healthcheck.enabled", "false"),
    (
        "eureka.client.instance-info-replication-interval-seconds",
        "30",
    ),
    (
        "eureka.client.initial-instance-info-replication-interval-seconds",
        "40",
    ),
    ("eureka.client.on-demand-update-status-change", "true"),
    (
        "eureka.client.heartbeat-executor-exponential-back-off-bound",
        "10",
    ),
    (
        "eureka.client.cache-refresh-executor-exponential-back-off-bound",
        "10",
    ),
    (
        "eureka.client.transport.sessioned-client-reconnect-interval-seconds",
        "1200",
    ),
    ("eureka.instance.appname", ""),
    ("eureka.instance.instance-id", ""),
    ("eureka.instance.hostname", ""),
    ("eureka.instance.ip-address", ""),
    ("eureka.instance.prefer-ip-address", "false"),
    ("eureka.instance.non-secure-port", ""),
    ("eureka.instance.non-secure-port-enabled", "true"),
    ("eureka.instance.secure-port", ""),
    ("eureka.instance.secure-port-enabled", "false"),
    ("eureka.instance.lease-renewal-interval-in-seconds", "30"),
    ("eureka.instance.lease-expiration-duration-in-seconds", "90"),
    ("eureka.instance.virtual-host-name", ""),
    ("eureka.instance.secure-virtual-host-name", ""),
    ("eureka.instance.home-page-url-path", "/"),
    ("eureka.instance.home-page-url", ""),
    ("eureka.instance.status-page-url-path", "/actuator/info"),
    ("eureka.instance.status-page-url", ""),
    ("eureka.instance.health-check-url-path", "/actuator/health"),
    ("eureka.instance.health-check-url", ""),
    ("eureka.instance.secure-health-check-url", ""),
    ("eureka.instance.initial-status", "UP"),
    ("eureka.instance.instance-enabled-onit", "false"),
    ("spring.cloud.inetutils.preferred-networks", ""),
    ("spring.cloud.inetutils.ignored-interfaces", ""),
    (
        "spring.cloud.inetutils.use-only-site-local-interfaces",
        "false",
    ),
    ("spring.cloud.inetutils.default-hostname", "localhost"),
    ("spring.cloud.inetutils.default-ip-address", "127.0.0.1"),
    ("spring.cloud.inetutils.timeout-seconds", "1"),
];

/// How the own address is found when it is not configured: [`address::find_host_info`], or
/// a stand-in in tests.
pub(crate) type HostLookup<'a> = &'a dyn Fn(&InetSettings) -> HostInfo;

fn names() -> Names {
    Names::new(MAP_PREFIXES)
}

fn default_of(key: &str) -> String {
    let names = names();
    let wanted = names.canonical(key);
    KEYS.iter()
        .find(|(name, _)| names.canonical(name) == wanted)
        .map_or_else(String::new, |(_, default)| (*default).to_owned())
}

/// `ClientConfig::from_properties`.
pub(crate) fn from_pairs<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<ClientConfig, ConfigError> {
    let mut properties = Properties::new(names());
    properties.overlay(
        pairs
            .into_iter()
            .map(|(name, value)| Property {
                name: name.to_owned(),
                value: value.to_owned(),
                origin: Origin::Code,
            })
            .collect(),
    );
    bind(&properties, &|_| None, &address::find_host_info)
}

/// `ClientConfig::from_file`.
pub(crate) fn from_file(path: &Path) -> Result<ClientConfig, ConfigError> {
    let properties = heureka_config::load_file(path, &names())?;
    bind(&properties, &|_| None, &address::find_host_info)
}

/// `ClientConfig::from_spring`.
pub(crate) fn from_spring(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
    cwd: &Path,
) -> Result<ClientConfig, ConfigError> {
    let properties = load_spring(args, env, cwd)?;
    bind(&properties, env, &address::find_host_info)
}

/// The merged sources of a Spring Boot application. The environment is asked by name, so the
/// zone keys of the configured region are asked for in a second pass, once the region and
/// its zones are known.
pub(crate) fn load_spring(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
    cwd: &Path,
) -> Result<Properties, ConfigError> {
    let options: Vec<String> = args
        .iter()
        .filter(|arg| arg.starts_with("--"))
        .cloned()
        .collect();
    let command_line = heureka_config::parse_args(&options)
        .map_err(|error| ConfigError::new(error.to_string()))?;
    let mut schema = Schema::new(
        names(),
        KEYS.iter().map(|(name, _)| (*name).to_owned()).chain([
            format!("eureka.client.service-url.{DEFAULT_ZONE}"),
            "eureka.instance.metadata-map.zone".to_owned(),
        ]),
    );
    let first = heureka_config::load(&schema, command_line.clone(), env, cwd)?.properties;
    let zone_keys = zone_keys(&first, env)?;
    if zone_keys.iter().all(|key| schema.has_env_key(key)) {
        return Ok(first);
    }
    schema.add_env_keys(zone_keys);
    Ok(heureka_config::load(&schema, command_line, env, cwd)?.properties)
}

/// `eureka.client.availability-zones.<region>` and `eureka.client.service-url.<zone>` for the
/// configured region and each of its zones.
fn zone_keys(
    properties: &Properties,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<String>, ConfigError> {
    let fallback = |key: &str| Some(default_of(key)).filter(|value| !value.is_empty());
    let binder = Binder::new(
        Resolver {
            properties,
            env,
            fallback: &fallback,
        },
        &default_of,
    );
    let region = binder.setting("eureka.client.region")?.value;
    let zones_key = format!("eureka.client.availability-zones.{region}");
    let mut keys = vec![zones_key.clone()];
    let zones = match properties.get(&zones_key) {
        Some(property) => values::parse_list(
            &binder
                .resolve(&zones_key, &property.value, &property.origin)?
                .value,
        ),
        None => {
            let names = names();
            names
                .env_names(&zones_key)
                .iter()
                .find_map(|var| env(var))
                .map(|value| values::parse_list(&value))
                .unwrap_or_default()
        }
    };
    keys.extend(
        zones
            .into_iter()
            .map(|zone| format!("eureka.client.service-url.{zone}")),
    );
    Ok(keys)
}

/// Merged properties to a validated [`ClientConfig`]. `host_lookup` is asked at most once,
/// and only when a host name or address is needed that no key gives.
pub(crate) fn bind(
    properties: &Properties,
    env: &dyn Fn(&str) -> Option<String>,
    host_lookup: HostLookup<'_>,
) -> Result<ClientConfig, ConfigError> {
    let plain_fallback = |key: &str| Some(default_of(key)).filter(|value| !value.is_empty());
    let plain = Binder::new(
        Resolver {
            properties,
            env,
            fallback: &plain_fallback,
        },
        &default_of,
    );
    let inet = bind_inet(&plain)?;

    // Spring Cloud's HostInfoEnvironmentPostProcessor provides these two from InetUtils;
    // instance ids and URLs are commonly built from them.
    let host = OnceCell::new();
    let host_info = || host.get_or_init(|| host_lookup(&inet)).clone();
    let fallback = |key: &str| {
        let names = names();
        let canonical = names.canonical(key);
        if canonical == names.canonical("spring.cloud.client.hostname") {
            return Some(host_info().hostname);
        }
        if canonical == names.canonical("spring.cloud.client.ip-address") {
            return Some(host_info().ip_address);
        }
        plain_fallback(key)
    };
    let binder = Binder::new(
        Resolver {
            properties,
            env,
            fallback: &fallback,
        },
        &default_of,
    );
    let text = |key: &str| -> Result<Option<String>, ConfigError> {
        binder.optional(key, "a value", |text| Some(text.trim().to_owned()))
    };
    let boolean = |key: &str| binder.parse(key, "true or false", values::parse_bool);
    let port =
        |key: &str| binder.optional(key, "a port from 0 to 65535", values::parse_number::<u16>);
    let seconds = |key: &str| {
        binder.parse(key, "a whole number of seconds greater than 0", |text| {
            values::parse_duration(text, DurationUnit::Seconds).filter(|d| !d.is_zero())
        })
    };

    let bound = |key: &str| {
        binder.parse(key, "a whole number greater than 0", |text| {
            values::parse_number::<u32>(text).filter(|bound| *bound > 0)
        })
    };

    let application_name = text("spring.application.name")?;
    let server_port = port("server.port")?;
    let server_port_or_default = server_port.unwrap_or(8080);
    let secure_port_enabled = boolean("eureka.instance.secure-port-enabled")?;
    let prefer_ip_address = boolean("eureka.instance.prefer-ip-address")?;

    let ip_addr = match text("eureka.instance.ip-address")? {
        Some(ip) => ip,
        None => host_info().ip_address,
    };
    let hostname = match text("eureka.instance.hostname")? {
        Some(hostname) => hostname,
        None => host_info().hostname,
    };
    let instance_id = match text("eureka.instance.instance-id")? {
        Some(id) => id,
        None => default_instance_id(&binder, application_name.as_deref(), &host_info)?,
    };
    let unknown = || {
        application_name
            .clone()
            .unwrap_or_else(|| "unknown".to_owned())
    };

    let mut metadata: BTreeMap<String, String> = binder
        .map("eureka.instance.metadata-map")?
        .into_iter()
        .map(|(key, setting)| (key, setting.value))
        .collect();
    let management_port = port("management.server.port")?;
    metadata
        .entry("management.port".to_owned())
        .or_insert_with(|| {
            management_port
                .unwrap_or(server_port_or_default)
                .to_string()
        });

    let service_url = bind_service_urls(&binder)?;
    let config = ClientConfig {
        service_url,
        region: binder.parse("eureka.client.region", "a region name", |text| {
            Some(text.trim().to_owned()).filter(|region| !region.is_empty())
        })?,
        availability_zones: binder
            .map("eureka.client.availability-zones")?
            .into_iter()
            .map(|(region, setting)| (region, values::parse_list(&setting.value)))
            .filter(|(_, zones)| !zones.is_empty())
            .collect(),
        prefer_same_zone_eureka: boolean("eureka.client.prefer-same-zone-eureka")?,
        register_with_eureka: boolean("eureka.client.register-with-eureka")?,
        fetch_registry: boolean("eureka.client.fetch-registry")?,
        filter_only_up_instances: boolean("eureka.client.filter-only-up-instances")?,
        healthcheck_enabled: boolean("eureka.client.healthcheck.enabled")?,
        app_name: text("eureka.instance.appname")?.unwrap_or_else(unknown),
        instance_id,
        host_name: if prefer_ip_address {
            ip_addr.clone()
        } else {
            hostname
        },
        ip_addr,
        prefer_ip_address,
        port: port("eureka.instance.non-secure-port")?.unwrap_or(server_port_or_default),
        port_enabled: boolean("eureka.instance.non-secure-port-enabled")?,
        // Spring's auto-configuration moves the server port to the secure port when the secure
        // port is enabled.
        secure_port: port("eureka.instance.secure-port")?.unwrap_or(if secure_port_enabled {
            server_port_or_default
        } else {
            443
        }),
        secure_port_enabled,
        lease_renewal_interval: seconds("eureka.instance.lease-renewal-interval-in-seconds")?,
        lease_duration: seconds("eureka.instance.lease-expiration-duration-in-seconds")?,
        metadata,
        vip_address: text("eureka.instance.virtual-host-name")?.unwrap_or_else(unknown),
        secure_vip_address: text("eureka.instance.secure-virtual-host-name")?
            .unwrap_or_else(unknown),
        urls: InstanceUrls {
            home_page_path: binder.setting("eureka.instance.home-page-url-path")?.value,
            home_page: text("eureka.instance.home-page-url")?,
            status_page_path: binder
                .setting("eureka.instance.status-page-url-path")?
                .value,
            status_page: text("eureka.instance.status-page-url")?,
            health_check_path: binder
                .setting("eureka.instance.health-check-url-path")?
                .value,
            health_check: text("eureka.instance.health-check-url")?,
            secure_health_check: text("eureka.instance.secure-health-check-url")?,
            management_port,
        },
        initial_status: binder.parse(
            "eureka.instance.initial-status",
            "one of UP, DOWN, STARTING, OUT_OF_SERVICE, UNKNOWN",
            |text| InstanceStatus::from_name(&text.trim().to_ascii_uppercase()),
        )?,
        instance_enabled_onit: boolean("eureka.instance.instance-enabled-onit")?,
        inet: inet.clone(),
        registry_fetch_interval: seconds("eureka.client.registry-fetch-interval-seconds")?,
        quarantine: Duration::from_secs(30),
        request_timeout: seconds("eureka.client.eureka-server-read-timeout-seconds")?,
        connect_timeout: seconds("eureka.client.eureka-server-connect-timeout-seconds")?,
        instance_info_replication_interval: seconds(
            "eureka.client.instance-info-replication-interval-seconds",
        )?,
        initial_instance_info_replication_interval: seconds(
            "eureka.client.initial-instance-info-replication-interval-seconds",
        )?,
        on_demand_update_status_change: boolean("eureka.client.on-demand-update-status-change")?,
        heartbeat_executor_exponential_back_off_bound: bound(
            "eureka.client.heartbeat-executor-exponential-back-off-bound",
        )?,
        cache_refresh_executor_exponential_back_off_bound: bound(
            "eureka.client.cache-refresh-executor-exponential-back-off-bound",
        )?,
        session_reconnect_interval: seconds(
            "eureka.client.transport.sessioned-client-reconnect-interval-seconds",
        )?,
    };
    Ok(config)
}

/// Spring Cloud Commons' `IdUtils.getDefaultInstanceId`: `vcap.application.instance_id` if
/// set, else `host:app:index` with the index `spring.application.instance_id`, else
/// `server.port`; an unset part is left out with its separator.
fn default_instance_id(
    binder: &Binder<'_>,
    application_name: Option<&str>,
    host_info: &dyn Fn() -> HostInfo,
) -> Result<String, ConfigError> {
    let text = |key: &str| -> Result<Option<String>, ConfigError> {
        binder.optional(key, "a value", |text| Some(text.trim().to_owned()))
    };
    if let Some(vcap) = text("vcap.application.instance_id")? {
        return Ok(vcap);
    }
    let hostname = text("spring.cloud.client.hostname")?.unwrap_or_else(|| host_info().hostname);
    let index = match text("spring.application.instance_id")? {
        Some(index) => Some(index),
        None => text("server.port")?,
    };
    let parts: Vec<String> = [Some(hostname), application_name.map(str::to_owned), index]
        .into_iter()
        .flatten()
        .collect();
    Ok(parts.join(":"))
}

/// `spring.cloud.inetutils.*`, with the patterns checked.
fn bind_inet(binder: &Binder<'_>) -> Result<InetSettings, ConfigError> {
    let settings = InetSettings {
        preferred_networks: binder.list("spring.cloud.inetutils.preferred-networks")?,
        ignored_interfaces: binder.list("spring.cloud.inetutils.ignored-interfaces")?,
        use_only_site_local_interfaces: binder.parse(
            "spring.cloud.inetutils.use-only-site-local-interfaces",
            "true or false",
            values::parse_bool,
        )?,
        default_hostname: binder
            .setting("spring.cloud.inetutils.default-hostname")?
            .value,
        default_ip_address: binder
            .setting("spring.cloud.inetutils.default-ip-address")?
            .value,
        timeout: binder.parse(
            "spring.cloud.inetutils.timeout-seconds",
            "a whole number of seconds",
            |text| values::parse_duration(text, DurationUnit::Seconds),
        )?,
    };
    if let Some((pattern, why)) = settings.invalid_pattern() {
        let key = if settings.preferred_networks.contains(&pattern) {
            "spring.cloud.inetutils.preferred-networks"
        } else {
            "spring.cloud.inetutils.ignored-interfaces"
        };
        let setting = binder.setting(key)?;
        return Err(ConfigError::invalid(
            key,
            &pattern,
            &setting.origin,
            &format!("a regular expression ({})", first_line(&why)),
        ));
    }
    Ok(settings)
}

fn first_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or(text)
        .trim()
}

/// `eureka.client.service-url.<zone>`: comma lists of http(s) URLs, each given a trailing `/`
/// as Spring Cloud's `EurekaClientConfigBean.getEurekaServerServiceUrls` does.
fn bind_service_urls(binder: &Binder<'_>) -> Result<BTreeMap<String, Vec<String>>, ConfigError> {
    let mut zones = BTreeMap::new();
    for (zone, setting) in binder.map("eureka.client.service-url")? {
        let Setting { value, origin } = setting;
        let key = format!("eureka.client.service-url.{zone}");
        let mut urls = Vec::new();
        for url in values::parse_list(&value) {
            let url = values::parse_http_url(&url).ok_or_else(|| {
                ConfigError::invalid(&key, &url, &origin, "an http:// or https:// URL")
            })?;
            urls.push(if url.ends_with('/') {
                url
            } else {
                format!("{url}/")
            });
        }
        if !urls.is_empty() {
            zones.insert(zone, urls);
        }
    }
    if zones.is_empty() {
        zones.insert(
            DEFAULT_ZONE.to_owned(),
            vec![DEFAULT_SERVICE_URL.to_owned()],
        );
    }
    Ok(zones)
}

#[cfg(test)]
mod tests;
