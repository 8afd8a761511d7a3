//! The health checks' two documents: what a peer asks to share the checks
//! (`GET {base}/peerreplication/health-checks`, peers only) and what the dashboard shows of
//! this node's probes (`GET {base}/dashboard/health-checks`).

use axum::response::Response;

use crate::handlers::request::Ns;
use crate::handlers::response::json;

/// This node's tag and whether it checks instances (`health_checks/owners.rs`).
pub(crate) async fn checker(Ns(state): Ns) -> Response {
    let checks = &state.health_checks;
    json(heureka_wire::encode_checker(
        checks.node(),
        checks.enabled(),
    ))
}

/// The latest round of this node's probes, the guard's state and how many nodes share them.
pub(crate) async fn dashboard(Ns(state): Ns) -> Response {
    json(heureka_wire::encode_health_checks(
        &state.health_checks.view(),
    ))
}
