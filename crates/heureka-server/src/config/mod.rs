//! Configuration of the `heureka` binary, read exactly the way Spring Boot reads a
//! `spring-cloud-netflix-eureka-server`'s, so users keep their `application.yml`.
//!
//! Loading goes in two stages (design §4.11). First the sources are merged into flat
//! properties: `files.rs` finds and reads `application.{properties,yml,yaml}` (and profile
//! variants), `sources.rs` adds environment variables and `--key=value` arguments on top.
//! Then `bind` turns the properties into the typed, validated [`Config`], resolving
//! `${placeholders}` (`placeholders.rs`) and reporting any bad value with its key and source.
//! Names are compared in Spring's relaxed canonical form (`keys.rs`), which also holds the
//! table of keys and defaults that `--help` prints.

mod files;
mod formats;
mod keys;
mod placeholders;
mod sources;
mod values;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use self::placeholders::{PlaceholderError, Resolver};
use self::sources::{CommandLine, Origin, Properties};

/// Environment variable naming config files that replace the default locations.
pub const ENV_SPRING_CONFIG_LOCATION: &str = "SPRING_CONFIG_LOCATION";
/// Environment variable naming config files read on top of the default locations.
pub const ENV_SPRING_CONFIG_ADDITIONAL_LOCATION: &str = "SPRING_CONFIG_ADDITIONAL_LOCATION";
/// Environment variable listing the active profiles.
pub const ENV_SPRING_PROFILES_ACTIVE: &str = "SPRING_PROFILES_ACTIVE";

/// The typed, validated configuration of a Heureka server.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `server.*`: where to listen.
    pub server: ServerConfig,
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

/// HTTP basic-auth credentials from `spring.security.user.*`.
#[derive(Clone, PartialEq, Eq)]
pub struct BasicAuth {
    /// `spring.security.user.name`.
    pub username: String,
    /// `spring.security.user.password`.
    pub password: String,
}

impl fmt::Debug for BasicAuth {
    /// Redacts the password so that logging the config cannot leak it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BasicAuth")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// `eureka.server.*` (Spring Cloud's `EurekaServerConfigBean`, spec §9.2). The other keys
/// of that bean are accepted and ignored.
#[derive(Debug, Clone, PartialEq)]
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
}

/// `eureka.instance.registry.*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryConfig {
    /// `eureka.instance.registry.expected-number-of-clients-sending-renews`, default `1`.
    pub expected_number_of_clients_sending_renews: u32,
    /// `eureka.instance.registry.default-open-for-traffic-count`, default `1`: the client
    /// count assumed when the startup sync found no peers.
    pub default_open_for_traffic_count: u32,
}

/// `eureka.client.*` (spec §9.3); only the keys a server uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EurekaClientConfig {
    /// `eureka.client.register-with-eureka`, default `true`. Standalone servers set false.
    pub register_with_eureka: bool,
    /// `eureka.client.fetch-registry`, default `true`. Standalone servers set false.
    pub fetch_registry: bool,
    /// `eureka.client.service-url.<zone>`: zone to peer URLs (comma-separated or a YAML
    /// list), each ending in `/`. Default `{defaultZone: [http://localhost:8761/eureka/]}`.
    pub service_url: BTreeMap<String, Vec<String>>,
}

/// `eureka.instance.*` (spec §9.3); only the keys a server uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EurekaInstanceConfig {
    /// `eureka.instance.hostname`, default none (the first non-loopback host name).
    pub hostname: Option<String>,
    /// `eureka.instance.prefer-ip-address`, default `false`: advertise the IP as host name.
    pub prefer_ip_address: bool,
    /// `eureka.instance.ip-address`, default none (the first non-loopback IP).
    pub ip_address: Option<IpAddr>,
    /// `eureka.instance.instance-id`, default none (`host:app:port`).
    pub instance_id: Option<String>,
}

/// `heureka.*`: Heureka's own keys. Unknown keys here are errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeurekaConfig {
    /// `heureka.legacy-lease-expiry`, default `false`. `true` reproduces Eureka's
    /// `Lease.isExpired` bug, which expires a lease only after twice its duration (spec §6.2).
    pub legacy_lease_expiry: bool,
    /// `heureka.max-request-body-size`, default `1MB` (1 MiB). Spring `DataSize` syntax:
    /// `1048576`, `512KB`, `2MB`.
    pub max_request_body_bytes: usize,
    /// `heureka.base-path`, default `/eureka`: the REST prefix. Starts with `/`, no trailing
    /// `/`.
    pub base_path: String,
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

/// A configuration problem, displayed as one line naming the key and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    message: String,
}

impl ConfigError {
    fn new(message: String) -> Self {
        ConfigError { message }
    }

    fn invalid(key: &str, value: &str, origin: &Origin, expected: &str) -> Self {
        ConfigError::new(format!(
            "invalid value '{value}' for {key} ({origin}): expected {expected}"
        ))
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

impl Default for Config {
    /// The configuration with no sources at all: every key at its default.
    fn default() -> Self {
        bind(&Properties::default(), &|_| None).expect("the built-in defaults are valid")
    }
}

/// Loads the configuration from `args` (the command line without the program name), the
/// environment (`env` looks a variable up by name) and the config files around `cwd`.
pub fn load(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
    cwd: &Path,
) -> Result<Loaded, ConfigError> {
    let command_line = match sources::parse_command_line(args)? {
        CommandLine::Help => return Ok(Loaded::Help(keys::help_text())),
        CommandLine::Version => {
            return Ok(Loaded::Version(format!(
                "heureka {}",
                env!("CARGO_PKG_VERSION")
            )));
        }
        CommandLine::Run(properties) => properties,
    };
    let early = |name: &str| sources::early_setting(&command_line, env, name);
    let file_settings = files::FileSettings {
        location: early("spring.config.location"),
        additional_location: early("spring.config.additional-location"),
        name: early("spring.config.name"),
        profiles: early("spring.profiles.active"),
    };
    let loaded_files = files::load(&file_settings, cwd)?;

    let map_names: Vec<String> = loaded_files
        .sources
        .iter()
        .flatten()
        .chain(&command_line)
        .filter(|property| {
            let canonical = keys::canonical(&property.name);
            keys::canonical_map_prefixes()
                .iter()
                .any(|prefix| canonical.starts_with(&format!("{prefix}.")))
        })
        .map(|property| property.name.clone())
        .collect();
    let env_properties = sources::env_properties(env, map_names.iter().map(String::as_str));

    let mut sources_read: Vec<String> = loaded_files
        .read
        .iter()
        .map(|path| format!("file {}", path.display()))
        .collect();
    if !env_properties.is_empty() {
        sources_read.push(format!(
            "environment ({})",
            plural(env_properties.len(), "variable")
        ));
    }
    if !command_line.is_empty() {
        sources_read.push(format!(
            "command line ({})",
            plural(command_line.len(), "argument")
        ));
    }

    let mut properties = Properties::default();
    for source in loaded_files.sources {
        properties.overlay(source);
    }
    properties.overlay(env_properties);
    properties.overlay(command_line);

    reject_unknown_keys(&properties)?;
    let mut config = bind(&properties, env)?;
    config.sources = sources_read;
    Ok(Loaded::Run(config))
}

fn plural(count: usize, noun: &str) -> String {
    match count {
        1 => format!("1 {noun}"),
        _ => format!("{count} {noun}s"),
    }
}

/// Typo protection for the two namespaces Heureka owns: `eureka.server.*` and `heureka.*`.
fn reject_unknown_keys(properties: &Properties) -> Result<(), ConfigError> {
    for (canonical, property) in properties.iter() {
        if keys::is_accepted(canonical) {
            continue;
        }
        let hint = keys::suggestion(canonical)
            .map(|name| format!("; did you mean {name}?"))
            .unwrap_or_default();
        return Err(ConfigError::new(format!(
            "unknown key {} ({}): not a setting Heureka or Spring Cloud's Eureka server has{hint} \
             (see --help)",
            property.name, property.origin
        )));
    }
    Ok(())
}

/// Stage two: typed, validated values.
fn bind(
    properties: &Properties,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let binder = Binder {
        properties,
        resolver: Resolver { properties, env },
    };
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
            service_url: bind_service_urls(&binder)?,
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
        },
        logging_levels: bind_logging_levels(&binder)?,
        sources: Vec::new(),
    })
}

/// A resolved value and where it came from.
struct Setting {
    value: String,
    origin: Origin,
}

/// Reads bound keys: the merged value with placeholders resolved, or the table default.
struct Binder<'a> {
    properties: &'a Properties,
    resolver: Resolver<'a>,
}

impl Binder<'_> {
    fn setting(&self, key: &'static str) -> Result<Setting, ConfigError> {
        debug_assert!(
            keys::find(key).is_some(),
            "{key} is missing from keys::KEYS"
        );
        match self.properties.get(key) {
            Some(property) => self.resolve(key, &property.value, &property.origin),
            None => Ok(Setting {
                value: keys::default_of(key).to_owned(),
                origin: Origin::Default,
            }),
        }
    }

    fn resolve(&self, key: &str, raw: &str, origin: &Origin) -> Result<Setting, ConfigError> {
        let value = self.resolver.resolve(raw).map_err(|error| {
            let why = match error {
                PlaceholderError::Unresolvable(placeholder) => {
                    format!("could not resolve placeholder '{placeholder}'")
                }
                PlaceholderError::Circular(placeholder) => {
                    format!("circular placeholder reference '{placeholder}'")
                }
            };
            ConfigError::new(format!("{why} in value '{raw}' of {key} ({origin})"))
        })?;
        Ok(Setting {
            value,
            origin: origin.clone(),
        })
    }

    fn parse<T>(
        &self,
        key: &'static str,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<T, ConfigError> {
        let setting = self.setting(key)?;
        parse(&setting.value)
            .ok_or_else(|| ConfigError::invalid(key, &setting.value, &setting.origin, expected))
    }

    /// Like `parse`, but unset or blank means `None`.
    fn optional<T>(
        &self,
        key: &'static str,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>, ConfigError> {
        let setting = self.setting(key)?;
        if setting.value.trim().is_empty() {
            return Ok(None);
        }
        parse(&setting.value)
            .map(Some)
            .ok_or_else(|| ConfigError::invalid(key, &setting.value, &setting.origin, expected))
    }
}

fn bind_security(binder: &Binder<'_>) -> Result<Option<BasicAuth>, ConfigError> {
    let name = binder.setting("spring.security.user.name")?;
    let password = binder.setting("spring.security.user.password")?;
    match (name.value.is_empty(), password.value.is_empty()) {
        (true, true) => Ok(None),
        (false, false) => Ok(Some(BasicAuth {
            username: name.value,
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
    for (zone, property) in binder.properties.map_entries("eureka.client.service-url") {
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

fn bind_logging_levels(binder: &Binder<'_>) -> Result<Vec<(String, String)>, ConfigError> {
    let mut levels = Vec::new();
    for (target, property) in binder.properties.map_entries("logging.level") {
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
