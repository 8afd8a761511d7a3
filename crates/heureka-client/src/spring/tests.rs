//! Binding from Spring's keys: defaults, relaxed names, files, the environment, and the
//! errors that name a key. The own address comes from a stand-in lookup, so that no test
//! depends on this machine's interfaces.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use heureka_core::InstanceStatus;

use super::bind::HostLookup;
use super::keys::{map_prefixes, KEYS};
use super::values::DEFAULT_SERVICE_URL;
use super::*;
use crate::address::{HostInfo, InetSettings};
use crate::config::InstanceUrls;
use heureka_testkit::TempDir as Dir;

fn box1(_: &InetSettings) -> HostInfo {
    HostInfo {
        hostname: "box1".to_owned(),
        ip_address: "10.0.0.7".to_owned(),
    }
}

fn no_lookup(_: &InetSettings) -> HostInfo {
    panic!("the host lookup was not needed")
}

fn try_spring(dir: &Dir, args: &[&str], env: &[(&str, &str)]) -> Result<ClientConfig, ConfigError> {
    let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
    let env: BTreeMap<String, String> = env
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    let env = |name: &str| env.get(name).cloned();
    let properties = load_spring(&args, &env, &dir.path)?;
    bind(&properties, &env, &box1)
}

fn spring(dir: &Dir, args: &[&str], env: &[(&str, &str)]) -> ClientConfig {
    try_spring(dir, args, env).unwrap_or_else(|error| panic!("{error}"))
}

fn pairs_with(pairs: &[(&str, &str)], lookup: HostLookup<'_>) -> Result<ClientConfig, ConfigError> {
    let mut properties = Properties::new(names());
    properties.overlay(
        pairs
            .iter()
            .map(|(name, value)| Property {
                name: name.to_string(),
                value: value.to_string(),
                origin: Origin::Code,
            })
            .collect(),
    );
    bind(&properties, &|_| None, lookup)
}

fn pairs(pairs: &[(&str, &str)]) -> ClientConfig {
    pairs_with(pairs, &box1).unwrap_or_else(|error| panic!("{error}"))
}

fn error(pairs: &[(&str, &str)]) -> String {
    match pairs_with(pairs, &box1) {
        Ok(config) => panic!("expected an error, got {config:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn defaults_are_spring_clouds() {
    let config = pairs(&[]);
    assert_eq!(config.app_name, "unknown");
    assert_eq!(config.instance_id, "box1");
    assert_eq!(config.host_name, "box1");
    assert_eq!(config.ip_addr, "10.0.0.7");
    assert_eq!((config.port, config.port_enabled), (8080, true));
    assert_eq!(
        (config.secure_port, config.secure_port_enabled),
        (443, false)
    );
    assert_eq!(config.lease_renewal_interval, Duration::from_secs(30));
    assert_eq!(config.lease_duration, Duration::from_secs(90));
    assert_eq!(config.registry_fetch_interval, Duration::from_secs(30));
    assert_eq!(config.request_timeout, Duration::from_secs(8));
    assert_eq!(config.connect_timeout, Duration::from_secs(5));
    assert_eq!(config.region, "us-east-1");
    assert!(config.availability_zones.is_empty());
    assert!(config.fetch_remote_regions_registry.is_empty());
    assert!(config.prefer_same_zone_eureka);
    assert!(config.register_with_eureka && config.fetch_registry);
    assert!(config.filter_only_up_instances);
    assert!(!config.healthcheck_enabled);
    assert!(!config.prefer_ip_address);
    assert_eq!(
        config.service_url,
        BTreeMap::from([(
            DEFAULT_ZONE.to_owned(),
            vec![DEFAULT_SERVICE_URL.to_owned()]
        )])
    );
    assert_eq!(config.ordered_service_urls(), [DEFAULT_SERVICE_URL]);
    assert_eq!(
        config.metadata,
        BTreeMap::from([("management.port".to_owned(), "8080".to_owned())])
    );
    assert_eq!(
        (
            config.vip_address.as_str(),
            config.secure_vip_address.as_str()
        ),
        ("unknown", "unknown")
    );
    assert_eq!(config.urls, InstanceUrls::default());
    assert_eq!(config.initial_status, InstanceStatus::Up);
    assert!(!config.instance_enabled_onit);
    assert_eq!(config.inet, InetSettings::default());
}

#[test]
fn instance_id_is_host_app_and_port() {
    let config = pairs(&[
        ("spring.application.name", "orders"),
        ("server.port", "9001"),
    ]);
    assert_eq!(config.instance_id, "box1:orders:9001");
    assert_eq!(config.app_name, "orders");
    assert_eq!(config.vip_address, "orders");
    assert_eq!(config.port, 9001);
    assert_eq!(config.metadata["management.port"], "9001");
}

#[test]
fn instance_id_index_is_spring_application_instance_id_first() {
    let config = pairs(&[
        ("spring.application.name", "orders"),
        ("server.port", "9001"),
        ("spring.application.instance_id", "blue"),
    ]);
    assert_eq!(config.instance_id, "box1:orders:blue");
}

#[test]
fn instance_id_can_be_built_from_spring_cloud_client_placeholders() {
    let config = pairs(&[
        ("spring.application.name", "orders"),
        (
            "eureka.instance.instance-id",
            "${spring.cloud.client.ip-address}:${spring.application.name}:${server.port:1}",
        ),
    ]);
    assert_eq!(config.instance_id, "10.0.0.7:orders:1");
}

#[test]
fn prefer_ip_address_registers_the_ip_as_host_name() {
    let config = pairs(&[("eureka.instance.prefer-ip-address", "true")]);
    assert_eq!(config.host_name, "10.0.0.7");
    assert_eq!(config.ip_addr, "10.0.0.7");
    // The instance id keeps the host name, as Spring's does.
    assert_eq!(config.instance_id, "box1");
}

#[test]
fn configured_host_address_and_id_need_no_lookup() {
    let config = pairs_with(
        &[
            ("eureka.instance.hostname", "orders.example"),
            ("eureka.instance.ip-address", "192.0.2.1"),
            ("eureka.instance.instance-id", "orders-1"),
        ],
        &no_lookup,
    )
    .unwrap();
    assert_eq!(
        (
            config.host_name.as_str(),
            config.ip_addr.as_str(),
            config.instance_id.as_str()
        ),
        ("orders.example", "192.0.2.1", "orders-1")
    );
}

#[test]
fn appname_and_virtual_host_names_override_the_application_name() {
    let config = pairs(&[
        ("spring.application.name", "orders"),
        ("eureka.instance.appname", "ORDERS-API"),
        ("eureka.instance.virtual-host-name", "orders.vip"),
        ("eureka.instance.secure-virtual-host-name", "orders.svip"),
    ]);
    assert_eq!(config.app_name, "ORDERS-API");
    assert_eq!(config.vip_address, "orders.vip");
    assert_eq!(config.secure_vip_address, "orders.svip");
}

#[test]
fn relaxed_names_bind_the_same_key() {
    for name in [
        "eureka.instance.preferIpAddress",
        "eureka.instance.prefer-ip-address",
        "eureka.instance.prefer_ip_address",
        "EUREKA.INSTANCE.PREFER-IP-ADDRESS",
    ] {
        assert!(pairs(&[(name, "true")]).prefer_ip_address, "{name}");
    }
    let config = pairs(&[(
        "eureka.client.serviceUrl.defaultZone",
        "http://a:8761/eureka",
    )]);
    assert_eq!(config.ordered_service_urls(), ["http://a:8761/eureka/"]);
}

#[test]
fn service_urls_are_comma_lists_given_a_trailing_slash() {
    let config = pairs(&[(
        "eureka.client.service-url.defaultZone",
        " http://a:8761/eureka , https://b/eureka/ ",
    )]);
    assert_eq!(
        config.ordered_service_urls(),
        ["http://a:8761/eureka/", "https://b/eureka/"]
    );
}

#[test]
fn metadata_map_keeps_dotted_keys_and_a_configured_management_port() {
    let config = pairs(&[
        ("eureka.instance.metadata-map.zone", "zone1"),
        ("eureka.instance.metadata-map.management.port", "9999"),
        ("eureka.instance.metadataMap.Team", "interop"),
    ]);
    assert_eq!(
        config.metadata,
        BTreeMap::from([
            ("Team".to_owned(), "interop".to_owned()),
            ("management.port".to_owned(), "9999".to_owned()),
            ("zone".to_owned(), "zone1".to_owned()),
        ])
    );
}

#[test]
fn management_server_port_is_the_management_port() {
    let config = pairs(&[("server.port", "8080"), ("management.server.port", "8081")]);
    assert_eq!(config.metadata["management.port"], "8081");
    assert_eq!(config.urls.management_port, Some(8081));
}

#[test]
fn enabling_the_secure_port_moves_the_server_port_there() {
    let config = pairs(&[
        ("server.port", "8443"),
        ("eureka.instance.secure-port-enabled", "true"),
    ]);
    assert_eq!(
        (config.secure_port, config.secure_port_enabled),
        (8443, true)
    );
    let explicit = pairs(&[
        ("eureka.instance.secure-port-enabled", "true"),
        ("eureka.instance.secure-port", "9443"),
        ("eureka.instance.non-secure-port-enabled", "false"),
    ]);
    assert_eq!(explicit.secure_port, 9443);
    assert!(!explicit.port_enabled);
}

#[test]
fn non_secure_port_overrides_server_port() {
    let config = pairs(&[
        ("server.port", "8080"),
        ("eureka.instance.non-secure-port", "80"),
    ]);
    assert_eq!(config.port, 80);
    assert_eq!(config.instance_id, "box1:8080");
}

#[test]
fn intervals_and_timeouts_are_seconds() {
    let config = pairs(&[
        ("eureka.instance.lease-renewal-interval-in-seconds", "5"),
        ("eureka.instance.lease-expiration-duration-in-seconds", "15"),
        ("eureka.client.registry-fetch-interval-seconds", "10"),
        ("eureka.client.eureka-server-read-timeout-seconds", "3"),
        ("eureka.client.eureka-server-connect-timeout-seconds", "2"),
    ]);
    assert_eq!(config.lease_renewal_interval, Duration::from_secs(5));
    assert_eq!(config.lease_duration, Duration::from_secs(15));
    assert_eq!(config.registry_fetch_interval, Duration::from_secs(10));
    assert_eq!(config.request_timeout, Duration::from_secs(3));
    assert_eq!(config.connect_timeout, Duration::from_secs(2));
}

#[test]
fn inetutils_settings_bind() {
    let config = pairs(&[
        (
            "spring.cloud.inetutils.preferred-networks",
            "192.168, 10\\.0\\..*",
        ),
        ("spring.cloud.inetutils.ignoredInterfaces[0]", "docker0"),
        ("spring.cloud.inetutils.ignoredInterfaces[1]", "veth.*"),
        (
            "spring.cloud.inetutils.use-only-site-local-interfaces",
            "true",
        ),
        ("spring.cloud.inetutils.default-hostname", "fallback"),
        ("spring.cloud.inetutils.default-ip-address", "192.0.2.9"),
    ]);
    assert_eq!(config.inet.preferred_networks, ["192.168", "10\\.0\\..*"]);
    assert_eq!(config.inet.ignored_interfaces, ["docker0", "veth.*"]);
    assert!(config.inet.use_only_site_local_interfaces);
    assert_eq!(config.inet.default_hostname, "fallback");
    assert_eq!(config.inet.default_ip_address, "192.0.2.9");
}

#[test]
fn the_lookup_is_given_the_inetutils_settings() {
    let lookup = |settings: &InetSettings| HostInfo {
        hostname: settings.default_hostname.clone(),
        ip_address: settings.ignored_interfaces.join(","),
    };
    let config = pairs_with(
        &[
            ("spring.cloud.inetutils.default-hostname", "seen"),
            ("spring.cloud.inetutils.ignored-interfaces", "eth9"),
        ],
        &lookup,
    )
    .unwrap();
    assert_eq!(
        (config.host_name.as_str(), config.ip_addr.as_str()),
        ("seen", "eth9")
    );
}

#[test]
fn initial_status_takes_eurekas_names() {
    let config = pairs(&[("eureka.instance.initial-status", "out_of_service")]);
    assert_eq!(config.initial_status, InstanceStatus::OutOfService);
    let message = error(&[("eureka.instance.initial-status", "READY")]);
    assert!(
        message.contains("eureka.instance.initial-status (set in code)"),
        "{message}"
    );
}

#[test]
fn bad_values_are_errors_naming_key_and_source() {
    for (key, value) in [
        ("eureka.instance.lease-renewal-interval-in-seconds", "0"),
        ("eureka.client.registry-fetch-interval-seconds", "soon"),
        ("eureka.client.service-url.defaultZone", "peer1:8761"),
        ("server.port", "70000"),
        ("eureka.instance.prefer-ip-address", "maybe"),
        ("spring.cloud.inetutils.ignored-interfaces", "eth["),
    ] {
        let message = error(&[(key, value)]);
        assert!(
            message.contains(&format!("for {key} (set in code)")),
            "{key}: {message}"
        );
    }
}

#[test]
fn a_spring_client_application_yml_binds() {
    // The interop Spring client's own file (interop/java/spring-client).
    let dir = Dir::new();
    dir.write(
        "application.yml",
        r#"spring.application.name: spring-demo
server.port: 8080
eureka:
  client:
    service-url:
      defaultZone: "http://127.0.0.1:8761/eureka/"
    registry-fetch-interval-seconds: 1
    initial-instance-info-replication-interval-seconds: 1
  instance:
    lease-renewal-interval-in-seconds: 1
    lease-expiration-duration-in-seconds: 3
    prefer-ip-address: true
    metadata-map:
      zone: zone1
      team: interop
"#,
    );
    let config = spring(&dir, &[], &[]);
    assert_eq!(config.app_name, "spring-demo");
    assert_eq!(config.instance_id, "box1:spring-demo:8080");
    assert_eq!(config.host_name, "10.0.0.7");
    assert_eq!(
        config.ordered_service_urls(),
        ["http://127.0.0.1:8761/eureka/"]
    );
    assert_eq!(config.registry_fetch_interval, Duration::from_secs(1));
    assert_eq!(config.lease_renewal_interval, Duration::from_secs(1));
    assert_eq!(config.lease_duration, Duration::from_secs(3));
    assert_eq!(config.metadata["zone"], "zone1");
    assert_eq!(config.metadata["team"], "interop");
    assert_eq!(config.own_zone(), "zone1");
}

#[test]
fn command_line_beats_environment_beats_files() {
    let dir = Dir::new();
    dir.write(
        "application.properties",
        "server.port=1000\nspring.application.name=file\n",
    );
    let env = [("SERVER_PORT", "2000"), ("SPRING_APPLICATION_NAME", "env")];
    let config = spring(&dir, &["positional", "--server.port=3000"], &env);
    assert_eq!(config.port, 3000);
    assert_eq!(config.app_name, "env");
}

#[test]
fn environment_variables_bind_in_relaxed_form() {
    let dir = Dir::new();
    let env = [
        (
            "EUREKA_CLIENT_SERVICEURL_DEFAULTZONE",
            "http://peer1:8761/eureka,http://peer2:8761/eureka",
        ),
        ("EUREKA_INSTANCE_PREFER_IP_ADDRESS", "true"),
        ("EUREKA_INSTANCE_METADATAMAP_ZONE", "zone2"),
        ("EUREKA_CLIENT_REGISTERWITHEUREKA", "false"),
    ];
    let config = spring(&dir, &[], &env);
    assert_eq!(
        config.service_url[DEFAULT_ZONE],
        ["http://peer1:8761/eureka/", "http://peer2:8761/eureka/"]
    );
    assert!(config.prefer_ip_address);
    assert_eq!(config.metadata["zone"], "zone2");
    assert!(!config.register_with_eureka);
}

#[test]
fn environment_gives_the_zones_of_the_configured_region() {
    let dir = Dir::new();
    dir.write("application.yml", "eureka.client.region: eu-west-1\n");
    let env = [
        ("EUREKA_CLIENT_AVAILABILITYZONES_EU_WEST_1", "z1,z2"),
        ("EUREKA_CLIENT_SERVICEURL_Z1", "http://one/eureka/"),
        ("EUREKA_CLIENT_SERVICEURL_Z2", "http://two/eureka/"),
    ];
    let config = spring(&dir, &[], &env);
    assert_eq!(config.zones(), ["z1", "z2"]);
    assert_eq!(
        config.ordered_service_urls(),
        ["http://one/eureka/", "http://two/eureka/"]
    );
}

#[test]
fn remote_regions_to_fetch_are_a_comma_list_in_order() {
    let config = pairs(&[(
        "eureka.client.fetch-remote-regions-registry",
        " us-west-2, eu-west-1 ,",
    )]);
    assert_eq!(
        config.fetch_remote_regions_registry,
        ["us-west-2", "eu-west-1"]
    );
}

#[test]
fn environment_gives_the_zones_of_the_remote_regions_fetched() {
    let dir = Dir::new();
    let env = [
        ("EUREKA_CLIENT_FETCHREMOTEREGIONSREGISTRY", "eu-west"),
        (
            "EUREKA_CLIENT_AVAILABILITYZONES_EU_WEST",
            "dublin-1,dublin-2",
        ),
    ];
    let config = spring(&dir, &[], &env);
    assert_eq!(
        config.availability_zones["eu-west"],
        ["dublin-1", "dublin-2"]
    );
}

#[test]
fn a_profile_file_applies_when_its_profile_is_active() {
    let dir = Dir::new();
    dir.write("application.yml", "spring.application.name: orders\n");
    dir.write(
        "config/application-docker.yml",
        "eureka.instance.hostname: orders.docker\n",
    );
    let config = spring(&dir, &["--spring.profiles.active=docker"], &[]);
    assert_eq!(config.host_name, "orders.docker");
    // The instance id's host part is the found host, not eureka.instance.hostname.
    assert_eq!(config.instance_id, "box1:orders");
}

#[test]
fn from_file_reads_one_file() {
    let dir = Dir::new();
    dir.write(
        "client.properties",
        "spring.application.name=orders\neureka.instance.hostname=h\neureka.instance.ip-address=192.0.2.3\neureka.instance.instance-id=orders-7\n",
    );
    let config = ClientConfig::from_file(&dir.path.join("client.properties")).unwrap();
    assert_eq!(config.app_name, "orders");
    assert_eq!(config.instance_id, "orders-7");
    let missing = ClientConfig::from_file(&dir.path.join("nope.yml")).unwrap_err();
    assert!(missing.to_string().contains("nope.yml"), "{missing}");
}

#[test]
fn from_properties_binds_pairs_written_in_code() {
    let config = ClientConfig::from_properties([
        ("spring.application.name", "orders"),
        ("eureka.instance.hostname", "h"),
        ("eureka.instance.ip-address", "192.0.2.3"),
        (
            "eureka.instance.instance-id",
            "${spring.application.name}-1",
        ),
    ])
    .unwrap();
    assert_eq!(config.instance_id, "orders-1");
}

/// The user guide lists every key read, with its default, so that it cannot fall out of step
/// with `KEYS`.
#[test]
fn the_user_guide_lists_every_key_with_its_default() {
    let guide = include_str!("../../../../docs/client.md");
    for entry in KEYS {
        let (key, default) = (entry.name, entry.default);
        let row = guide
            .lines()
            .find(|line| line.starts_with(&format!("| `{key}` |")))
            .unwrap_or_else(|| panic!("docs/client.md has no row for {key}"));
        if !default.is_empty() {
            assert!(
                row.contains(&format!("| `{default}` |")),
                "docs/client.md gives {key} another default than {default}: {row}"
            );
        }
    }
    for map in map_prefixes() {
        assert!(
            guide.contains(&format!("`{map}.<")),
            "docs/client.md: {map}"
        );
    }
}

#[test]
fn tls_keys_make_the_trust_and_key_stores_named_after_eureka_client_tls() {
    let config = pairs(&[
        ("eureka.client.tls.enabled", "true"),
        ("eureka.client.tls.trust-store", "file:/certs/ca.p12"),
        ("eureka.client.tls.trust-store-password", " s3cret "),
        ("eureka.client.tls.key-store", "/certs/me.jks"),
        ("eureka.client.tls.key-store-type", "jks"),
        ("eureka.client.tls.key-alias", "me"),
    ]);
    let tls = config.tls.expect("TLS is enabled");
    let Some(crate::tls::TrustSource::Store(trust)) = tls.trust else {
        panic!("a trust store: {:?}", tls.trust);
    };
    assert_eq!(trust.path, PathBuf::from("/certs/ca.p12"));
    assert_eq!(trust.password.as_deref(), Some(" s3cret "));
    assert_eq!(
        trust.key_name(crate::tls::StoreKey::Password),
        "eureka.client.tls.trust-store-password"
    );
    let identity = tls.identity.expect("a key store");
    assert_eq!(identity.kind, Some(crate::tls::StoreKind::Jks));
    assert_eq!(identity.key_alias.as_deref(), Some("me"));
    assert_eq!(
        identity.key_name(crate::tls::StoreKey::Location),
        "eureka.client.tls.key-store"
    );
}

#[test]
fn tls_keys_count_only_when_tls_is_enabled() {
    let config = pairs(&[("eureka.client.tls.trust-store", "/certs/ca.p12")]);
    assert_eq!(config.tls, None);
}

#[test]
fn a_store_type_heureka_cannot_read_is_an_error_naming_its_key() {
    let message = error(&[
        ("eureka.client.tls.enabled", "true"),
        ("eureka.client.tls.trust-store", "/certs/ca.bks"),
        ("eureka.client.tls.trust-store-type", "BKS"),
    ]);
    assert!(
        message.contains("eureka.client.tls.trust-store-type"),
        "{message}"
    );
}

#[test]
fn a_classpath_store_is_an_error_naming_its_key() {
    let message = error(&[
        ("eureka.client.tls.enabled", "true"),
        ("eureka.client.tls.key-store", "classpath:client.p12"),
    ]);
    assert!(message.contains("eureka.client.tls.key-store"), "{message}");
}
