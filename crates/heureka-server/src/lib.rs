//! Heureka's server: the Eureka REST API over HTTP, in front of `heureka-core`'s registry.
//!
//! Data flow: `routes` maps a request to a handler in `handlers`, which decodes the body with
//! `heureka-wire`, calls the registry (held in `state`) under a short lock, and maps the outcome
//! to a status code (`http::error`). Full and delta reads are served from `cache`. `tasks` runs
//! eviction and the other timers. `config` turns Spring-style settings into a `Config`.

pub mod config;

mod cache;
mod changes;
mod clock;
mod handlers;
mod http;
mod registration;
mod routes;
mod state;
mod tasks;

use std::future::Future;
use std::io;

use axum::extract::Request;
use axum::ServiceExt;
use tokio::net::TcpListener;
use tower::Layer;
use tower_http::normalize_path::NormalizePathLayer;

use crate::config::Config;
use crate::state::AppState;

/// Serves the API on `listener` until `shutdown` completes, running the background jobs.
pub async fn serve(
    config: Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let state = AppState::new(&config, clock::Clock::System);
    let router = routes::router(
        state.clone(),
        &config.heureka.base_path,
        config.heureka.max_request_body_bytes,
    );
    // Trim trailing slashes before routing: Eureka (Jersey) treats them as optional.
    let app = NormalizePathLayer::trim_trailing_slash().layer(router);
    let mut background = tasks::spawn_all(&state, &config);
    let result = axum::serve(listener, ServiceExt::<Request>::into_make_service(app))
        .with_graceful_shutdown(shutdown)
        .await;
    background.abort_all();
    result
}
