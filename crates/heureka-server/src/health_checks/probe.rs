//! Making one probe: an HTTP `GET` (2xx passes; redirects are not followed, since a health
//! endpoint that redirects is not answering for itself) or a TCP connect, each within the
//! timeout.
//!
//! Only to `heureka.health-checks.allowed-networks`. Whoever may register names the address
//! its instance is probed at; unbounded, the checks would let them scan whatever this server
//! can reach (the cloud's metadata service, an internal network) and read the verdicts and
//! latencies back. So the address connected to is checked, not the name: a host name is
//! resolved once, every address it resolves to must be allowed, and the connection goes to
//! those addresses, with no second lookup a rebinding DNS server could answer differently.
//! For a URL, the HTTP client's own resolver is [`CheckedResolver`] (it connects to what that
//! returns), and an IP literal, which it never resolves, is checked before the request.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use super::targets::Target;
use crate::config::AddressRange;

/// The key named in refusals.
const NETWORKS_KEY: &str = "heureka.health-checks.allowed-networks";

/// What one probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProbeResult {
    pub(crate) passed: bool,
    /// Not made: the target's address is outside the allowed networks (`detail` says which).
    pub(crate) refused: bool,
    /// The answer's status code, `connected`, or why there was no answer.
    pub(crate) detail: String,
    pub(crate) latency: Duration,
}

/// Never probed, whatever `heureka.health-checks.allowed-networks` says: link-local addresses
/// and the cloud metadata services (AWS's 169.254.169.254 and fd00:ec2::254, Alibaba's
/// 100.100.100.200 inside the carrier-grade NAT range the default allows), which hand out
/// credentials to whoever asks from the host. No instance serves its health there.
const NEVER_PROBED: [&str; 4] = [
    "169.254.0.0/16",
    "fe80::/10",
    "fd00:ec2::/32",
    "100.100.100.200/32",
];

/// The networks probes may connect to.
#[derive(Clone, Debug)]
pub(crate) struct Networks {
    allowed: Arc<[AddressRange]>,
    never: Arc<[AddressRange]>,
}

impl Networks {
    pub(crate) fn new(ranges: &[AddressRange]) -> Networks {
        let never = NEVER_PROBED
            .iter()
            .map(|range| AddressRange::parse(range).expect("a valid range"))
            .collect();
        Networks {
            allowed: ranges.into(),
            never,
        }
    }

    fn allows(&self, address: IpAddr) -> bool {
        let within = |ranges: &[AddressRange]| ranges.iter().any(|range| range.contains(address));
        within(&self.allowed) && !within(&self.never)
    }

    /// `Ok` when every one of `addresses`, which `host` named, is allowed.
    fn check(&self, host: &str, addresses: &[SocketAddr]) -> Result<(), Outside> {
        match addresses.iter().find(|address| !self.allows(address.ip())) {
            Some(address) => Err(Outside {
                host: host.to_owned(),
                address: address.ip(),
            }),
            None => Ok(()),
        }
    }
}

/// A probe refused: `host` is, or resolves to, `address`, outside the allowed networks.
#[derive(Debug)]
pub(crate) struct Outside {
    host: String,
    address: IpAddr,
}

impl std::fmt::Display for Outside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        if host.parse::<IpAddr>().ok() == Some(self.address) {
            write!(f, "not probed: {} is outside {NETWORKS_KEY}", self.address)
        } else {
            write!(
                f,
                "not probed: {host} resolves to {}, outside {NETWORKS_KEY}",
                self.address
            )
        }
    }
}

impl std::error::Error for Outside {}

/// The probes' HTTP client's resolver: the system's, refusing a name that resolves to any
/// address outside the allowed networks. The client connects only to the addresses returned.
struct CheckedResolver(Networks);

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let networks = self.0.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addresses: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            networks.check(&host, &addresses)?;
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The HTTP client probes share (one connection pool).
#[derive(Clone, Debug)]
pub(crate) struct Prober {
    http: reqwest::Client,
    timeout: Duration,
    networks: Networks,
    /// This node's tag, sent as `X-Heureka-Node`, so an instance's logs show which node of
    /// a cluster probes it.
    node: String,
}

/// What health endpoints are told of who asks.
const PROBE_USER_AGENT: &str = "Heureka-HealthCheck";

impl Prober {
    /// `tls` is whom `https://` health URLs are verified against: the server's
    /// `eureka.client.tls` trust, as for its peers.
    pub(crate) fn new(
        timeout: Duration,
        tls: heureka_tls::rustls::ClientConfig,
        node: u32,
        networks: Networks,
    ) -> Prober {
        let http = reqwest::Client::builder()
            .connect_timeout(timeout)
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(CheckedResolver(networks.clone())))
            // A proxy (`HTTP_PROXY` in the environment) would resolve and connect beyond the
            // check; a probe is of the instance from this node anyway.
            .no_proxy()
            // A probe per interval per instance: no connection is worth keeping that long.
            .pool_max_idle_per_host(0)
            .use_preconfigured_tls(tls)
            .build()
            .expect("a client with a rustls configuration always builds");
        Prober {
            http,
            timeout,
            networks,
            node: node.to_string(),
        }
    }

    pub(crate) async fn probe(&self, target: &Target) -> ProbeResult {
        let started = crate::clock::instant();
        let found = match target {
            Target::Http {
                url,
                echoes_registry,
            } => self.get(url, *echoes_registry).await,
            Target::Tcp(host, port) => self.connect(host, *port).await,
        };
        let (passed, refused, detail) = match found {
            Ok((passed, detail)) => (passed, false, detail),
            Err(outside) => (false, true, outside.to_string()),
        };
        ProbeResult {
            passed,
            refused,
            detail,
            latency: crate::clock::instant().saturating_duration_since(started),
        }
    }

    async fn get(&self, url: &str, echoes_registry: bool) -> Result<(bool, String), Outside> {
        // The client resolves names through `CheckedResolver`, but an IP literal it connects
        // to directly.
        if let Ok(parsed) = url::Url::parse(url) {
            let literal = match parsed.host() {
                Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
                Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
                _ => None,
            };
            if let Some(ip) = literal {
                let port = parsed.port_or_known_default().unwrap_or(0);
                self.networks
                    .check(&ip.to_string(), &[SocketAddr::new(ip, port)])?;
            }
        }
        let request = self
            .http
            .get(url)
            .header(reqwest::header::USER_AGENT, PROBE_USER_AGENT)
            .header("X-Heureka-Node", &self.node);
        match request.send().await {
            Ok(response) => {
                let status = response.status();
                if !status.is_success() && echoes_registry && is_spring_boot_health(&response) {
                    // Its status may be the registry's own, echoed (`targets.rs`): it answers.
                    return Ok((true, format!("{}, Spring Boot: alive", status.as_u16())));
                }
                Ok((status.is_success(), status.as_u16().to_string()))
            }
            Err(error) => {
                if let Some(outside) = outside_in(&error) {
                    return Err(outside);
                }
                Ok((false, failure(&error)))
            }
        }
    }

    /// Resolves `host` once, checks every address, and connects to those addresses (in
    /// turn, as a name's addresses are tried), all within the timeout.
    async fn connect(&self, host: &str, port: u16) -> Result<(bool, String), Outside> {
        let connecting = async {
            let unbracketed = host.trim_start_matches('[').trim_end_matches(']');
            let addresses: Vec<SocketAddr> = match unbracketed.parse::<IpAddr>() {
                Ok(ip) => vec![SocketAddr::new(ip, port)],
                Err(_) => match tokio::net::lookup_host((host, port)).await {
                    Ok(addresses) => addresses.collect(),
                    Err(error) => return Ok((false, error.to_string())),
                },
            };
            self.networks.check(host, &addresses)?;
            Ok(match tokio::net::TcpStream::connect(&addresses[..]).await {
                Ok(_) => (true, "connected".to_owned()),
                Err(error) => (false, error.kind().to_string()),
            })
        };
        tokio::time::timeout(self.timeout, connecting)
            .await
            .unwrap_or_else(|_| Ok((false, "timed out".to_owned())))
    }
}

/// Why a request failed, in a line.
fn failure(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "timed out".to_owned()
    } else if error.is_connect() {
        connect_failure(error)
    } else {
        heureka_tls::explain(error).unwrap_or_else(|| error.to_string())
    }
}

/// The refusal [`CheckedResolver`] returned, wherever the client wrapped it.
fn outside_in(error: &reqwest::Error) -> Option<Outside> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        if let Some(outside) = error.downcast_ref::<Outside>() {
            return Some(Outside {
                host: outside.host.clone(),
                address: outside.address,
            });
        }
        cause = error.source();
    }
    None
}

/// Whether an answer is Spring Boot Actuator's health document, by its media type
/// (`application/vnd.spring-boot.actuator.v3+json`, or v2), which a request without `Accept`
/// gets.
fn is_spring_boot_health(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/vnd.spring-boot.actuator"))
}

/// The innermost cause of a failed connection ("connection refused"), not reqwest's generic
/// "error sending request".
fn connect_failure(error: &reqwest::Error) -> String {
    let mut cause: &(dyn std::error::Error + 'static) = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    match cause.downcast_ref::<std::io::Error>() {
        Some(io) => io.kind().to_string(),
        None => cause.to_string(),
    }
}

#[cfg(test)]
mod tests;
