//! Every endpoint of the Eureka REST API, in one table.
//!
//! The API is served under the base path (default `/eureka`) and again under `{base}/v2`,
//! the Netflix WAR layout that eureka-js-client uses by default. Trailing slashes are trimmed
//! before routing (clients fetch `apps/`), and path segments arrive percent-decoded (Python's
//! client sends `127.0.0.1%3Aapp%3A8080`).
//!
//! Beside the API: Spring Boot Actuator's endpoints (`handlers/actuator.rs`), info and
//! metrics behind the same authentication as the API, health and its probes in front of it.
//! Every request passes the observing layer (`http/observe.rs`): metrics, logs. Every answer
//! with a body carries the security headers (`http/security_headers.rs`), and every write a browser sends
//! from another site's page, and every browser request under a `Host` that is not one of this
//! server's names (DNS rebinding), is refused before routing reaches a handler
//! (`http/cross_site.rs`, `http/hosts.rs`).

use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{get, post, put};
use axum::Router;
use tower::ServiceBuilder;

use crate::handlers::{
    actuator, apps, consumers, dashboard, events, health_checks, instances, namespaces, overrides,
    prometheus_sd, push, regions, replication, stamped, status,
};
use crate::http::gate::GateLayer;
use crate::http::{auth, cross_site, decompress, observe, peers_only, security_headers};
use crate::state::SharedState;

/// The API router every namespace shares (its state is the default namespace's; handlers read
/// the state of the request's namespace, `handlers/request.rs`'s `Ns`), before trailing-slash
/// normalisation and namespace dispatch (see [`crate::serve`]). `namespaces_prefix` is where
/// the namespaces are listed.
///
/// The API's routes are registered at their full paths, under both prefixes, rather than
/// nested: a nested router strips its prefix from every request, which rebuilds the URI, and
/// adds a service to clone per request. The layers are one stack, applied once, for the same
/// reason: each `Router::layer` boxes every route again.
pub(crate) fn router(
    state: SharedState,
    base_path: &str,
    max_body_bytes: usize,
    namespaces_prefix: &str,
) -> Router {
    let guarded = api(&format!("{base_path}/v2"))
        .merge(api(base_path))
        .merge(dashboard::pages(&state))
        .merge(actuator_behind_auth(&state))
        .route(namespaces_prefix, get(namespaces::list));
    let creation = GateLayer::of(crate::http::namespace_creation::CreateOnWrite);
    // Outermost, so it times and logs every answer, 401s and unmatched paths included.
    let observing = observe::ObserveLayer(state.clone());
    let cross_site = cross_site::CrossSiteLayer::new(
        &state.security.allowed_origins,
        state.security.allowed_hosts.clone(),
    );
    // Without users configured every request passes with every role, so the check is not
    // installed.
    let auth = state.security.users.is_some().then(|| {
        let guard = auth::Guard::new(state.clone(), base_path);
        middleware::from_fn_with_state(guard, auth::require_user)
    });
    // Replication only from peers, unless `heureka.replication.peers-only=false`.
    let peers_only = state
        .security
        .peers_only
        .then(|| peers_only::PeersOnlyLayer::new(state.clone(), base_path));
    let guarded = guarded.layer(
        ServiceBuilder::new()
            .layer(observing.clone())
            .map_response(security_headers::add as fn(_) -> _)
            // Before authentication and the body: a forged write or a rebinding page's
            // request is refused whatever it carries, and logged once, here.
            .layer(cross_site.clone())
            // Peers may gzip request bodies (`Content-Encoding: gzip`); unknown encodings get
            // 415. Only requests that name an encoding pass through the decoder.
            .layer(decompress::lazy())
            // Applies to the decompressed body, so a small gzip bomb is still refused with 413.
            .layer(DefaultBodyLimit::max(max_body_bytes))
            // Authentication, then the roles matrix (`security/roles.rs`).
            .option_layer(auth)
            // After authentication, so a request without credentials is still a 401.
            .option_layer(peers_only)
            // Last: only a request allowed to make its write creates a namespace.
            .layer(creation),
    );
    guarded
        // Merged last, its fallback is the one kept: unmatched paths are observed (as
        // `unmatched`) and answered 404 whatever the credentials.
        .merge(
            actuator_open(&state).layer(
                ServiceBuilder::new()
                    .layer(observing)
                    .map_response(security_headers::add as fn(_) -> _)
                    // Health is open to anyone, but not to a rebinding page.
                    .layer(cross_site),
            ),
        )
        .with_state(state)
}

/// Every endpoint of the Eureka REST API, under `prefix`.
fn api(prefix: &str) -> Router<SharedState> {
    let at = |path: &str| format!("{prefix}{path}");
    Router::new()
        .route(&at("/apps"), get(apps::all))
        .route(&at("/apps/delta"), get(apps::delta))
        .route(&at("/apps/{app}"), get(apps::one).post(instances::register))
        .route(
            &at("/apps/{app}/{id}"),
            get(instances::one)
                .put(instances::renew)
                .delete(instances::cancel),
        )
        .route(
            &at("/apps/{app}/{id}/status"),
            put(overrides::set_status).delete(overrides::delete_status),
        )
        .route(
            &at("/apps/{app}/{id}/drain"),
            get(consumers::progress).put(consumers::start),
        )
        .route(&at("/consumers"), get(consumers::list))
        .route(&at("/regions"), get(regions::list))
        .route(&at("/peerreplication/drain"), get(consumers::peer_progress))
        .route(
            &at("/apps/{app}/{id}/metadata"),
            put(overrides::update_metadata),
        )
        .route(&at("/instances/{id}"), get(instances::by_id))
        .route(&at("/vips/{vip}"), get(apps::vip))
        .route(&at("/svips/{svip}"), get(apps::svip))
        .route(&at("/asg/{asg}/status"), put(overrides::asg_status))
        .route(&at("/peerreplication/batch"), post(replication::batch))
        .route(&at("/peerreplication/digest"), get(replication::digest))
        .route(&at("/peerreplication/stamped"), post(stamped::batch))
        .route(&at("/peerreplication/copies"), post(stamped::copies))
        .route(
            &at("/peerreplication/health-checks"),
            get(health_checks::checker),
        )
        .route(&at("/status"), get(status::status))
        .route(&at("/events"), get(events::stream))
        .route(&at("/push"), get(push::stream))
        .route(&at("/push/ack"), post(push::ack))
        .route(&at("/prometheus/sd"), get(prometheus_sd::targets))
        .route(&at("/dashboard/summary"), get(dashboard::summary))
        .route(&at("/dashboard/lastn"), get(dashboard::lastn))
        .route(&at("/dashboard/audit"), get(dashboard::audit))
        .route(
            &at("/dashboard/health-checks"),
            get(health_checks::dashboard),
        )
        .route(&at("/dashboard/dashboard.js"), get(dashboard::script))
        .route(&at("/dashboard/dashboard.css"), get(dashboard::style))
}

/// The actuator endpoints that need credentials when authentication is on: info and the
/// metrics, like the API.
fn actuator_behind_auth(state: &SharedState) -> Router<SharedState> {
    let (base, exposed) = (&state.observe.actuator_base_path, state.observe.exposed);
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
    let base = &state.observe.actuator_base_path;
    if !state.observe.exposed.health {
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
