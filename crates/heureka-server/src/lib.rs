//! Heureka's server: the Eureka REST API over HTTP, in front of `heureka-core`'s registry.
//!
//! Data flow: `routes` maps a request to a handler in `handlers`, which decodes the body with
//! `heureka-wire`, calls the registry (held in `state`) under a short lock, and maps the outcome
//! to a status code (`http::error`). Full and delta reads are served from `cache`. `tasks` runs
//! eviction and the other timers. `config` turns Spring-style settings into a `Config`.

pub mod config;

mod cache;
mod clock;
mod handlers;
mod http;
mod listener;
mod registration;
mod routes;
mod state;
mod tasks;

use std::future::Future;
use std::io;

use tokio::net::TcpListener;
use tower::Layer;
use tower_http::normalize_path::NormalizePathLayer;

use crate::config::Config;
use crate::state::AppState;

/// Serves the API on `listener` until `shutdown` completes, running the background jobs, then
/// lets in-flight requests finish for up to the configured grace period.
pub async fn serve(
    config: Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let state = AppState::new(&config);
    let router = routes::router(
        state.clone(),
        &config.heureka.base_path,
        config.heureka.max_request_body_bytes,
    );
    // Trim trailing slashes before routing: Eureka (Jersey) treats them as optional.
    let app = NormalizePathLayer::trim_trailing_slash().layer(router);
    let mut background = tasks::spawn_all(&state, &config);
    listener::serve(listener, app, &config.connections, shutdown).await;
    background.abort_all();
    Ok(())
}
