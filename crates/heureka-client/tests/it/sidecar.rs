//! The sidecar engine against a real server and a local health URL whose answer the test
//! flips.

use std::time::Duration;

use heureka_client::sidecar::{self, SidecarConfig};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::support::{client_config, dead_url, eventually, HealthEndpoint, Server};

/// The config of a sidecar for `APP/a1` registering with `server` and polling `health_url`
/// every second.
fn sidecar_config(server: &Server, health_url: &str) -> SidecarConfig {
    let mut config = SidecarConfig::new(
        client_config(vec![server.service_url()], "app", "a1"),
        health_url,
    );
    config.health_interval = Duration::from_secs(1);
    config
}

/// A sidecar running until [`Sidecar::stop`] (or until it is dropped).
struct Sidecar {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), heureka_client::ClientError>>,
}

impl Sidecar {
    fn run(config: SidecarConfig) -> Sidecar {
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(sidecar::run(config, async {
            let _ = stopped.await;
        }));
        Sidecar { stop, task }
    }

    /// Stops the sidecar; asserts it ended without an error.
    async fn stop(self) {
        self.stop.send(()).unwrap();
        self.task.await.unwrap().unwrap();
    }
}

/// Waits until APP/a1 is registered with `status`.
async fn until_shows(server: &Server, status: &str) {
    until(&format!("the app is registered {status}"), || {
        shows(server, status)
    })
    .await;
}

/// Waits until what `check` asks the server holds: the one poll these tests make, since a
/// sidecar publishes nothing a test could wait on instead.
async fn until<F, Fut>(what: &str, check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    eventually(what, check).await;
}

async fn shows(server: &Server, status: &str) -> bool {
    match server.instance("APP", "a1").await {
        Some(instance) => instance["status"] == status,
        None => false,
    }
}

/// A sidecar polling `health_url` shows the app as `status`.
async fn a_sidecar_shows(server: &Server, health_url: &str, status: &str) {
    let sidecar = Sidecar::run(sidecar_config(server, health_url));
    until_shows(server, status).await;
    sidecar.stop().await;
}

/// A sidecar whose health URL answers `healthy` shows the app `first`, and once the URL's
/// answer turns, `then`.
async fn a_turning_health_url_shows(healthy: bool, first: &str, then: &str) {
    let server = Server::start().await;
    let health = HealthEndpoint::start(healthy).await;
    let sidecar = Sidecar::run(sidecar_config(&server, &health.url));
    until_shows(&server, first).await;

    health.set_healthy(!healthy);
    until_shows(&server, then).await;
    sidecar.stop().await;
}

#[tokio::test]
async fn the_app_is_registered_up_while_its_health_url_answers_2xx() {
    let server = Server::start().await;
    let health = HealthEndpoint::start(true).await;
    a_sidecar_shows(&server, &health.url, "UP").await;
}

#[tokio::test]
async fn a_failing_health_url_reports_the_app_down_without_deregistering_it() {
    // `shows` is false for an instance that is gone, so this sees it registered and DOWN.
    a_turning_health_url_shows(true, "UP", "DOWN").await;
}

#[tokio::test]
async fn a_recovered_health_url_brings_the_app_back_up() {
    a_turning_health_url_shows(false, "DOWN", "UP").await;
}

#[tokio::test]
async fn a_health_url_where_nothing_listens_reports_the_app_down() {
    let server = Server::start().await;
    a_sidecar_shows(&server, &dead_url(), "DOWN").await;
}

#[tokio::test]
async fn shutdown_cancels_the_apps_registration() {
    let server = Server::start().await;
    let health = HealthEndpoint::start(true).await;
    a_sidecar_shows(&server, &health.url, "UP").await;
    assert!(server.instance("APP", "a1").await.is_none());
}

#[tokio::test]
async fn an_app_that_starts_answering_after_its_sidecar_is_up_long_before_the_health_interval() {
    let server = Server::start().await;
    // The application is not listening yet when its sidecar starts, as in a pod.
    let health = HealthEndpoint::start(false).await;
    let mut config = sidecar_config(&server, &health.url);
    // A round a minute: only the fast path while DOWN can report UP within the test.
    config.health_interval = Duration::from_secs(60);
    config.down_interval = Duration::from_millis(200);
    let sidecar = Sidecar::run(config);
    until_shows(&server, "DOWN").await;

    health.set_healthy(true);

    until_shows(&server, "UP").await;
    sidecar.stop().await;
}

#[tokio::test]
async fn a_sidecar_that_keeps_a_registry_copy_follows_the_push() {
    let server = Server::start().await;
    let health = HealthEndpoint::start(true).await;
    let mut config = sidecar_config(&server, &health.url);
    // `heureka sidecar` keeps no copy unless told to (`--eureka.client.fetch-registry=true`).
    config.client.fetch_registry = true;
    config.client.registry_fetch_interval = Duration::from_secs(30);
    let sidecar = Sidecar::run(config);

    until("the server lists the sidecar as following the push", || {
        follows_the_push(&server)
    })
    .await;
    sidecar.stop().await;
}

/// Whether a consumer of `server` has a push stream open (`GET consumers`).
async fn follows_the_push(server: &Server) -> bool {
    let consumers = server.json("consumers").await;
    consumers["consumers"]
        .as_array()
        .is_some_and(|consumers| consumers.iter().any(|consumer| consumer["push"] == true))
}
