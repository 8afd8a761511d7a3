//! `heureka sidecar`: registers a process that has no Eureka client of its own and reports
//! its health from an HTTP URL, through `heureka_client::sidecar` (the engine).
//!
//! The flags name what every sidecar needs; anything else a Spring Eureka client can be told
//! comes as Spring keys, the way a Spring application reads them: `--eureka.instance.*=…` and
//! `--eureka.client.*=…` arguments, environment variables (`EUREKA_INSTANCE_METADATAMAP_…`) and
//! `application.yml` in the working directory. A flag beats the same setting given as a key.

use std::future::Future;
use std::time::Duration;

use heureka_client::sidecar::{self, SidecarConfig};
use heureka_client::tls::TrustSource;
use heureka_client::{ClientConfig, ClientError};

use crate::args::SidecarArgs;
use crate::error::CliError;
use crate::tls::CliTls;

/// The environment variable the other subcommands read the server from; the sidecar honours it
/// too, below `--eureka` and above Spring's own `EUREKA_CLIENT_SERVICEURL_DEFAULTZONE`.
const ENV_URL: &str = "EUREKA_URL";

pub(crate) async fn run(
    args: SidecarArgs,
    eureka: &[String],
    tls: &CliTls,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), CliError> {
    let config = config(&args, eureka, tls, env)?;
    tracing::info!(
        app = %config.client.app_name,
        instance = %config.client.instance_id,
        port = config.client.port,
        health = %config.health_url,
        eureka = ?config.client.ordered_service_urls(),
        "sidecar starting"
    );
    sidecar::run(config, shutdown_signal())
        .await
        .map_err(|error| match error {
            // A store that cannot be used is the configuration's fault, found before any request.
            ClientError::Tls(error) => CliError::Usage(format!("sidecar: {error}")),
            error => CliError::Unreachable(format!("sidecar: {error}")),
        })
}

/// The registration: Spring keys first, then the flags as the command line's highest-precedence
/// properties.
fn config(
    args: &SidecarArgs,
    eureka: &[String],
    tls: &CliTls,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<SidecarConfig, CliError> {
    check_health_url(&args.health_url)?;
    if let Some(bad) = args.spring.iter().find(|arg| !is_spring_key(arg)) {
        return Err(CliError::Usage(format!(
            "sidecar: unexpected argument {bad:?}; Spring keys are given as --key=value"
        )));
    }
    // A sidecar calls nobody, so it keeps no copy of the registry unless told to: this default
    // comes first, so a `--eureka.client.fetch-registry=true` of the user's wins.
    let mut properties = vec!["--eureka.client.fetch-registry=false".to_owned()];
    properties.extend(args.spring.iter().cloned());
    let mut set = |key: &str, value: &str| properties.push(format!("--{key}={value}"));
    if let Some(app) = &args.app {
        set("spring.application.name", app);
    }
    set("server.port", &args.port.to_string());
    set("eureka.instance.non-secure-port", &args.port.to_string());
    if let Some(host) = &args.host {
        set("eureka.instance.hostname", host);
    }
    if let Some(ip) = &args.ip {
        set("eureka.instance.ip-address", ip);
    }
    // The health URL is the application's own, so Eureka's dashboards link to it.
    set("eureka.instance.health-check-url", &args.health_url);
    let urls = if eureka.is_empty() {
        env(ENV_URL).filter(|value| !value.trim().is_empty())
    } else {
        Some(eureka.join(","))
    };
    if let Some(urls) = urls {
        set("eureka.client.service-url.defaultZone", &urls);
    }
    // The TLS options are the command line's spelling of `eureka.client.tls.*`.
    for (key, value) in tls.spring_keys() {
        set(&key, &value);
    }
    let cwd = std::env::current_dir()
        .map_err(|error| CliError::Usage(format!("sidecar: no working directory: {error}")))?;
    let mut client = ClientConfig::from_spring(&properties, env, &cwd)
        .map_err(|error| CliError::Usage(format!("sidecar: {error}")))?;
    if let Some(TrustSource::NamedPem { key, paths }) = tls.client_tls().and_then(|t| t.trust) {
        // A PEM file has no Spring key: it is put in place of whatever trust the keys gave.
        client.tls.get_or_insert_with(Default::default).trust =
            Some(TrustSource::NamedPem { key, paths });
    }
    if args.app.is_none() && client.app_name.eq_ignore_ascii_case("unknown") {
        return Err(CliError::Usage(
            "sidecar: name the application with --app or spring.application.name".to_owned(),
        ));
    }
    let mut sidecar = SidecarConfig::new(client, &args.health_url);
    sidecar.health_interval = Duration::from_secs_f64(args.health_interval);
    sidecar.health_timeout = Duration::from_secs_f64(args.health_timeout);
    sidecar.down_interval = Duration::from_secs_f64(args.down_interval);
    Ok(sidecar)
}

/// A health URL the sidecar cannot ask (`localhost:8000/health`, no scheme) would register the
/// application `DOWN` for good; it is a usage error instead.
fn check_health_url(url: &str) -> Result<(), CliError> {
    match reqwest::Url::parse(url) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") && parsed.has_host() => Ok(()),
        _ => Err(CliError::Usage(format!(
            "sidecar: --health-url {url:?} is not an http:// or https:// URL"
        ))),
    }
}

/// `--eureka.instance.metadata-map.version=canary`: a dotted key with a value.
pub(crate) fn is_spring_key(arg: &str) -> bool {
    arg.strip_prefix("--")
        .and_then(|rest| rest.split_once('='))
        .is_some_and(|(key, _)| key.contains('.'))
}

/// Ctrl-C or SIGTERM: the sidecar then cancels the registration and exits.
///
/// The handlers are installed here, before the first registration, not when the future is
/// first polled (after it): a signal while the sidecar starts would otherwise end the process
/// at once, with no exit code and possibly with a registration the server had just taken,
/// left until its lease lapses. Caught early, it lets the start finish, then cancels.
fn shutdown_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    let stop = {
        use tokio::signal::unix::{signal, SignalKind};
        let handlers = signal(SignalKind::terminate())
            .and_then(|terminate| Ok((terminate, signal(SignalKind::interrupt())?)));
        async move {
            match handlers {
                Ok((mut terminate, mut interrupt)) => {
                    tokio::select! {
                        _ = terminate.recv() => {}
                        _ = interrupt.recv() => {}
                    }
                }
                Err(_) => tokio::signal::ctrl_c().await.unwrap_or(()),
            }
        }
    };
    #[cfg(not(unix))]
    let stop = {
        let ctrl_c = tokio::signal::ctrl_c();
        async move { ctrl_c.await.unwrap_or(()) }
    };
    async move {
        stop.await;
        tracing::info!("sidecar stopping: cancelling the registration");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(spring: &[&str]) -> SidecarArgs {
        SidecarArgs {
            app: Some("pyapp".to_owned()),
            port: 8000,
            health_url: "http://127.0.0.1:8000/health".to_owned(),
            host: Some("127.0.0.1".to_owned()),
            ip: Some("127.0.0.1".to_owned()),
            health_interval: 2.0,
            health_timeout: 1.0,
            down_interval: 1.0,
            spring: spring.iter().map(|arg| arg.to_string()).collect(),
        }
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn the_flags_make_the_registration() {
        let eureka = ["http://127.0.0.1:9/eureka/".to_owned()];
        let config = config(&args(&[]), &eureka, &CliTls::default(), &no_env).unwrap();
        assert_eq!(config.client.app_name, "pyapp");
        assert_eq!(config.client.port, 8000);
        assert_eq!(config.client.host_name, "127.0.0.1");
        assert_eq!(
            config.client.ordered_service_urls(),
            ["http://127.0.0.1:9/eureka/"]
        );
        assert_eq!(config.health_interval, Duration::from_secs(2));
    }

    #[test]
    fn spring_keys_add_what_the_flags_do_not_say() {
        let config = config(
            &args(&["--eureka.instance.metadata-map.version=canary"]),
            &[],
            &CliTls::default(),
            &no_env,
        )
        .unwrap();
        assert_eq!(config.client.metadata["version"], "canary");
    }

    #[test]
    fn a_flag_beats_the_same_setting_as_a_key() {
        let config = config(
            &args(&["--eureka.instance.non-secure-port=1"]),
            &[],
            &CliTls::default(),
            &no_env,
        )
        .unwrap();
        assert_eq!(config.client.port, 8000);
    }

    #[test]
    fn eureka_url_from_the_environment_is_used_without_the_flag() {
        let env = |name: &str| (name == ENV_URL).then(|| "http://127.0.0.1:7/eureka/".to_owned());
        let config = config(&args(&[]), &[], &CliTls::default(), &env).unwrap();
        assert_eq!(
            config.client.ordered_service_urls(),
            ["http://127.0.0.1:7/eureka/"]
        );
    }

    #[test]
    fn the_sidecar_keeps_no_registry_copy_unless_told_to() {
        assert!(
            !config(&args(&[]), &[], &CliTls::default(), &no_env)
                .unwrap()
                .client
                .fetch_registry
        );
        let told = config(
            &args(&["--eureka.client.fetch-registry=true"]),
            &[],
            &CliTls::default(),
            &no_env,
        );
        assert!(told.unwrap().client.fetch_registry);
    }

    #[test]
    fn the_trust_store_option_becomes_the_client_s_trust_store() {
        let tls = CliTls {
            trust_store: Some(crate::tls::Given {
                value: "/ca.p12".to_owned(),
                from: "--trust-store".to_owned(),
            }),
            ..CliTls::default()
        };
        let config = config(&args(&[]), &[], &tls, &no_env).unwrap();
        let trust = config.client.tls.and_then(|tls| tls.trust);
        assert!(
            matches!(&trust, Some(TrustSource::Store(store)) if store.path == std::path::Path::new("/ca.p12")),
            "{trust:?}"
        );
    }

    #[test]
    fn a_ca_certificate_option_becomes_the_client_s_trust() {
        let tls = CliTls {
            ca_cert: Some(crate::tls::Given {
                value: "/ca.pem".to_owned(),
                from: "--ca-cert".to_owned(),
            }),
            ..CliTls::default()
        };
        let config = config(&args(&[]), &[], &tls, &no_env).unwrap();
        let trust = config.client.tls.and_then(|tls| tls.trust);
        assert!(
            matches!(&trust, Some(TrustSource::NamedPem { key, .. }) if key == "--ca-cert"),
            "{trust:?}"
        );
    }

    #[test]
    fn an_argument_that_is_not_a_spring_key_is_a_usage_error() {
        let error = config(&args(&["--verbose"]), &[], &CliTls::default(), &no_env)
            .err()
            .unwrap();
        assert_eq!(error.exit_code(), 2, "{error}");
    }

    #[test]
    fn a_health_url_without_an_http_scheme_is_a_usage_error() {
        for bad in [
            "localhost:8000/health",
            "127.0.0.1:8000/health",
            "ftp://h/health",
            "/health",
        ] {
            let mut unaskable = args(&[]);
            unaskable.health_url = bad.to_owned();
            let error = config(&unaskable, &[], &CliTls::default(), &no_env)
                .err()
                .unwrap();
            assert_eq!(error.exit_code(), 2, "{bad}: {error}");
            assert!(error.to_string().contains("--health-url"), "{error}");
        }
    }

    #[test]
    fn an_application_without_a_name_is_a_usage_error() {
        let mut unnamed = args(&[]);
        unnamed.app = None;
        let error = config(&unnamed, &[], &CliTls::default(), &no_env)
            .err()
            .unwrap();
        assert!(error.to_string().contains("--app"), "{error}");
    }
}
