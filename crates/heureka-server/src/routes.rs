//! Every endpoint of the Eureka REST API, in one table.
//!
//! The API is served under the base path (default `/eureka`) and again under `{base}/v2`,
//! the Netflix WAR layout that eureka-js-client uses by default. Trailing slashes are trimmed
//! before routing (clients fetch `apps/`), and path segments arrive percent-decoded (Python's
//! client sends `127.0.0.1%3Aapp%3A8080`).

use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{get, post, put};
use axum::Router;
use tower_http::decompression::RequestDecompressionLayer;

use crate::handlers::{apps, instances, overrides, replication, status};
use crate::http::auth;
use crate::state::SharedState;
use crate::{dashboard, events};

/// The API router, before trailing-slash normalisation (see [`crate::serve`]).
pub(crate) fn router(state: SharedState, base_path: &str, max_body_bytes: usize) -> Router {
    let api = Router::new()
        .route("/apps", get(apps::all))
        .route("/apps/delta", get(apps::delta))
        .route("/apps/{app}", get(apps::one).post(instances::register))
        .route(
            "/apps/{app}/{id}",
            get(instances::one)
                .put(instances::renew)
                .delete(instances::cancel),
        )
        .route(
            "/apps/{app}/{id}/status",
            put(overrides::set_status).delete(overrides::delete_status),
        )
        .route("/apps/{app}/{id}/metadata", put(overrides::update_metadata))
        .route("/instances/{id}", get(instances::by_id))
        .route("/vips/{vip}", get(apps::vip))
        .route("/svips/{svip}", get(apps::svip))
        .route("/asg/{asg}/status", put(overrides::asg_status))
        .route("/peerreplication/batch", post(replication::batch))
        .route("/peerreplication/digest", get(replication::digest))
        .route("/status", get(status::status))
        .route("/events", get(events::stream::stream))
        .route("/dashboard/summary", get(dashboard::summary))
        .route("/dashboard/lastn", get(dashboard::lastn))
        .route("/dashboard/dashboard.js", get(dashboard::script))
        .route("/dashboard/dashboard.css", get(dashboard::style));

    Router::new()
        .nest(&format!("{base_path}/v2"), api.clone())
        .nest(base_path, api)
        .merge(dashboard::pages(&state))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::require_basic_auth,
        ))
        // Applies to the decompressed body, so a small gzip bomb is still refused with 413.
        .layer(DefaultBodyLimit::max(max_body_bytes))
        // Peers may gzip request bodies (`Content-Encoding: gzip`); unknown encodings get 415.
        .layer(RequestDecompressionLayer::new())
        .with_state(state)
}
