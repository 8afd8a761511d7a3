//! The dashboard's routes (`dashboard.rs` says what it is): the page, its script and stylesheet,
//! and the three documents only it reads, `{base}/dashboard/summary`, `{base}/dashboard/lastn`
//! and `{base}/dashboard/audit`.

use axum::extract::Extension;
use axum::http::{header, HeaderValue};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use heureka_wire::{DashboardSummary, FleetEndpoint};

use crate::dashboard::{SCRIPT, STYLE};
use crate::handlers::request::Ns;
use crate::handlers::response::json;
use crate::http::security_headers::PAGE_POLICY;
use crate::namespaces::Vacancy;
use crate::security::principal::Principal;
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
/// Content-Security-Policy, which lets it load its script and stylesheet. In a namespace not
/// created yet (the vacant one answers) it is the page of the name asked for, empty until its
/// first registration.
async fn page(Ns(state): Ns, vacancy: Option<Extension<Vacancy>>) -> Response {
    let name = vacancy
        .as_ref()
        .map_or(&state.namespace, |vacancy| &vacancy.name);
    let mut response = Html(state.observe.dashboard.page_in(name)).into_response();
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
pub(crate) async fn summary(Ns(state): Ns, principal: Principal) -> Response {
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
        may_admin: principal.grant().roles.has(Role::Admin),
        persistence: state.persistence_view(),
        fleet: fleet(&state),
    };
    json(heureka_wire::encode_dashboard_summary(&summary))
}

/// The other protocols the registry is served over, as System Status shows them.
fn fleet(state: &SharedState) -> Vec<FleetEndpoint> {
    let figures = |pairs: &[(&str, u64)]| {
        pairs
            .iter()
            .map(|(label, value)| ((*label).to_owned(), *value))
            .collect()
    };
    let bound = |address: Option<std::net::SocketAddr>| {
        address.map_or_else(|| "not bound".to_owned(), |a| a.to_string())
    };
    let sd = state.caches.prometheus_sd.status();
    let dns = state.dns.status();
    let xds = state.xds.status();
    vec![
        FleetEndpoint {
            name: "Prometheus HTTP SD".into(),
            key: "heureka.prometheus-sd.enabled".into(),
            enabled: sd.enabled,
            // The page puts its own base path in.
            address: "{base}/prometheus/sd".into(),
            figures: figures(&[
                ("targets", sd.last_targets),
                ("answers built", sd.answers_built),
                ("reused", sd.answers_reused),
                ("not modified", sd.not_modified),
            ]),
            last_error: None,
        },
        FleetEndpoint {
            name: "DNS".into(),
            key: "heureka.dns.enabled".into(),
            enabled: dns.enabled,
            address: bound(dns.address),
            figures: figures(&[
                ("queries", dns.queries),
                ("answered", dns.answered),
                ("NXDOMAIN", dns.nxdomain),
                ("rate-limited", dns.rate_limited),
                ("truncated", dns.truncated),
            ]),
            last_error: None,
        },
        FleetEndpoint {
            name: "xDS".into(),
            key: "heureka.xds.enabled".into(),
            enabled: xds.enabled,
            address: bound(xds.address),
            figures: figures(&[
                ("streams", u64::try_from(xds.streams).unwrap_or(0)),
                ("responses", xds.responses),
                ("NACKs", xds.nacks),
            ]),
            last_error: xds.last_nack,
        },
    ]
}

/// `GET {base}/dashboard/lastn`.
pub(crate) async fn lastn(Ns(state): Ns) -> Response {
    json(state.events.feed.lastn_json())
}

/// `GET {base}/dashboard/audit`: the audit entries kept (`heureka.audit.retained`) of this
/// namespace, newest first; empty when `heureka.audit.enabled=false`.
pub(crate) async fn audit(Ns(state): Ns, vacancy: Option<Extension<Vacancy>>) -> Response {
    let name = vacancy
        .as_ref()
        .map_or(&state.namespace, |vacancy| &vacancy.name);
    json(state.observe.audit.recent_json(name))
}
