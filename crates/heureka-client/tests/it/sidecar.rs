//! The sidecar engine against a real server and a local health URL whose answer the test
//! flips.

use std::time::Duration;

use heureka_client::sidecar::{self, SidecarConfig};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::support::{client_config, dead_url, eventually, HealthEndpoint, Server};

/// Runs a sidecar for `APP/a1` polling `health_url` every second, until the sender is used or
/// dropped.
fn run_sidecar(
    server: &Server,
    health_url: &str,
) -> (
    oneshot::Sender<()>,
    JoinHandle<Result<(), heureka_client::ClientError>>,
) {
    let mut config = SidecarConfig::new(
        client_config(vec![server.service_url()], "app", "a1"),
        health_url,
    );
    config.health_interval = Duration::from_secs(1);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(sidecar::run(config, async {
        let _ = stopped.await;
    }));
    (stop, task)
}

/// Waits until APP/a1 is registered with `status`.
async fn until_shows(server: &Server, status: &str) {
    eventually(&format!("the app is registered {status}"), || {
        shows(server, status)
    })
    .await;
}

async fn shows(server: &Server, status: &str) -> bool {
    match server.instance("APP", "a1").await {
        Some(instance) => instance["status"] == status,
        None => false,
    }
}

#[tokio::test]
async fn the_app_is_registered_up_while_its_health_url_answers_2xx() {
    let server = Server::start().await;
    let health = HealthEndpoint::start(true).await;
    let (stop, task) = run_sidecar(&server, &health.url);

    until_shows(&server, "UP").await;
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_failing_health_url_reports_the_app_down_without_deregistering_it() {
    let server = Server::start().await;
    let health = HealthEndpoint::start(true).await;
    let (stop, task) = run_sidecar(&server, &health.url);
    until_shows(&server, "UP").await;

    health.set_healthy(false);
    // `shows` is false for an instance that is gone, so this sees it registered and DOWN.
    until_shows(&server, "DOWN").await;
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_recovered_health_url_brings_the_app_back_up() {
    let server = Server::start().await;
    let health = HealthEndpoint::start(false).await;
    let (stop, task) = run_sidecar(&server, &health.url);
    until_shows(&server, "DOWN").await;

    health.set_healthy(true);
    until_shows(&server, "UP").await;
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_health_url_where_nothing_listens_reports_the_app_down() {
    let server = Server::start().await;
    let nothing = dead_url();
    let (stop, task) = run_sidecar(&server, &nothing);

    until_shows(&server, "DOWN").await;
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn shutdown_cancels_the_apps_registration() {
    let server = Server::start().await;
    let health = HealthEndpoint::start(true).await;
    let (stop, task) = run_sidecar(&server, &health.url);
    until_shows(&server, "UP").await;

    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
    assert!(server.instance("APP", "a1").await.is_none());
}

#[tokio::test]
async fn an_app_that_starts_answering_after_its_sidecar_is_up_long_before_the_health_interval() {
    let server = Server::start().await;
    // The application is not listening yet when its sidecar starts, as in a pod.
    let health = HealthEndpoint::start(false).await;
    let mut config = SidecarConfig::new(
        client_config(vec![server.service_url()], "app", "a1"),
        &health.url,
    );
    // A round a minute: only the fast path while DOWN can report UP within the test.
    config.health_interval = Duration::from_secs(60);
    config.down_interval = Duration::from_millis(200);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(sidecar::run(config, async {
        let _ = stopped.await;
    }));
    until_shows(&server, "DOWN").await;

    health.set_healthy(true);

    until_shows(&server, "UP").await;
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}
