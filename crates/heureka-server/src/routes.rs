//! Every endpoint of the Eureka REST API, in one table.
//!
//! The API is served under the base path (default `/eureka`) and again under `{base}/v2`,
//! the Netflix WAR layout that eureka-js-client uses by default. Trailing slashes are trimmed
//! before routing (clients fetch `apps/`), and path segments arrive percent-decoded (Python's
//! client sends `127.0.0.1%3Aapp%3A8080`).
//!
//! Beside the API: Spring Boot Actuator's endpoints (`handlers/actuator.rs`), info and
//! metrics behind the same authentication as the API, health and its probes in front of it.
//! Every request passes the observing layer (`http/observe.rs`): metrics, logs.

use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{get, post, put};
use axum::Router;
use tower_http::decompression::RequestDecompressionLayer;

use crate::handlers::{actuator, apps, instances, overrides, replication, status};
use crate::http::{auth, observe};
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
        .merge(actuator_behind_auth(&state))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::require_basic_auth,
        ))
        // Applies to the decompressed body, so a small gzip bomb is still refused with 413.
        .layer(DefaultBodyLimit::max(max_body_bytes))
        // Peers may gzip request bodies (`Content-Encoding: gzip`); unknown encodings get 415.
        .layer(RequestDecompressionLayer::new())
        .merge(actuator_open(&state))
        // Outermost, so it times and logs every answer, 401s and unmatched paths included.
        .layer(middleware::from_fn_with_state(
            state.clone(),
            observe::observe,
        ))
        .with_state(state)
}

/// The actuator endpoints that need credentials when authentication is on: info and the
/// metrics, like the API.
fn actuator_behind_auth(state: &SharedState) -> Router<SharedState> {
    let (base, exposed) = (&state.settings.actuator_base_path, state.settings.exposed);
    let mut router = Router::new();
    if exposed.info {
        router = router.route(&format!("{base}/info"), get(actuator::info));
    }
    if exposed.prometheus {
        router = router
            .route(&format!("{base}/prometheus"), get(actuator::prometheus))
            .route("/metrics", get(actuator::prometheus));
    }
    router
}

/// Health answers without credentials, as Kubernetes probes and load balancers need: the
/// probes with a status only, `health` with details only for authorized requests (by default).
fn actuator_open(state: &SharedState) -> Router<SharedState> {
    let base = &state.settings.actuator_base_path;
    if !state.settings.exposed.health {
        return Router::new();
    }
    Router::new()
        .route(&format!("{base}/health"), get(actuator::health))
        .route(&format!("{base}/health/liveness"), get(actuator::liveness))
        .route(
            &format!("{base}/health/readiness"),
            get(actuator::readiness),
        )
}
