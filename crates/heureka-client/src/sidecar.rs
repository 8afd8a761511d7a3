//! The sidecar engine: registers an application that is not a Eureka client itself, and reports
//! its health from an HTTP health URL, as Spring Cloud Netflix Sidecar does with
//! `sidecar.health-uri` (its health check handler is consulted at every instance-info
//! replication round, 30 s by default).
//!
//! A 2xx answer is `UP`; any other answer, a connection failure or no answer within the
//! request timeout is `DOWN`. The application stays registered while `DOWN`, so that it comes
//! back `UP` by itself once it recovers; it is cancelled only when the sidecar shuts down.
//! (Spring's sidecar reads the `status` of a JSON body instead; a status code is what any
//! HTTP server can give.)
//!
//! While the application is not `UP` (it has not started listening yet, or it failed), the
//! sidecar asks its health URL every `down_interval` (1 s) as well, and on the first 2xx asks
//! the client for a replication round at once, which registers it `UP`: started together in a
//! pod, the application is `UP` in the registry within about a second of answering, not a whole
//! `health_interval` later. Once `UP`, a failure is seen at the next `health_interval` round.

use std::future::Future;
use std::time::Duration;

use crate::client::EurekaClient;
use crate::config::ClientConfig;
use crate::error::ClientError;
use crate::health::{url_health_check, HealthCheck};
use heureka_core::InstanceStatus;

/// What the sidecar registers and how it watches the application.
#[derive(Clone, Debug)]
pub struct SidecarConfig {
    /// The application's registration: its name, address and port, and the Eureka servers.
    pub client: ClientConfig,
    /// The application's health URL, e.g. `http://127.0.0.1:3000/health`.
    pub health_url: String,
    /// How often the health URL is polled, which is the replication interval of the
    /// registration (the client's `instance_info_replication_interval`, 30 s, is replaced by
    /// this); a change of health reaches the server in the same round.
    pub health_interval: Duration,
    /// How long one health request may take before it counts as `DOWN` (5 s); at most
    /// `health_interval`, since the client gives a health check no longer than its
    /// replication interval.
    pub health_timeout: Duration,
    /// How often the health URL is asked while the application is not `UP` (1 s), so that it
    /// is reported `UP` as soon as it answers.
    pub down_interval: Duration,
}

impl SidecarConfig {
    /// A sidecar for `client` polling `health_url` every 30 s.
    pub fn new(client: ClientConfig, health_url: &str) -> SidecarConfig {
        SidecarConfig {
            client,
            health_url: health_url.to_owned(),
            health_interval: Duration::from_secs(30),
            health_timeout: Duration::from_secs(5),
            down_interval: Duration::from_secs(1),
        }
    }
}

/// Registers the application (with the status its health URL gives), keeps the registration
/// and its status current until `shutdown` completes, then cancels it.
///
/// Fails if the first registration fails (as [`EurekaClient::start`]) or the cancel does.
pub async fn run(
    config: SidecarConfig,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ClientError> {
    let SidecarConfig {
        mut client,
        health_url,
        health_interval,
        health_timeout,
        down_interval,
    } = config;
    client.instance_info_replication_interval = health_interval;
    client.initial_instance_info_replication_interval = health_interval;
    let health = url_health_check(health_url.clone(), health_timeout)?;
    let probe = url_health_check(health_url, health_timeout.min(down_interval))?;
    let client = EurekaClient::builder(client)
        .health_check(health)
        .start()
        .await?;
    tokio::select! {
        () = shutdown => {}
        () = report_up_once_answering(&client, &probe, down_interval) => {}
    }
    client.shutdown().await
}

/// While the client registers the application as anything but `UP`, asks its health URL every
/// `every`; on a 2xx, asks for a replication round now (whose health check then finds it `UP`).
/// Runs until the sidecar stops.
async fn report_up_once_answering(
    client: &EurekaClient,
    probe: &impl HealthCheck,
    every: Duration,
) {
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        if client.status() == InstanceStatus::Up {
            continue;
        }
        if probe.check().await == InstanceStatus::Up {
            client.request_update();
        }
    }
}
