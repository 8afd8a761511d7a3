//! Making one probe: an HTTP `GET` (2xx passes; redirects are not followed, since a health
//! endpoint that redirects is not answering for itself) or a TCP connect, each within the
//! timeout.

use std::time::Duration;

use super::targets::Target;

/// What one probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProbeResult {
    pub(crate) passed: bool,
    /// The answer's status code, `connected`, or why there was no answer.
    pub(crate) detail: String,
    pub(crate) latency: Duration,
}

/// The HTTP client probes share (one connection pool).
#[derive(Clone, Debug)]
pub(crate) struct Prober {
    http: reqwest::Client,
    timeout: Duration,
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
    ) -> Prober {
        let http = reqwest::Client::builder()
            .connect_timeout(timeout)
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            // A probe per interval per instance: no connection is worth keeping that long.
            .pool_max_idle_per_host(0)
            .use_preconfigured_tls(tls)
            .build()
            .expect("a client with a rustls configuration always builds");
        Prober {
            http,
            timeout,
            node: node.to_string(),
        }
    }

    pub(crate) async fn probe(&self, target: &Target) -> ProbeResult {
        let started = crate::clock::instant();
        let (passed, detail) = match target {
            Target::Http {
                url,
                echoes_registry,
            } => self.get(url, *echoes_registry).await,
            Target::Tcp(host, port) => self.connect(host, *port).await,
        };
        ProbeResult {
            passed,
            detail,
            latency: crate::clock::instant().saturating_duration_since(started),
        }
    }

    async fn get(&self, url: &str, echoes_registry: bool) -> (bool, String) {
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
                    return (true, format!("{}, Spring Boot: alive", status.as_u16()));
                }
                (status.is_success(), status.as_u16().to_string())
            }
            Err(error) if error.is_timeout() => (false, "timed out".to_owned()),
            Err(error) if error.is_connect() => (false, connect_failure(&error)),
            Err(error) => (
                false,
                heureka_tls::explain(&error).unwrap_or_else(|| error.to_string()),
            ),
        }
    }

    async fn connect(&self, host: &str, port: u16) -> (bool, String) {
        let connecting = tokio::net::TcpStream::connect((host, port));
        match tokio::time::timeout(self.timeout, connecting).await {
            Ok(Ok(_)) => (true, "connected".to_owned()),
            Ok(Err(error)) => (false, error.kind().to_string()),
            Err(_) => (false, "timed out".to_owned()),
        }
    }
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
