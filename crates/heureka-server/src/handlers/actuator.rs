//! Spring Boot Actuator's operator endpoints under `management.endpoints.web.base-path`
//! (default `/actuator`): `health` with its `liveness` and `readiness` groups, `info`, and
//! `prometheus` (also at `/metrics`).
//!
//! Readiness follows Eureka's open-for-traffic rule: OUT_OF_SERVICE (503), as Boot's
//! readiness state reports refusing traffic, until the start-up sync from the peers is done
//! and registry reads are served ([`AppState::is_ready`](crate::state::AppState::is_ready)).
//! Liveness is UP whenever the server answers at all.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use heureka_wire::{BuildInfo, HealthComponents, HealthStatus, RegistryHealth};

use crate::config::ShowDetails;
use crate::connection::ClientCertificate;
use crate::handlers::request::Headers;
use crate::handlers::request::Ns;
use crate::handlers::status::peer_status;
use crate::http::auth;
use crate::state::SharedState;

/// Boot's actuator media type, sent unless the client asked for plain JSON.
const ACTUATOR_V3_JSON: &str = "application/vnd.spring-boot.actuator.v3+json";

/// `GET {actuator}/health`: the overall status, with components when details are shown.
pub(crate) async fn health(
    Ns(state): Ns,
    certificate: Option<Extension<ClientCertificate>>,
    Headers(headers): Headers,
) -> Response {
    let components = components(&state);
    let status = components.status();
    let details = match state.observe.show_details {
        ShowDetails::Always => true,
        ShowDetails::WhenAuthorized => {
            let certificate = certificate.map(|Extension(certificate)| certificate);
            auth::is_authorized(&state, &headers, certificate).await
        }
        ShowDetails::Never => false,
    };
    let body = heureka_wire::encode_health(status, details.then_some(&components));
    health_response(status, body, &headers)
}

/// `GET {actuator}/health/liveness`: status only, never behind authentication.
pub(crate) async fn liveness(Headers(headers): Headers) -> Response {
    let status = HealthStatus::Up;
    health_response(status, heureka_wire::encode_health(status, None), &headers)
}

/// `GET {actuator}/health/readiness`: status only, never behind authentication.
pub(crate) async fn readiness(Ns(state): Ns, Headers(headers): Headers) -> Response {
    let status = readiness_status(&state);
    health_response(status, heureka_wire::encode_health(status, None), &headers)
}

/// `GET {actuator}/info`: what was built, and from which commit when the build knew it.
pub(crate) async fn info(Ns(state): Ns, Headers(headers): Headers) -> Response {
    let info = BuildInfo {
        app_name: state.node.application_name.to_lowercase(),
        artifact: env!("CARGO_PKG_NAME").to_owned(),
        name: "heureka".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        git_commit: option_env!("HEUREKA_GIT_SHA").map(str::to_owned),
    };
    json_response(StatusCode::OK, heureka_wire::encode_info(&info), &headers)
}

/// `GET {actuator}/prometheus` and `GET /metrics`: OpenMetrics text when the scraper asks for
/// it (Prometheus does), the classic text format 0.0.4 otherwise.
pub(crate) async fn prometheus(Ns(state): Ns, Headers(headers): Headers) -> Response {
    let openmetrics = headers
        .get(header::ACCEPT)
        .and_then(|accept| accept.to_str().ok())
        .is_some_and(|accept| accept.contains("application/openmetrics-text"));
    let content_type = if openmetrics {
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    } else {
        "text/plain; version=0.0.4; charset=utf-8"
    };
    let text = state
        .observe
        .metrics
        .encode(|| state.metrics_snapshot(), openmetrics);
    let mut response = (StatusCode::OK, text).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn readiness_status(state: &SharedState) -> HealthStatus {
    if state.is_ready() {
        HealthStatus::Up
    } else {
        HealthStatus::OutOfService
    }
}

fn components(state: &SharedState) -> HealthComponents {
    let registry = {
        let registry = state.store.read();
        let numbers = registry.self_preservation();
        let versions = registry.application_versions();
        RegistryHealth {
            applications: versions.len() as u64,
            instances: registry.registry_size() as u64,
            renews_last_minute: numbers.renews_last_min,
            renews_threshold: u64::from(numbers.renews_threshold),
            expected_clients: u64::from(numbers.expected_clients),
            self_preservation_active: !numbers.lease_expiration_enabled,
        }
    };
    HealthComponents {
        liveness: HealthStatus::Up,
        readiness: readiness_status(state),
        registry,
        peers: state
            .replication
            .peer_states()
            .iter()
            .map(peer_status)
            .collect(),
        persistence: state.persistence_view(),
    }
}

fn health_response(status: HealthStatus, body: Vec<u8>, headers: &HeaderMap) -> Response {
    let code = StatusCode::from_u16(status.http_code()).unwrap_or(StatusCode::OK);
    json_response(code, body, headers)
}

/// Boot answers `application/json` to a client that asks for exactly that, and its own v3
/// media type to everyone else (browsers, curl, probes).
fn json_response(code: StatusCode, body: Vec<u8>, headers: &HeaderMap) -> Response {
    let wants_plain_json = headers
        .get(header::ACCEPT)
        .and_then(|accept| accept.to_str().ok())
        .is_some_and(|accept| {
            accept.contains("application/json") && !accept.contains(ACTUATOR_V3_JSON)
        });
    let content_type = if wants_plain_json {
        "application/json"
    } else {
        ACTUATOR_V3_JSON
    };
    let mut response = (code, body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
