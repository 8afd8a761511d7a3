//! The dashboard's routes (`dashboard.rs` says what it is): the page, its script and stylesheet,
//! and the three documents only it reads, `{base}/dashboard/summary`, `{base}/dashboard/lastn`
//! and `{base}/dashboard/audit`.

use axum::extract::State;
use axum::http::{header, Extensions, HeaderValue};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use heureka_wire::DashboardSummary;

use crate::dashboard::{SCRIPT, STYLE};
use crate::handlers::response::json;
use crate::http::principal;
use crate::http::security_headers::PAGE_POLICY;
use crate::security::roles::Role;
use crate::state::SharedState;

/// The page's two routes, `{path}` and `{path}/lastn`, or none when the dashboard is off.
pub(crate) fn pages(state: &SharedState) -> Router<SharedState> {
    let info = &state.observe.dashboard;
    if !info.enabled {
        return Router::new();
    }
    let lastn = if info.path == "/" {
        "/lastn".to_owned()
    } else {
        format!("{}/lastn", info.path)
    };
    Router::new()
        .route(&info.path, get(page))
        .route(&lastn, get(page))
}

/// The same page for both views; the script picks the view from the URL. It carries its own
/// Content-Security-Policy, which lets it load its script and stylesheet.
async fn page(State(state): State<SharedState>) -> Response {
    let mut response = Html(state.observe.dashboard.page.clone()).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_SECURITY_POLICY, PAGE_POLICY);
    response
}

pub(crate) async fn script() -> Response {
    asset(SCRIPT, "text/javascript; charset=utf-8")
}

pub(crate) async fn style() -> Response {
    asset(STYLE, "text/css; charset=utf-8")
}

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// `GET {base}/dashboard/summary`, with what the user asking may do.
pub(crate) async fn summary(State(state): State<SharedState>, extensions: Extensions) -> Response {
    let now = state.store.now();
    let (self_preservation, node_status) = {
        let registry = state.store.read();
        let node_status = registry
            .own_instance_id()
            .and_then(|id| registry.instance_by_id(id, now))
            .map_or("UP", |instance| instance.status.as_str());
        (state.events.feed.status_of(&registry, now), node_status)
    };
    let info = &state.observe.dashboard;
    let summary = DashboardSummary {
        environment: info.environment.clone(),
        datacenter: info.datacenter.clone(),
        now,
        started_at: state.node.started_at,
        wait_time_in_ms_when_sync_empty: state.events.feed.wait_time_in_ms_when_sync_empty(),
        self_preservation,
        node_host_name: info.node_host_name.clone(),
        node_ip_addr: info.node_ip_addr.clone(),
        node_status: node_status.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        may_admin: principal::of(&extensions).grant().roles.has(Role::Admin),
        persistence: state.persistence_view(),
        // Filled as the other protocols (HTTP SD, DNS, xDS) land.
        fleet: Vec::new(),
    };
    json(heureka_wire::encode_dashboard_summary(&summary))
}

/// `GET {base}/dashboard/lastn`.
pub(crate) async fn lastn(State(state): State<SharedState>) -> Response {
    json(state.events.feed.lastn_json())
}

/// `GET {base}/dashboard/audit`: the audit entries kept (`heureka.audit.retained`), newest
/// first; empty when `heureka.audit.enabled=false`.
pub(crate) async fn audit(State(state): State<SharedState>) -> Response {
    json(state.observe.audit.recent_json())
}
