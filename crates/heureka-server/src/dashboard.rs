//! The dashboard (`docs/dashboard.md`): one page served by the binary at `/` (or
//! `eureka.dashboard.path`, off with `eureka.dashboard.enabled=false`), with its script and
//! stylesheet embedded at compile time, so running it needs no build step and no network.
//!
//! The page reads what every client reads (`{base}/apps`, `{base}/status`), the event stream
//! (`{base}/events`) for live updates, and two small documents that exist for it:
//! `{base}/dashboard/summary` (System Status: environment, data center, uptime and the
//! self-preservation numbers) and `{base}/dashboard/lastn` (Spring's last 1,000 registered
//! and cancelled leases). Its actions are the ordinary REST calls, with the same auth.

use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use heureka_core::Millis;
use heureka_wire::DashboardSummary;

use crate::config::Config;
use crate::state::SharedState;

const PAGE: &str = include_str!("dashboard/index.html");
const SCRIPT: &str = include_str!("dashboard/dashboard.js");
const STYLE: &str = include_str!("dashboard/dashboard.css");

/// What the dashboard shows that the rest of the state does not hold.
#[derive(Debug)]
pub(crate) struct DashboardInfo {
    pub(crate) enabled: bool,
    /// `/` or a path without a trailing `/`.
    pub(crate) path: String,
    environment: String,
    datacenter: String,
    node_host_name: String,
    node_ip_addr: String,
    /// The page with the base path filled in, rendered once.
    page: String,
}

impl DashboardInfo {
    pub(crate) fn new(config: &Config, port: u16, now: Millis) -> DashboardInfo {
        let node = crate::own_instance::own_instance(config, port, now);
        let dashboard = &config.dashboard;
        let lastn = if dashboard.path == "/" {
            "/lastn".to_owned()
        } else {
            format!("{}/lastn", dashboard.path)
        };
        DashboardInfo {
            enabled: dashboard.enabled,
            path: dashboard.path.clone(),
            environment: dashboard.environment.clone(),
            datacenter: dashboard.datacenter.clone(),
            node_host_name: node.host_name,
            node_ip_addr: node.ip_addr,
            page: PAGE
                .replace("__BASE__", &config.heureka.base_path)
                .replace("__HOME__", &dashboard.path)
                .replace("__LASTN__", &lastn),
        }
    }
}

/// The page's two routes, `{path}` and `{path}/lastn`, or none when the dashboard is off.
pub(crate) fn pages(state: &SharedState) -> Router<SharedState> {
    let info = &state.dashboard;
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

/// The same page for both views; the script picks the view from the URL.
async fn page(State(state): State<SharedState>) -> Html<String> {
    Html(state.dashboard.page.clone())
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

/// `GET {base}/dashboard/summary`.
pub(crate) async fn summary(State(state): State<SharedState>) -> Response {
    let now = state.store.now();
    let (self_preservation, node_status) = {
        let registry = state.store.read();
        let node_status = registry
            .own_instance_id()
            .and_then(|id| registry.instance_by_id(id, now))
            .map_or("UP", |instance| instance.status.as_str());
        (state.events.status_of(&registry, now), node_status)
    };
    let info = &state.dashboard;
    let summary = DashboardSummary {
        environment: info.environment.clone(),
        datacenter: info.datacenter.clone(),
        now,
        started_at: state.started_at,
        wait_time_in_ms_when_sync_empty: state.events.wait_time_in_ms_when_sync_empty(),
        self_preservation,
        node_host_name: info.node_host_name.clone(),
        node_ip_addr: info.node_ip_addr.clone(),
        node_status: node_status.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    json(heureka_wire::encode_dashboard_summary(&summary))
}

/// `GET {base}/dashboard/lastn`.
pub(crate) async fn lastn(State(state): State<SharedState>) -> Response {
    json(state.events.lastn_json())
}

fn json(body: Vec<u8>) -> Response {
    let mut response = body.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
