//! The command line, declared with clap's derive: global options, then one subcommand.

use clap::{Args, Parser, Subcommand, ValueEnum};
use heureka_core::InstanceStatus;

/// Appended to every subcommand's `--help`.
const FOOTER: &str = "\
Server: --eureka, else EUREKA_URL, else EUREKA_CLIENT_SERVICEURL_DEFAULTZONE, else
http://localhost:8761/eureka/ (several URLs, comma-separated, are tried in order).
Credentials: user:password@ in the URL, else EUREKA_USERNAME and EUREKA_PASSWORD.
HTTPS: --trust-store (or --ca-cert) and --key-store, else EUREKA_CLIENT_TLS_TRUST_STORE,
EUREKA_CLIENT_TLS_TRUST_STORE_PASSWORD, EUREKA_CA_CERT, EUREKA_CLIENT_TLS_KEY_STORE,
EUREKA_CLIENT_TLS_KEY_STORE_PASSWORD, EUREKA_CLIENT_TLS_KEY_ALIAS; else the public roots.

Exit codes: 0 ok, 1 not found (404), 2 usage error, 3 server unreachable or another
HTTP error, 4 credentials refused (401/403), 5 drain: consumers did not all confirm in
time. See docs/cli.md.";

#[derive(Debug, Parser)]
#[command(
    name = "heureka",
    version,
    about = "Read and operate the registry of any Eureka server (Heureka or Spring Cloud Eureka)",
    after_help = FOOTER,
    subcommand_required = true
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub(crate) struct Global {
    /// Eureka service URL, as in eureka.client.service-url.defaultZone (repeatable or
    /// comma-separated; tried in order)
    #[arg(
        long = "eureka",
        value_name = "URL",
        value_delimiter = ',',
        global = true
    )]
    pub eureka: Vec<String>,
    /// The Heureka namespace to read and operate: every request goes to
    /// {server}{namespace-prefix}/NAME{base path} (http://h:8761/ns/team-a/eureka/); without
    /// it, the URL as given (the default namespace on Heureka)
    #[arg(long, value_name = "NAME", global = true)]
    pub namespace: Option<String>,
    /// The server's heureka.namespaces.path-prefix, for --namespace
    #[arg(long, value_name = "PATH", default_value = "/ns", global = true)]
    pub namespace_prefix: String,
    /// Machine output: Eureka's JSON documents, one JSON object per line for watch
    #[arg(long, global = true)]
    pub json: bool,
    /// The wire format to ask the server for
    #[arg(long, value_enum, default_value_t = WireFormat::Json, global = true)]
    pub format: WireFormat,
    /// Seconds each request may take
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = positive_seconds, global = true)]
    pub timeout: f64,
    /// PKCS12 or JKS store of the authorities https:// servers are verified against
    /// (eureka.client.tls.trust-store; default: the public roots)
    #[arg(long, value_name = "FILE", global = true, help_heading = TLS)]
    pub trust_store: Option<String>,
    /// The trust store's password
    #[arg(long, value_name = "PASSWORD", global = true, help_heading = TLS)]
    pub trust_store_password: Option<String>,
    /// PEM file of the authorities to trust, instead of --trust-store
    #[arg(long, value_name = "FILE", global = true, help_heading = TLS)]
    pub ca_cert: Option<String>,
    /// PKCS12 or JKS store of the client certificate, for servers that ask for one
    /// (eureka.client.tls.key-store)
    #[arg(long, value_name = "FILE", global = true, help_heading = TLS)]
    pub key_store: Option<String>,
    /// The key store's password (also the key's)
    #[arg(long, value_name = "PASSWORD", global = true, help_heading = TLS)]
    pub key_store_password: Option<String>,
    /// Which key of the key store, when it holds several
    #[arg(long, value_name = "ALIAS", global = true, help_heading = TLS)]
    pub key_alias: Option<String>,
}

/// The heading of the TLS options in `--help`.
const TLS: &str = "HTTPS";

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum WireFormat {
    Json,
    Xml,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the applications with their instance counts by status
    #[command(after_help = FOOTER)]
    Apps {
        /// One row per instance instead of one per application
        #[arg(short = 'w', long)]
        wide: bool,
    },
    /// Show one application's instances
    #[command(after_help = FOOTER)]
    App { name: String },
    /// Show every field of one instance, found by id across all applications
    #[command(after_help = FOOTER)]
    Instance { id: String },
    /// Set or clear an instance's status override
    #[command(subcommand, after_help = FOOTER)]
    Status(StatusCommand),
    /// Change an instance's metadata on the server
    #[command(subcommand, after_help = FOOTER)]
    Metadata(MetadataCommand),
    /// Remove an instance from the registry (as its own client does at shutdown)
    #[command(after_help = FOOTER)]
    Deregister { app: String, id: String },
    /// Take an instance out of service and wait until every consumer that fetched recently has
    /// fetched the change (a rolling deploy's step, a preStop hook); exit 5 if some did not
    #[command(after_help = FOOTER)]
    Drain {
        app: String,
        id: String,
        /// Seconds to wait for the consumers
        #[arg(long, value_name = "SECS", default_value_t = 90.0, value_parser = positive_seconds)]
        timeout: f64,
        /// Deregister the instance once every consumer confirmed
        #[arg(long)]
        deregister: bool,
    },
    /// Show the remote regions a Heureka server fetches: state, size, last success and lag
    /// (GET regions; JSON only)
    #[command(after_help = FOOTER)]
    Regions,
    /// Print registry changes as they happen: from Heureka's push (else its event stream),
    /// or by polling apps/delta where the server has neither
    #[command(after_help = FOOTER)]
    Watch(WatchArgs),
    /// Register a process that is not a Eureka client: UP while its health URL answers 2xx,
    /// DOWN (still registered) while it does not, cancelled on exit
    #[command(after_help = SIDECAR_FOOTER)]
    Sidecar(SidecarArgs),
}

/// Appended to `heureka sidecar --help`.
const SIDECAR_FOOTER: &str = "\
Any Spring Eureka client setting may be added as --key=value (e.g.
--eureka.instance.metadata-map.version=canary), as an environment variable
(EUREKA_INSTANCE_METADATAMAP_VERSION) or in ./application.yml; a flag beats the same key.
Server: --eureka, else EUREKA_URL, else eureka.client.service-url.defaultZone, else
http://localhost:8761/eureka/; credentials as user:password@ in the URL. HTTPS: the
--trust-store/--key-store options, or eureka.client.tls.* keys (with enabled=true).

Exit codes: 0 cancelled on Ctrl-C/SIGTERM, 2 usage error, 3 the first registration or the
cancel failed. See docs/cli.md.";

#[derive(Debug, Args)]
pub(crate) struct SidecarArgs {
    /// The application's name (spring.application.name)
    #[arg(long, value_name = "NAME")]
    pub app: Option<String>,
    /// The port the application serves on (eureka.instance.non-secure-port)
    #[arg(long, value_name = "PORT")]
    pub port: u16,
    /// The application's health URL: 2xx is UP, anything else DOWN
    #[arg(long, value_name = "URL")]
    pub health_url: String,
    /// The host name to register (eureka.instance.hostname; default: found as Spring does)
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// The IP address to register (eureka.instance.ip-address; default: found as Spring does)
    #[arg(long, value_name = "IP")]
    pub ip: Option<String>,
    /// Seconds between two health checks; a change reaches the server in the same round
    #[arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = positive_seconds)]
    pub health_interval: f64,
    /// Seconds one health check may take before it counts as DOWN (at most --health-interval)
    #[arg(long, value_name = "SECS", default_value_t = 5.0, value_parser = positive_seconds)]
    pub health_timeout: f64,
    /// Seconds between two health checks while the app is not UP, to report UP once it answers
    #[arg(long, value_name = "SECS", default_value_t = 1.0, value_parser = positive_seconds)]
    pub down_interval: f64,
    /// Spring keys given as `--key=value`; taken out of the arguments before clap sees them.
    #[arg(skip)]
    pub spring: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum StatusCommand {
    /// Put a status override on an instance (PUT apps/APP/ID/status?value=STATUS)
    #[command(after_help = FOOTER)]
    Set {
        app: String,
        id: String,
        /// UP, DOWN, STARTING, OUT_OF_SERVICE or UNKNOWN (any case)
        #[arg(value_parser = status)]
        status: InstanceStatus,
    },
    /// Remove an instance's status override (DELETE apps/APP/ID/status)
    #[command(after_help = FOOTER)]
    Clear {
        app: String,
        id: String,
        /// The status the instance takes meanwhile (the server's default is UNKNOWN)
        #[arg(long, value_parser = status)]
        value: Option<InstanceStatus>,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum MetadataCommand {
    /// Merge key=value pairs into an instance's metadata (PUT apps/APP/ID/metadata?key=value)
    #[command(after_help = FOOTER)]
    Set {
        app: String,
        id: String,
        #[arg(value_name = "KEY=VALUE", required = true, value_parser = pair)]
        pairs: Vec<(String, String)>,
    },
}

#[derive(Debug, Args)]
pub(crate) struct WatchArgs {
    /// Only this application's changes
    pub app: Option<String>,
    /// Poll apps/delta even where the server pushes or has an event stream
    #[arg(long)]
    pub poll: bool,
    /// Seconds between two polls
    #[arg(long, value_name = "SECS", default_value_t = 5.0, value_parser = positive_seconds)]
    pub interval: f64,
    /// Stop after printing this many changes
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
}

/// Statuses are Eureka's enum names; any case is accepted, `-` for `_` too.
fn status(text: &str) -> Result<InstanceStatus, String> {
    InstanceStatus::from_name(&text.to_ascii_uppercase().replace('-', "_")).ok_or_else(|| {
        format!("{text:?} is not a status: UP, DOWN, STARTING, OUT_OF_SERVICE or UNKNOWN")
    })
}

fn pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(format!("{text:?} is not KEY=VALUE")),
    }
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds.is_finite() => Ok(seconds),
        _ => Err(format!("{text:?} is not a positive number of seconds")),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn statuses_are_read_in_any_case() {
        assert_eq!(status("out-of-service"), Ok(InstanceStatus::OutOfService));
        assert_eq!(status("Up"), Ok(InstanceStatus::Up));
        assert!(status("SLEEPING").is_err());
    }

    #[test]
    fn a_metadata_pair_needs_a_key_and_may_have_an_empty_value() {
        assert_eq!(pair("zone=east"), Ok(("zone".into(), "east".into())));
        assert_eq!(pair("a=b=c"), Ok(("a".into(), "b=c".into())));
        assert_eq!(pair("flag="), Ok(("flag".into(), String::new())));
        assert!(pair("=x").is_err());
        assert!(pair("novalue").is_err());
    }
}
