//! Unit tests of configuration loading. No test touches the real environment: the
//! environment is a closure over a slice, and files live in per-test temporary directories.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use heureka_testkit::TempDir as Dir;

mod dns;
mod namespaces;
mod regions;
mod ssl;
mod users;

fn load_in(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Loaded, ConfigError> {
    let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
    let env: BTreeMap<String, String> = env
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    load(&args, &|name| env.get(name).cloned(), cwd)
}

fn try_config(dir: &Dir, args: &[&str], env: &[(&str, &str)]) -> Result<Config, ConfigError> {
    match load_in(&dir.path, args, env)? {
        Loaded::Run(config) => Ok(config),
        other => panic!("expected a configuration, got {other:?}"),
    }
}

fn config(dir: &Dir, args: &[&str], env: &[(&str, &str)]) -> Config {
    try_config(dir, args, env).unwrap_or_else(|error| panic!("{error}"))
}

fn error(dir: &Dir, args: &[&str], env: &[(&str, &str)]) -> String {
    match try_config(dir, args, env) {
        Ok(config) => panic!("expected an error, got {config:?}"),
        Err(error) => error.to_string(),
    }
}

fn zone(urls: &[&str]) -> BTreeMap<String, Vec<String>> {
    let urls = urls.iter().map(|url| url.to_string()).collect();
    BTreeMap::from([("defaultZone".to_owned(), urls)])
}

#[test]
fn defaults_match_spring() {
    let config = config(&Dir::new(), &[], &[]);
    assert_eq!(config.server.port, 8761);
    assert_eq!(config.server.address, IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    assert_eq!(config.application_name, "heureka");
    assert_eq!(config.security, None);
    let server = &config.eureka_server;
    assert!(server.enable_self_preservation);
    assert_eq!(server.renewal_percent_threshold, 0.85);
    assert_eq!(server.renewal_threshold_update_interval_ms, 900_000);
    assert_eq!(server.expected_client_renewal_interval_seconds, 30);
    assert_eq!(server.eviction_interval_timer_in_ms, 60_000);
    assert_eq!(server.response_cache_update_interval_ms, 30_000);
    assert_eq!(server.response_cache_auto_expiration_in_seconds, 180);
    assert!(server.use_read_only_response_cache);
    assert_eq!(server.retention_time_in_ms_in_delta_queue, 180_000);
    assert_eq!(server.delta_retention_timer_interval_in_ms, 30_000);
    assert!(!server.disable_delta);
    assert_eq!(server.wait_time_in_ms_when_sync_empty, 300_000);
    assert!(!server.enable_replicated_request_compression);
    assert_eq!(server.my_url, None);
    assert_eq!(config.registry.expected_number_of_clients_sending_renews, 1);
    assert_eq!(config.registry.default_open_for_traffic_count, 1);
    assert!(config.client.register_with_eureka);
    assert!(config.client.fetch_registry);
    assert_eq!(config.client.eureka_server_read_timeout_seconds, 8);
    assert_eq!(
        config.client.service_url,
        zone(&["http://localhost:8761/eureka/"])
    );
    assert_eq!(config.instance.hostname, None);
    assert!(!config.instance.prefer_ip_address);
    assert_eq!(config.instance.ip_address, None);
    assert_eq!(config.instance.instance_id, None);
    assert!(!config.heureka.legacy_lease_expiry);
    assert_eq!(config.heureka.max_request_body_bytes, 1024 * 1024);
    assert_eq!(config.heureka.base_path, "/eureka");
    assert!(config.heureka.allowed_origins.is_empty());
    let connections = &config.connections;
    assert_eq!(connections.connection_timeout, Duration::from_secs(20));
    assert_eq!(connections.keep_alive_timeout, Duration::from_secs(60));
    assert_eq!(connections.request_body_timeout, Duration::from_secs(30));
    assert_eq!(connections.max_connections, 8192);
    assert_eq!(connections.max_header_bytes, 8 * 1024);
    assert_eq!(connections.shutdown_grace, Duration::from_secs(30));
    let events = &config.heureka.events;
    assert_eq!(events.max_streams, 256);
    assert_eq!(events.max_streams_per_client, 8);
    assert_eq!(events.keep_alive_interval, Duration::from_secs(15));
    assert_eq!(events.send_timeout, Duration::from_secs(30));
    assert_eq!(events.max_age, Duration::from_secs(30 * 60));
    assert!(config.logging_levels.is_empty());
    assert!(config.sources.is_empty());
    assert_eq!(Config::default(), config);
}

#[test]
fn the_start_up_sync_waits_for_a_peer_as_long_as_eureka_server_read_timeout_seconds_says() {
    let config = config(
        &Dir::new(),
        &["--eureka.client.eureka-server-read-timeout-seconds=120"],
        &[],
    );
    let settings = crate::replication::ReplicationSettings::from_config(&config);
    assert_eq!(settings.timeouts.registry_read, Duration::from_secs(120));
}

#[test]
fn command_line_overrides_env_overrides_file() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "server:\n  port: 1000\nspring.application.name: from-file\n",
    );
    dir.write(
        "application.properties",
        "eureka.server.eviction-interval-timer-in-ms=7\n",
    );
    let env = [
        ("SERVER_PORT", "2000"),
        ("SPRING_APPLICATION_NAME", "from-env"),
    ];
    let config = config(&dir, &["--server.port=3000"], &env);
    assert_eq!(config.server.port, 3000);
    assert_eq!(config.application_name, "from-env");
    assert_eq!(config.eureka_server.eviction_interval_timer_in_ms, 7);
}

#[test]
fn relaxed_names_are_equivalent() {
    let dir = Dir::new();
    for name in [
        "eureka.server.enableSelfPreservation",
        "eureka.server.enable-self-preservation",
        "eureka.server.enable_self_preservation",
        "Eureka.Server.ENABLE-SELF-PRESERVATION",
    ] {
        let config = config(&dir, &[&format!("--{name}=false")], &[]);
        assert!(!config.eureka_server.enable_self_preservation, "{name}");
    }
    let config = config(
        &dir,
        &["--eureka.server.retentionTimeInMSInDeltaQueue=5"],
        &[],
    );
    assert_eq!(config.eureka_server.retention_time_in_ms_in_delta_queue, 5);
}

#[test]
fn env_var_relaxed_form_binds() {
    let dir = Dir::new();
    let config = config(
        &dir,
        &[],
        &[("EUREKA_SERVER_ENABLESELFPRESERVATION", "false")],
    );
    assert!(!config.eureka_server.enable_self_preservation);
    let legacy = [("EUREKA_SERVER_EVICTION_INTERVAL_TIMER_IN_MS", "5000")];
    let config = self::config(&dir, &[], &legacy);
    assert_eq!(config.eureka_server.eviction_interval_timer_in_ms, 5000);
}

#[test]
fn env_var_sets_service_url_zone_keeping_its_case() {
    let dir = Dir::new();
    let env = [(
        "EUREKA_CLIENT_SERVICEURL_DEFAULTZONE",
        "http://peer1:8761/eureka,http://peer2/eureka/",
    )];
    let config = config(&dir, &[], &env);
    assert_eq!(
        config.client.service_url,
        zone(&["http://peer1:8761/eureka/", "http://peer2/eureka/"])
    );
}

#[test]
fn env_var_overrides_map_entry_named_in_a_file() {
    let dir = Dir::new();
    dir.write("application.yml", "logging.level.com.example: info\n");
    let config = config(&dir, &[], &[("LOGGING_LEVEL_COM_EXAMPLE", "debug")]);
    assert_eq!(
        config.logging_levels,
        [("com.example".to_owned(), "debug".to_owned())]
    );
}

#[test]
fn yaml_nested_keys_flatten() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "eureka:\n  server:\n    renewalPercentThreshold: 0.5\n    eviction-interval-timer-in-ms: 1000\n  instance:\n    registry:\n      expected-number-of-clients-sending-renews: 4\n",
    );
    let config = config(&dir, &[], &[]);
    assert_eq!(config.eureka_server.renewal_percent_threshold, 0.5);
    assert_eq!(config.eureka_server.eviction_interval_timer_in_ms, 1000);
    assert_eq!(config.registry.expected_number_of_clients_sending_renews, 4);
}

#[test]
fn yaml_list_is_accepted_as_comma_list() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "eureka.client.service-url:\n  defaultZone:\n    - http://a/eureka\n    - http://b/eureka/\n",
    );
    let config = config(&dir, &[], &[]);
    assert_eq!(
        config.client.service_url,
        zone(&["http://a/eureka/", "http://b/eureka/"])
    );
}

#[test]
fn higher_source_replaces_a_whole_list() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "eureka.client.service-url.defaultZone: [http://a/eureka/, http://b/eureka/]\n",
    );
    let config = config(
        &dir,
        &["--eureka.client.service-url.defaultZone[0]=http://c/"],
        &[],
    );
    assert_eq!(config.client.service_url, zone(&["http://c/"]));
}

#[test]
fn properties_file_is_read() {
    let dir = Dir::new();
    dir.write(
        "application.properties",
        "# a comment\n! another\nserver.port: 9000\nspring.application.name = my\\\n    -registry\neureka.instance.hostname peer\\u0031\n",
    );
    let config = config(&dir, &[], &[]);
    assert_eq!(config.server.port, 9000);
    assert_eq!(config.application_name, "my-registry");
    assert_eq!(config.instance.hostname.as_deref(), Some("peer1"));
}

#[test]
fn properties_take_precedence_over_yaml_in_the_same_directory() {
    let dir = Dir::new();
    dir.write("application.yaml", "server.port: 1\n");
    dir.write("application.yml", "server.port: 2\n");
    assert_eq!(config(&dir, &[], &[]).server.port, 2);
    dir.write("application.properties", "server.port=3\n");
    assert_eq!(config(&dir, &[], &[]).server.port, 3);
}

#[test]
fn config_dir_overrides_working_dir() {
    let dir = Dir::new();
    dir.write(
        "application.properties",
        "server.port=1\nspring.application.name=base\n",
    );
    dir.write("config/application.yml", "server.port: 2\n");
    dir.write(
        "config/extra/application.yml",
        "spring.application.name: nested\n",
    );
    let config = config(&dir, &[], &[]);
    assert_eq!(config.server.port, 2);
    assert_eq!(config.application_name, "nested");
}

#[test]
fn spring_config_location_replaces_defaults() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "server.port: 1\nspring.application.name: default\n",
    );
    dir.write("elsewhere/custom.yml", "server.port: 2\n");
    let config = config(
        &dir,
        &["--spring.config.location=elsewhere/custom.yml"],
        &[],
    );
    assert_eq!(config.server.port, 2);
    assert_eq!(config.application_name, "heureka");
    assert_eq!(config.sources.len(), 2, "{:?}", config.sources);
    assert!(
        config.sources[0].ends_with("custom.yml"),
        "{:?}",
        config.sources
    );
}

#[test]
fn spring_config_location_directory_is_searched_and_env_form_works() {
    let dir = Dir::new();
    dir.write("etc/application.properties", "server.port=4\n");
    let config = config(&dir, &[], &[(ENV_SPRING_CONFIG_LOCATION, "etc/")]);
    assert_eq!(config.server.port, 4);
}

#[test]
fn additional_location_adds_on_top() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "server.port: 1\nspring.application.name: base\n",
    );
    dir.write("more.properties", "server.port=5\n");
    let config = config(
        &dir,
        &["--spring.config.additional-location=more.properties"],
        &[],
    );
    assert_eq!(config.server.port, 5);
    assert_eq!(config.application_name, "base");
}

#[test]
fn missing_explicit_config_file_is_an_error() {
    let message = error(&Dir::new(), &["--spring.config.location=nope.yml"], &[]);
    assert!(message.contains("nope.yml"), "{message}");
    assert!(
        message.contains("spring.config.location (command line)"),
        "{message}"
    );
}

#[test]
fn optional_missing_location_is_skipped() {
    let config = config(
        &Dir::new(),
        &["--spring.config.location=optional:nope.yml"],
        &[],
    );
    assert_eq!(config.server.port, 8761);
}

#[test]
fn profile_specific_file_overrides_base() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "server.port: 1\nspring.profiles.active: peer1\n",
    );
    dir.write("application-peer1.yml", "server.port: 8762\n");
    dir.write("config/application-peer2.properties", "server.port=8763\n");
    assert_eq!(config(&dir, &[], &[]).server.port, 8762);
    let args = ["--spring.profiles.active=peer1,peer2"];
    assert_eq!(config(&dir, &args, &[]).server.port, 8763);
}

#[test]
fn yaml_document_activated_by_profile() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "server.port: 1\n---\nspring.config.activate.on-profile: peer1\nserver.port: 2\n---\nspring:\n  profiles: peer2\nserver.port: 3\n",
    );
    assert_eq!(config(&dir, &[], &[]).server.port, 1);
    assert_eq!(
        config(&dir, &[], &[(ENV_SPRING_PROFILES_ACTIVE, "peer1")])
            .server
            .port,
        2
    );
    assert_eq!(
        config(&dir, &["--spring.profiles.active=peer2"], &[])
            .server
            .port,
        3
    );
}

#[test]
fn default_profile_applies_when_none_is_active() {
    let dir = Dir::new();
    dir.write("application-default.properties", "server.port=7\n");
    assert_eq!(config(&dir, &[], &[]).server.port, 7);
    assert_eq!(
        config(&dir, &["--spring.profiles.active=x"], &[])
            .server
            .port,
        8761
    );
}

#[test]
fn placeholders_resolve_with_defaults() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "server.port: 8765\neureka:\n  instance:\n    hostname: registry\n    instance-id: ${spring.application.name}:${missing.key:${also.missing:7}}\n  client:\n    service-url:\n      defaultZone: http://${eureka.instance.hostname}:${server.port}/eureka/\n",
    );
    let config = config(&dir, &[], &[]);
    assert_eq!(
        config.client.service_url,
        zone(&["http://registry:8765/eureka/"])
    );
    assert_eq!(config.instance.instance_id.as_deref(), Some("heureka:7"));
}

#[test]
fn placeholder_resolves_from_env_var() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "eureka.instance.hostname: ${PEER_HOST}\nspring.application.name: app-${server.port}\n",
    );
    let config = config(&dir, &[], &[("PEER_HOST", "peer7"), ("SERVER_PORT", "9")]);
    assert_eq!(config.instance.hostname.as_deref(), Some("peer7"));
    assert_eq!(config.application_name, "app-9");
}

#[test]
fn unresolvable_placeholder_is_an_error_naming_it() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "eureka.instance.hostname: ${no.such.key}\n",
    );
    let message = error(&dir, &[], &[]);
    assert!(message.contains("'${no.such.key}'"), "{message}");
    assert!(
        message.contains("eureka.instance.hostname (file "),
        "{message}"
    );
}

#[test]
fn circular_placeholder_is_an_error() {
    let message = error(
        &Dir::new(),
        &[
            "--spring.application.name=${a}",
            "--a=${spring.application.name}",
        ],
        &[],
    );
    assert!(message.contains("circular"), "{message}");
}

#[test]
fn unknown_eureka_server_key_is_an_error_naming_it() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "eureka:\n  server:\n    enable-self-preservaton: false\n",
    );
    let message = error(&dir, &[], &[]);
    assert!(
        message.contains("unknown key eureka.server.enable-self-preservaton (file "),
        "{message}"
    );
    assert!(
        message.contains("did you mean eureka.server.enable-self-preservation?"),
        "{message}"
    );
}

#[test]
fn every_spring_eureka_server_key_is_accepted() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "eureka.server:\n  peer-node-read-timeout-ms: 1000\n  rateLimiterEnabled: true\n  rate-limiter-privileged-clients: [a, b]\n  remote-region-urls-with-name:\n    eu: http://x/\n  g-zip-content-from-remote-region: false\n  a-w-s-access-id: x\n  route53DomainTTL: 30\n  experimental:\n    foo: bar\n  use-aws-asg-api: false\n",
    );
    config(&dir, &[], &[]);
}

#[test]
fn unknown_heureka_key_is_an_error() {
    let message = error(&Dir::new(), &["--heureka.base-pth=/x"], &[]);
    assert!(
        message.contains("unknown key heureka.base-pth (command line)"),
        "{message}"
    );
    assert!(
        message.contains("did you mean heureka.base-path?"),
        "{message}"
    );
}

#[test]
fn unknown_keys_elsewhere_are_ignored() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "management.endpoints.web.exposure.include: '*'\nspring.cloud.config.enabled: false\neureka.client.whatever: 1\neureka.dashboard.enabled: false\nfoo.bar: ${unresolvable}\n",
    );
    config(&dir, &[], &[]);
}

#[test]
fn malformed_port_is_an_error_naming_key_and_source() {
    let dir = Dir::new();
    dir.write("application.yml", "server:\n  port: eighty\n");
    let message = error(&dir, &[], &[]);
    let file = dir.path.join("application.yml");
    assert_eq!(
        message,
        format!(
            "invalid value 'eighty' for server.port (file {}): expected a port from 0 to 65535",
            file.display()
        )
    );
    let message = error(&dir, &[], &[("SERVER_PORT", "70000")]);
    assert!(
        message.contains("(environment variable SERVER_PORT)"),
        "{message}"
    );
}

#[test]
fn bad_bool_is_an_error_naming_key_and_source() {
    let message = error(
        &Dir::new(),
        &["--eureka.server.enableSelfPreservation=yes please"],
        &[],
    );
    assert_eq!(
        message,
        "invalid value 'yes please' for eureka.server.enable-self-preservation (command line): \
         expected true or false"
    );
}

#[test]
fn spring_boolean_spellings_are_accepted() {
    let dir = Dir::new();
    for (text, expected) in [("on", true), ("NO", false), ("Yes", true), ("0", false)] {
        let config = config(
            &dir,
            &[&format!("--eureka.client.fetch-registry={text}")],
            &[],
        );
        assert_eq!(config.client.fetch_registry, expected, "{text}");
    }
}

#[test]
fn renewal_percent_threshold_must_be_in_range() {
    let dir = Dir::new();
    assert!(error(
        &dir,
        &["--eureka.server.renewal-percent-threshold=1.5"],
        &[]
    )
    .contains("eureka.server.renewal-percent-threshold"));
    assert!(
        error(&dir, &["--eureka.server.renewal-percent-threshold=0"], &[])
            .contains("greater than 0")
    );
    let config = config(&dir, &["--eureka.server.renewal-percent-threshold=1"], &[]);
    assert_eq!(config.eureka_server.renewal_percent_threshold, 1.0);
}

#[test]
fn non_positive_expected_client_renewal_interval_means_30() {
    let dir = Dir::new();
    let config = config(
        &dir,
        &["--eureka.server.expected-client-renewal-interval-seconds=-5"],
        &[],
    );
    assert_eq!(
        config
            .eureka_server
            .expected_client_renewal_interval_seconds,
        30
    );
    let config = self::config(
        &dir,
        &["--eureka.server.expected-client-renewal-interval-seconds=10"],
        &[],
    );
    assert_eq!(
        config
            .eureka_server
            .expected_client_renewal_interval_seconds,
        10
    );
}

#[test]
fn bad_ip_address_is_an_error() {
    let dir = Dir::new();
    assert!(error(&dir, &["--server.address=300.1.1.1"], &[])
        .contains("for server.address (command line)"));
    assert!(error(&dir, &["--eureka.instance.ip-address=x"], &[])
        .contains("eureka.instance.ip-address"));
    let config = config(
        &dir,
        &[
            "--server.address=::1",
            "--eureka.instance.ip-address=10.0.0.1",
        ],
        &[],
    );
    assert_eq!(config.server.socket_addr().to_string(), "[::1]:8761");
    assert_eq!(
        config.instance.ip_address,
        Some(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)))
    );
}

#[test]
fn security_requires_both_name_and_password() {
    let dir = Dir::new();
    let message = error(&dir, &["--spring.security.user.name=admin"], &[]);
    assert!(
        message.contains("spring.security.user.password is not"),
        "{message}"
    );
    let message = error(&dir, &[], &[("SPRING_SECURITY_USER_PASSWORD", "s3cret")]);
    assert!(
        message.contains("(environment variable SPRING_SECURITY_USER_PASSWORD)"),
        "{message}"
    );
    let config = config(
        &dir,
        &["--spring.security.user.name=admin"],
        &[("SPRING_SECURITY_USER_PASSWORD", "s3cret")],
    );
    let auth = config.security.expect("both are set");
    assert_eq!(
        (auth.name.as_str(), auth.password.as_str()),
        ("admin", "s3cret")
    );
}

#[test]
fn security_password_is_not_in_debug_output() {
    let args = [
        "--spring.security.user.name=admin",
        "--spring.security.user.password=s3cret",
    ];
    let config = config(&Dir::new(), &args, &[]);
    let debug = format!("{config:?}");
    assert!(
        debug.contains("admin") && !debug.contains("s3cret"),
        "{debug}"
    );
}

#[test]
fn logging_levels_are_collected() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "logging:\n  level:\n    com.netflix.eureka: WARN\n    heureka_server: debug\n    org:\n      springframework: fatal\n    \"[weird.Name]\": trace\n",
    );
    let config = config(&dir, &[], &[("LOGGING_LEVEL_ROOT", "Info")]);
    let levels: Vec<(&str, &str)> = config
        .logging_levels
        .iter()
        .map(|(t, l)| (t.as_str(), l.as_str()))
        .collect();
    assert_eq!(
        levels,
        [
            ("root", "info"),
            ("com.netflix.eureka", "warn"),
            ("heureka_server", "debug"),
            ("org.springframework", "error"),
            ("weird.Name", "trace"),
        ]
    );
}

#[test]
fn bad_logging_level_is_an_error_naming_key() {
    let message = error(&Dir::new(), &["--logging.level.com.example=loud"], &[]);
    assert!(
        message.starts_with("invalid value 'loud' for logging.level.com.example (command line)"),
        "{message}"
    );
}

#[test]
fn data_size_parses_units() {
    for (text, bytes) in [
        ("1048576", 1_048_576),
        ("512KB", 512 * 1024),
        ("1MB", 1024 * 1024),
        ("2mb", 2 * 1024 * 1024),
        ("10B", 10),
        (" 1GB ", 1 << 30),
    ] {
        assert_eq!(values::parse_data_size(text), Some(bytes), "{text}");
    }
    for text in ["", "MB", "1.5MB", "-1", "0", "1 XB", "99999999999999TB"] {
        assert_eq!(values::parse_data_size(text), None, "{text}");
    }
    let config = config(&Dir::new(), &["--heureka.maxRequestBodySize=512KB"], &[]);
    assert_eq!(config.heureka.max_request_body_bytes, 512 * 1024);
}

#[test]
fn bad_data_size_is_an_error_naming_key() {
    let message = error(&Dir::new(), &["--heureka.max-request-body-size=lots"], &[]);
    assert!(
        message.contains("for heureka.max-request-body-size (command line)"),
        "{message}"
    );
}

#[test]
fn duration_parses_spring_units_and_iso_8601() {
    for (text, duration) in [
        ("20000", Duration::from_secs(20)),
        ("500ms", Duration::from_millis(500)),
        ("20s", Duration::from_secs(20)),
        (" 2M ", Duration::from_secs(120)),
        ("1h", Duration::from_secs(3600)),
        ("1d", Duration::from_secs(86_400)),
        ("10us", Duration::from_micros(10)),
        ("PT30S", Duration::from_secs(30)),
        ("pt1m30s", Duration::from_secs(90)),
        ("PT0.5S", Duration::from_millis(500)),
        ("PT1H", Duration::from_secs(3600)),
    ] {
        assert_eq!(values::parse_duration(text), Some(duration), "{text}");
    }
    for text in [
        "", "s", "0", "0s", "-1", "1.5s", "10 years", "PT", "PTS", "PT1X", "PT-1S",
    ] {
        assert_eq!(values::parse_duration(text), None, "{text}");
    }
}

/// Found by fuzzing config_load: the value's second character was cut in half.
#[test]
fn duration_starting_with_a_multi_byte_character_is_an_error_naming_key() {
    for value in ["pé", "p\u{FFFD}1s", "é", "PTé"] {
        let argument = format!("--heureka.request-body-timeout={value}");
        let message = error(&Dir::new(), &[argument.as_str()], &[]);
        assert!(
            message.contains("heureka.request-body-timeout"),
            "{message}"
        );
    }
}

#[test]
fn connection_limits_bind_from_spring_names() {
    let config = config(
        &Dir::new(),
        &[
            "--server.tomcat.connection-timeout=5000",
            "--server.tomcat.keepAliveTimeout=15s",
            "--server.tomcat.max-connections=100",
            "--server.max-http-request-header-size=16KB",
            "--spring.lifecycle.timeout-per-shutdown-phase=PT5S",
            "--heureka.request-body-timeout=2s",
        ],
        &[],
    );
    let connections = &config.connections;
    assert_eq!(connections.connection_timeout, Duration::from_secs(5));
    assert_eq!(connections.keep_alive_timeout, Duration::from_secs(15));
    assert_eq!(connections.max_connections, 100);
    assert_eq!(connections.max_header_bytes, 16 * 1024);
    assert_eq!(connections.shutdown_grace, Duration::from_secs(5));
    assert_eq!(connections.request_body_timeout, Duration::from_secs(2));
}

#[test]
fn event_stream_limits_bind_from_heureka_events_keys() {
    let config = config(
        &Dir::new(),
        &[
            "--heureka.events.max-streams=10",
            "--heureka.events.maxStreamsPerClient=2",
            "--heureka.events.keep-alive-interval=500ms",
            "--heureka.events.send-timeout=PT2S",
            "--heureka.events.max-stream-age=1h",
        ],
        &[],
    );
    let events = &config.heureka.events;
    assert_eq!(events.max_streams, 10);
    assert_eq!(events.max_streams_per_client, 2);
    assert_eq!(events.keep_alive_interval, Duration::from_millis(500));
    assert_eq!(events.send_timeout, Duration::from_secs(2));
    assert_eq!(events.max_age, Duration::from_secs(3600));
}

#[test]
fn zero_event_stream_limit_is_an_error_naming_key() {
    let dir = Dir::new();
    for argument in [
        "--heureka.events.max-streams=0",
        "--heureka.events.max-streams-per-client=0",
        "--heureka.events.send-timeout=0",
    ] {
        let message = error(&dir, &[argument], &[]);
        let key = argument.trim_start_matches("--").split('=').next().unwrap();
        assert!(message.contains(key), "{message}");
    }
}

#[test]
fn older_header_size_name_applies_unless_the_new_one_is_set() {
    let dir = Dir::new();
    let old_only = config(&dir, &["--server.max-http-header-size=4KB"], &[]);
    assert_eq!(old_only.connections.max_header_bytes, 4 * 1024);
    let both = config(
        &dir,
        &[
            "--server.max-http-header-size=4KB",
            "--server.max-http-request-header-size=32KB",
        ],
        &[],
    );
    assert_eq!(both.connections.max_header_bytes, 32 * 1024);
}

#[test]
fn zero_connection_limit_or_timeout_is_an_error_naming_key() {
    let dir = Dir::new();
    let message = error(&dir, &["--server.tomcat.max-connections=0"], &[]);
    assert!(
        message.contains("server.tomcat.max-connections"),
        "{message}"
    );
    let message = error(&dir, &["--server.tomcat.connection-timeout=0"], &[]);
    assert!(
        message.contains("server.tomcat.connection-timeout"),
        "{message}"
    );
    let message = error(&dir, &["--heureka.request-body-timeout=soon"], &[]);
    assert!(
        message.contains("heureka.request-body-timeout"),
        "{message}"
    );
}

#[test]
fn base_path_must_start_with_slash_and_not_end_with_one() {
    let dir = Dir::new();
    for bad in ["eureka", "/eureka/", "/"] {
        let message = error(&dir, &[&format!("--heureka.base-path={bad}")], &[]);
        assert!(message.contains("heureka.base-path"), "{message}");
    }
    assert_eq!(
        config(&dir, &["--heureka.base-path=/registry/eureka"], &[])
            .heureka
            .base_path,
        "/registry/eureka"
    );
}

#[test]
fn service_urls_must_be_http_and_get_a_trailing_slash() {
    let dir = Dir::new();
    let config = config(
        &dir,
        &["--eureka.client.serviceUrl.zone1=https://a/eureka"],
        &[],
    );
    let expected = BTreeMap::from([("zone1".to_owned(), vec!["https://a/eureka/".to_owned()])]);
    assert_eq!(config.client.service_url, expected);
    let message = error(
        &dir,
        &["--eureka.client.service-url.defaultZone=peer1:8761"],
        &[],
    );
    assert!(
        message.contains("eureka.client.service-url.defaultZone (command line)"),
        "{message}"
    );
}

#[test]
fn bare_flag_means_true() {
    let config = config(&Dir::new(), &["--heureka.legacy-lease-expiry"], &[]);
    assert!(config.heureka.legacy_lease_expiry);
}

#[test]
fn argument_without_dashes_is_an_error() {
    let message = error(&Dir::new(), &["server.port=1"], &[]);
    assert!(
        message.contains("unexpected argument 'server.port=1'"),
        "{message}"
    );
    assert!(error(&Dir::new(), &["--=1"], &[]).contains("missing key name"));
}

#[test]
fn help_and_version_are_recognised() {
    let dir = Dir::new();
    assert!(matches!(
        load_in(&dir.path, &["--server.port=x", "-h"], &[]),
        Ok(Loaded::Help(_))
    ));
    assert!(matches!(
        load_in(&dir.path, &["--help"], &[]),
        Ok(Loaded::Help(_))
    ));
    match load_in(&dir.path, &["-V"], &[]) {
        Ok(Loaded::Version(text)) => assert!(text.starts_with("heureka ")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn help_lists_every_key_with_its_default() {
    let Ok(Loaded::Help(text)) = load_in(&Dir::new().path, &["--help"], &[]) else {
        panic!("no help");
    };
    // Refused keys are not settings: setting one is an error.
    for key in keys::KEYS.iter().filter(|key| !key.is_refused()) {
        let line = text
            .lines()
            .find(|line| line.trim_start().starts_with(&format!("{} ", key.name)))
            .unwrap_or_else(|| panic!("{} missing from --help", key.name));
        assert!(line.contains(key.default), "{line}");
    }
}

#[test]
fn every_key_default_binds() {
    // Config::default() binds every table default. The binder cannot read a key missing from
    // keys::KEYS: it reads keys only through their table entries.
    let _ = Config::default();
}

#[test]
fn sources_list_the_files_read() {
    let dir = Dir::new();
    dir.write("application.yml", "server.port: 1\n");
    dir.write("config/application.properties", "server.port=2\n");
    let config = config(&dir, &["--a=b"], &[("SERVER_PORT", "3")]);
    assert_eq!(
        config.sources,
        [
            format!("file {}", dir.path.join("application.yml").display()),
            format!(
                "file {}",
                dir.path.join("config/application.properties").display()
            ),
            "environment (1 variable)".to_owned(),
            "command line (1 argument)".to_owned(),
        ]
    );
}

#[test]
fn malformed_yaml_is_an_error_naming_the_file() {
    let dir = Dir::new();
    dir.write("application.yml", "server:\n  port: [1\n");
    let message = error(&dir, &[], &[]);
    assert!(
        message.starts_with("cannot read ") && message.contains("application.yml"),
        "{message}"
    );
}

#[test]
fn realistic_spring_eureka_server_yml_loads() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        r#"server:
  port: ${PORT:8761}

spring:
  application:
    name: eureka-server
  security:
    user:
      name: ${EUREKA_USER:eureka}
      password: ${EUREKA_PASSWORD:changeme}

eureka:
  instance:
    hostname: localhost
    prefer-ip-address: false
    instance-id: ${spring.cloud.client.hostname}:${spring.application.name}:${server.port}
  client:
    register-with-eureka: false
    fetch-registry: false
    serviceUrl:
      defaultZone: http://${spring.security.user.name}:${spring.security.user.password}@${eureka.instance.hostname}:${server.port}/eureka/
  server:
    enable-self-preservation: false
    eviction-interval-timer-in-ms: 5000
    renewal-percent-threshold: 0.49
    response-cache-update-interval-ms: 3000
    wait-time-in-ms-when-sync-empty: 0
    peer-node-read-timeout-ms: 1000
    use-read-only-response-cache: false

management:
  endpoints:
    web:
      exposure:
        include: "*"

logging:
  level:
    com.netflix.eureka: OFF
    com.netflix.discovery: OFF
"#,
    );
    let config = config(
        &dir,
        &[],
        &[("HOSTNAME", "box1"), ("EUREKA_PASSWORD", "pw")],
    );
    assert_eq!(config.server.port, 8761);
    assert_eq!(config.application_name, "eureka-server");
    let auth = config.security.clone().expect("credentials");
    assert_eq!(
        (auth.name.as_str(), auth.password.as_str()),
        ("eureka", "pw")
    );
    assert_eq!(
        config.instance.instance_id.as_deref(),
        Some("box1:eureka-server:8761")
    );
    assert!(!config.client.register_with_eureka && !config.client.fetch_registry);
    assert_eq!(
        config.client.service_url,
        zone(&["http://eureka:pw@localhost:8761/eureka/"])
    );
    assert!(!config.eureka_server.enable_self_preservation);
    assert_eq!(config.eureka_server.eviction_interval_timer_in_ms, 5000);
    assert_eq!(config.eureka_server.renewal_percent_threshold, 0.49);
    assert_eq!(config.eureka_server.wait_time_in_ms_when_sync_empty, 0);
    assert_eq!(config.logging_levels.len(), 2);
}

#[test]
fn dashboard_defaults_to_the_root_with_springs_labels() {
    let dashboard = Config::default().dashboard;
    assert!(dashboard.enabled);
    assert_eq!(dashboard.path, "/");
    assert_eq!(dashboard.environment, "test");
    assert_eq!(dashboard.datacenter, "default");
}

#[test]
fn dashboard_path_loses_its_trailing_slash() {
    let dir = Dir::new();
    let config = config(&dir, &["--eureka.dashboard.path=/console/"], &[]);
    assert_eq!(config.dashboard.path, "/console");
}

#[test]
fn dashboard_path_must_start_with_a_slash() {
    let dir = Dir::new();
    let message = error(&dir, &["--eureka.dashboard.path=console"], &[]);
    assert!(message.contains("eureka.dashboard.path"), "{message}");
}

#[test]
fn webhooks_bind_from_a_yaml_list_in_index_order() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "heureka:\n  webhooks:\n    - url: http://a.example/hook\n      events: evicted, self-preservation-entered\n    - url: https://b.example/hook\n",
    );
    let webhooks = config(&dir, &[], &[]).heureka.webhooks;
    assert_eq!(
        webhooks,
        vec![
            WebhookConfig {
                url: "http://a.example/hook".into(),
                events: vec!["evicted".into(), "self-preservation-entered".into()],
            },
            WebhookConfig {
                url: "https://b.example/hook".into(),
                events: Vec::new(),
            },
        ]
    );
}

#[test]
fn actuator_endpoints_are_all_exposed_by_default() {
    let dir = Dir::new();
    let management = config(&dir, &[], &[]).management;
    assert_eq!(
        management.exposed,
        Exposure {
            health: true,
            info: true,
            prometheus: true
        }
    );
    assert_eq!(management.base_path, "/actuator");
    assert_eq!(management.show_details, ShowDetails::WhenAuthorized);
    assert!(!management.access_log);
}

#[test]
fn exposure_include_and_exclude_combine_as_in_spring() {
    let dir = Dir::new();
    let exposed = config(
        &dir,
        &[
            "--management.endpoints.web.exposure.include=*",
            "--management.endpoints.web.exposure.exclude=info",
        ],
        &[],
    )
    .management
    .exposed;
    assert_eq!(
        (exposed.health, exposed.info, exposed.prometheus),
        (true, false, true)
    );
}

#[test]
fn webhook_with_an_unknown_event_type_is_an_error_naming_the_key() {
    let dir = Dir::new();
    let message = error(
        &dir,
        &[
            "--heureka.webhooks[0].url=http://a.example/hook",
            "--heureka.webhooks[0].events=evicted,exploded",
        ],
        &[],
    );
    assert!(message.contains("heureka.webhooks[0].events"), "{message}");
    assert!(message.contains("exploded"), "{message}");
}

#[test]
fn webhook_without_a_url_is_an_error() {
    let dir = Dir::new();
    let message = error(&dir, &["--heureka.webhooks[1].events=evicted"], &[]);
    assert!(message.contains("heureka.webhooks[1]"), "{message}");
}

#[test]
fn unknown_webhook_property_is_an_error() {
    let dir = Dir::new();
    let message = error(&dir, &["--heureka.webhooks[0].secret=x"], &[]);
    assert!(message.contains("heureka.webhooks[0].secret"), "{message}");
}

#[test]
fn either_spring_boot_name_turns_the_prometheus_export_off() {
    let dir = Dir::new();
    for key in [
        "--management.prometheus.metrics.export.enabled=false",
        "--management.metrics.export.prometheus.enabled=false",
    ] {
        assert!(
            !config(&dir, &[key], &[]).management.exposed.prometheus,
            "{key}"
        );
    }
}

#[test]
fn tomcats_access_log_key_turns_the_access_log_on() {
    let dir = Dir::new();
    let env = [("SERVER_TOMCAT_ACCESSLOG_ENABLED", "true")];
    assert!(config(&dir, &[], &env).management.access_log);
    assert!(
        config(&dir, &["--heureka.access-log=true"], &[])
            .management
            .access_log
    );
}

#[test]
fn an_unknown_show_details_value_is_an_error_naming_the_key() {
    let dir = Dir::new();
    let message = error(
        &dir,
        &["--management.endpoint.health.show-details=sometimes"],
        &[],
    );
    assert!(
        message.contains("management.endpoint.health.show-details"),
        "{message}"
    );
}

// === heureka.limits.* and eureka.server.rate-limiter-* ===

#[test]
fn limits_default_to_the_documented_bounds() {
    let limits = Config::default().heureka.limits;
    assert_eq!(limits.max_name_length, 256);
    assert_eq!(limits.max_metadata_entries, 128);
    assert_eq!(limits.max_metadata_bytes, 32 * 1024);
    assert_eq!(limits.max_lease_duration, Duration::from_secs(3600));
    assert_eq!(limits.max_instances, 2_000_000);
}

#[test]
fn limits_bind_from_their_keys_in_any_relaxed_form() {
    let config = config(
        &Dir::new(),
        &[
            "--heureka.limits.max-name-length=100",
            "--heureka.limits.maxMetadataEntries=4",
            "--heureka.limits.max-metadata-bytes=1KB",
            "--heureka.limits.max-lease-duration=PT2M",
            "--heureka.limits.max-instances=10",
        ],
        &[],
    );
    let limits = &config.heureka.limits;
    assert_eq!(limits.max_name_length, 100);
    assert_eq!(limits.max_metadata_entries, 4);
    assert_eq!(limits.max_metadata_bytes, 1024);
    assert_eq!(limits.max_lease_duration, Duration::from_secs(120));
    assert_eq!(limits.max_instances, 10);
    let env = config_env(&[("HEUREKA_LIMITS_MAXINSTANCES", "7")]);
    assert_eq!(env.heureka.limits.max_instances, 7);
}

fn config_env(env: &[(&str, &str)]) -> Config {
    config(&Dir::new(), &[], env)
}

#[test]
fn a_bare_lease_duration_is_seconds_and_must_be_whole_and_positive() {
    let config = config(
        &Dir::new(),
        &["--heureka.limits.max-lease-duration=90"],
        &[],
    );
    assert_eq!(
        config.heureka.limits.max_lease_duration,
        Duration::from_secs(90)
    );
    for bad in ["0", "500ms", "1.5s", "soon"] {
        let argument = format!("--heureka.limits.max-lease-duration={bad}");
        let message = error(&Dir::new(), &[argument.as_str()], &[]);
        assert!(
            message.contains("heureka.limits.max-lease-duration"),
            "{message}"
        );
    }
}

#[test]
fn a_zero_limit_is_an_error_naming_its_key() {
    for key in [
        "heureka.limits.max-name-length",
        "heureka.limits.max-metadata-entries",
        "heureka.limits.max-metadata-bytes",
        "heureka.limits.max-instances",
        "eureka.server.rate-limiter-burst-size",
    ] {
        let argument = format!("--{key}=0");
        let message = error(&Dir::new(), &[argument.as_str()], &[]);
        assert!(message.contains(key), "{message}");
    }
}

#[test]
fn names_too_long_to_heartbeat_within_the_header_limit_are_a_one_line_start_up_error() {
    let message = error(
        &Dir::new(),
        &[
            "--heureka.limits.max-name-length=1100",
            "--server.max-http-request-header-size=8KB",
        ],
        &[],
    );
    assert!(!message.contains('\n'), "{message}");
    assert!(
        message.contains("heureka.limits.max-name-length")
            && message.contains("server.max-http-request-header-size"),
        "{message}"
    );
    // The same names fit a larger header limit.
    config(
        &Dir::new(),
        &[
            "--heureka.limits.max-name-length=1100",
            "--server.max-http-request-header-size=16KB",
        ],
        &[],
    );
    // And the default names do not fit a header limit too small for them.
    let message = error(
        &Dir::new(),
        &["--server.max-http-request-header-size=2KB"],
        &[],
    );
    assert!(
        message.contains("heureka.limits.max-name-length"),
        "{message}"
    );
}

#[test]
fn rate_limiter_keys_default_to_eurekas() {
    let limiter = Config::default().eureka_server.rate_limiter;
    assert!(!limiter.enabled);
    assert!(!limiter.throttle_standard_clients);
    assert!(limiter.privileged_clients.is_empty());
    assert_eq!(limiter.burst_size, 10);
    assert_eq!(limiter.registry_fetch_average_rate, 500);
    assert_eq!(limiter.full_fetch_average_rate, 100);
}

#[test]
fn rate_limiter_keys_bind_including_a_yaml_list_of_privileged_clients() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "eureka.server:\n  rateLimiterEnabled: true\n  rate-limiter-throttle-standard-clients: true\n  rate-limiter-privileged-clients: [gateway, batch]\n  rate-limiter-burst-size: 3\n  rate-limiter-registry-fetch-average-rate: 7\n  rate-limiter-full-fetch-average-rate: 2\n",
    );
    let limiter = config(&dir, &[], &[]).eureka_server.rate_limiter;
    assert!(limiter.enabled);
    assert!(limiter.throttle_standard_clients);
    assert_eq!(limiter.privileged_clients, ["gateway", "batch"]);
    assert_eq!(limiter.burst_size, 3);
    assert_eq!(limiter.registry_fetch_average_rate, 7);
    assert_eq!(limiter.full_fetch_average_rate, 2);
}

#[test]
fn help_lists_the_limits_and_no_longer_calls_the_rate_limiter_ignored() {
    let Ok(Loaded::Help(text)) = load_in(&Dir::new().path, &["--help"], &[]) else {
        panic!("--help prints help");
    };
    for key in [
        "heureka.limits.max-name-length",
        "heureka.limits.max-metadata-entries",
        "heureka.limits.max-metadata-bytes",
        "heureka.limits.max-lease-duration",
        "heureka.limits.max-instances",
        "eureka.server.rate-limiter-enabled",
        "eureka.server.rate-limiter-privileged-clients",
    ] {
        assert!(text.contains(key), "{key}");
    }
    assert!(!text.contains("rate limiter) are accepted and ignored"));
}

#[test]
fn replication_is_accepted_only_from_peers_by_default() {
    let replication = config(&Dir::new(), &[], &[]).heureka.replication;
    assert!(replication.peers_only);
    assert!(replication.allowed_addresses.is_empty());
    assert_eq!(replication.peer_user, None);
}

#[test]
fn peers_only_and_allowed_addresses_bind_from_every_source() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "heureka:\n  replication:\n    allowed-addresses:\n      - 10.0.0.0/8\n      - fd00::7\n",
    );
    let config = config(&dir, &["--heureka.replication.peersOnly=false"], &[]);
    let replication = &config.heureka.replication;
    assert!(!replication.peers_only);
    let allowed: Vec<String> = replication
        .allowed_addresses
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(allowed, ["10.0.0.0/8", "fd00::7/128"]);
    let config = super::tests::config(
        &Dir::new(),
        &[],
        &[
            (
                "HEUREKA_REPLICATION_ALLOWEDADDRESSES",
                "192.0.2.7, 127.0.0.0/8",
            ),
            ("HEUREKA_REPLICATION_PEERSONLY", "true"),
        ],
    );
    assert_eq!(config.heureka.replication.allowed_addresses.len(), 2);
    assert!(config.heureka.replication.peers_only);
}

#[test]
fn a_malformed_allowed_address_is_an_error_naming_the_key() {
    let message = error(
        &Dir::new(),
        &["--heureka.replication.allowed-addresses=10.0.0.0/33"],
        &[],
    );
    assert!(
        message.contains("heureka.replication.allowed-addresses") && message.contains("CIDR"),
        "{message}"
    );
}

#[test]
fn the_peer_user_needs_both_name_and_password() {
    let dir = Dir::new();
    let message = error(&dir, &["--heureka.replication.peer-user.name=peer"], &[]);
    assert!(
        message.contains("heureka.replication.peer-user.password is not"),
        "{message}"
    );
    let config = config(
        &dir,
        &[
            "--heureka.replication.peer-user.name=peer",
            "--heureka.replication.peer-user.password=only-peers-know",
        ],
        &[],
    );
    let debug = format!("{:?}", config.heureka.replication);
    assert!(!debug.contains("only-peers-know"), "{debug}");
    let peer = config.heureka.replication.peer_user.expect("both are set");
    assert_eq!(
        (peer.name.as_str(), peer.password.as_str()),
        ("peer", "only-peers-know")
    );
}
#[test]
fn allowed_origins_bind_from_a_comma_list_normalised() {
    let dir = Dir::new();
    let config = config(
        &dir,
        &["--heureka.security.allowed-origins=https://UI.example.com/, http://localhost:3000"],
        &[],
    );
    assert_eq!(
        config.heureka.allowed_origins,
        ["https://ui.example.com:443", "http://localhost:3000"]
    );
}

#[test]
fn allowed_origins_bind_from_the_environment_and_a_yaml_list() {
    let dir = Dir::new();
    let from_env = config(
        &dir,
        &[],
        &[("HEUREKA_SECURITY_ALLOWEDORIGINS", "http://ops.example:8080")],
    );
    assert_eq!(
        from_env.heureka.allowed_origins,
        ["http://ops.example:8080"]
    );
    dir.write(
        "application.yml",
        "heureka:\n  security:\n    allowed-origins:\n      - https://a.example\n      - https://b.example:8443\n",
    );
    assert_eq!(
        config(&dir, &[], &[]).heureka.allowed_origins,
        ["https://a.example:443", "https://b.example:8443"]
    );
}

#[test]
fn allowed_hosts_bind_lower_case_and_a_url_or_port_is_an_error_naming_the_key() {
    let dir = Dir::new();
    let config = config(
        &dir,
        &["--heureka.security.allowed-hosts=Eureka.Example.com, *.svc.cluster.local,*"],
        &[],
    );
    assert_eq!(
        config.heureka.allowed_hosts,
        ["eureka.example.com", "*.svc.cluster.local", "*"]
    );
    for bad in [
        "http://eureka.example.com",
        "eureka.example.com:8761",
        "*eureka",
    ] {
        let message = error(
            &dir,
            &[&format!("--heureka.security.allowed-hosts={bad}")],
            &[],
        );
        assert!(
            message.contains("heureka.security.allowed-hosts"),
            "{message}"
        );
    }
}

#[test]
fn health_checks_probe_private_networks_by_default_and_a_bad_block_is_an_error() {
    let dir = Dir::new();
    let allowed = |config: &Config, ip: &str| {
        let ip = ip.parse().unwrap();
        config
            .heureka
            .health_checks
            .allowed_networks
            .iter()
            .any(|range| range.contains(ip))
    };
    let default = config(&dir, &[], &[]);
    for ip in [
        "127.0.0.1",
        "10.1.2.3",
        "172.31.0.1",
        "192.168.1.1",
        "100.64.0.1",
        "::1",
        "fd00::7",
    ] {
        assert!(allowed(&default, ip), "{ip}");
    }
    for ip in [
        "169.254.169.254",
        "fe80::1",
        "8.8.8.8",
        "192.0.2.2",
        "0.0.0.0",
        "2001:db8::1",
    ] {
        assert!(!allowed(&default, ip), "{ip}");
    }
    let any = config(
        &dir,
        &["--heureka.health-checks.allowed-networks=0.0.0.0/0,::/0"],
        &[],
    );
    for ip in ["169.254.169.254", "8.8.8.8", "fe80::1", "2001:db8::1"] {
        assert!(allowed(&any, ip), "{ip}");
    }
    let message = error(
        &dir,
        &["--heureka.health-checks.allowed-networks=10.0.0.0/33"],
        &[],
    );
    assert!(
        message.contains("heureka.health-checks.allowed-networks"),
        "{message}"
    );
}

#[test]
fn an_allowed_origin_that_is_no_origin_is_an_error_naming_the_key() {
    let dir = Dir::new();
    for bad in ["*", "null", "https://ui.example.com/app", "ui.example.com"] {
        let message = error(
            &dir,
            &[&format!("--heureka.security.allowed-origins={bad}")],
            &[],
        );
        assert!(
            message.contains("heureka.security.allowed-origins"),
            "{message}"
        );
    }
}
