//! The heartbeat's own lane: most requests a registry serves are heartbeats (`PUT
//! {base}/apps/{app}/{id}`, every 30 s from every instance), and the router's general work for
//! each — matching against the whole table, the path's segments copied into the request, the
//! layer stack's services and futures, the extractors — cost more than renewing the lease.
//! [`Dispatch`](crate::dispatch) offers each request to this lane once it knows the namespace;
//! the lane answers only what it can answer exactly as the router would, and hands everything
//! else back untouched.
//!
//! A heartbeat takes the lane when every layer of `routes.rs` would let it through unchanged:
//!
//! * no user is configured (authentication, the roles and the namespace grants are then off:
//!   with users, every heartbeat is checked on the router);
//! * it does not carry a browser's marks (`http/hosts.rs`), so the cross-site and
//!   DNS-rebinding checks pass it (`http/cross_site.rs`);
//! * it carries no `x-netflix-discovery-replication` header, of any value: a peer's replica is
//!   only taken from peers (`http/peers_only.rs`) and its conflict answers a document;
//! * it names no `Content-Encoding`, which the decoder would judge (`http/decompress.rs`);
//! * its namespace exists (a vacant one is the router's, `http/namespace_creation.rs`), and
//!   its application and id hold no percent escape, which the router decodes.
//!
//! It is then renewed by the handler's own function ([`renew_lease`]), answered with the
//! security headers' rule (`http/security_headers.rs`), and observed as the router's
//! observing layer observes it, under the same route template (`http/observe.rs`). The
//! test `tests/it/fast_lane.rs` sends a table of heartbeats, refusals and near misses to a
//! server with the lane and to one without, and requires the same answers and the same metrics.

use std::cell::Cell;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::clock;
use crate::handlers::instances::renew_lease;
use crate::http::hosts::is_a_browser_mark;
use crate::http::observe::{self, Series};
use crate::http::security_headers;
use crate::metrics::{KeptSeries, RequestLabels, RouteLabel};
use crate::security::origins::REPLICATION_HEADER;
use crate::state::SharedState;

thread_local! {
    /// Heartbeats the lane answered on this thread: how the tests tell the lane's answers
    /// from the router's, which must not differ otherwise (a thread's own cell, so no core
    /// waits for another's).
    static ANSWERED: Cell<u64> = const { Cell::new(0) };
}

/// How many heartbeats the lane answered on the calling thread.
pub(crate) fn answered_on_this_thread() -> u64 {
    ANSWERED.get()
}

/// The lane, built once per server.
#[derive(Debug)]
pub(crate) struct FastLane {
    /// The router's state: its observing layer's metrics and logs.
    router_state: SharedState,
    paths: HeartbeatPaths,
}

/// Where heartbeats are sent.
#[derive(Debug)]
struct HeartbeatPaths {
    /// The base path (`/eureka`), under which `/v2` is the second prefix.
    base: String,
    route: Route,
    route_v2: Route,
}

/// A route the router registers the heartbeat under.
#[derive(Debug)]
struct Route {
    /// Its template, as metrics name it.
    label: RouteLabel,
    /// The series of its renewals (`200`), resolved once: most answers count there.
    renewed: KeptSeries,
}

impl FastLane {
    /// The lane of a server over `state`, or `None` when authentication is on.
    pub(crate) fn new(state: &SharedState, base_path: &str) -> Option<Arc<FastLane>> {
        if state.security.users.is_some() {
            return None;
        }
        Some(Arc::new(FastLane {
            router_state: state.clone(),
            paths: HeartbeatPaths::new(base_path),
        }))
    }

    /// The answer to `request` when it is a heartbeat the lane takes, renewed in the
    /// namespace of `state`; `path` is its path within the namespace.
    pub(crate) fn answer(
        &self,
        state: &SharedState,
        request: &Request,
        path: &str,
    ) -> Option<Response> {
        if request.method() != Method::PUT {
            return None;
        }
        let (route, app, id) = self.paths.heartbeat(path)?;
        let headers = request.headers();
        if !plain(headers) {
            return None;
        }
        let started = clock::instant();
        let response = renew_lease(state, app, id, request.uri().query(), headers);
        let response = security_headers::add(response.into_response());
        let series = if response.status() == StatusCode::OK {
            Series::Kept(&route.renewed)
        } else {
            Series::Labels("PUT", route.label.clone())
        };
        observe::answered(
            &self.router_state,
            started,
            series,
            request.uri(),
            &response,
        );
        ANSWERED.set(ANSWERED.get() + 1);
        Some(response)
    }
}

impl HeartbeatPaths {
    fn new(base_path: &str) -> HeartbeatPaths {
        let route = |prefix: &str| {
            let label = RouteLabel::Template(Arc::from(format!("{prefix}/apps/{{app}}/{{id}}")));
            let renewed = KeptSeries::new(RequestLabels {
                method: "PUT",
                route: label.clone(),
                status: StatusCode::OK.as_u16(),
            });
            Route { label, renewed }
        };
        HeartbeatPaths {
            base: base_path.to_owned(),
            route: route(base_path),
            route_v2: route(&format!("{base_path}/v2")),
        }
    }

    /// The route, application and id of a heartbeat's path, `None` for any other path.
    fn heartbeat<'p>(&self, path: &'p str) -> Option<(&Route, &'p str, &'p str)> {
        let rest = path.strip_prefix(self.base.as_str())?;
        let (route, rest) = match rest.strip_prefix("/v2") {
            Some(rest) => (&self.route_v2, rest),
            None => (&self.route, rest),
        };
        let (app, id) = rest.strip_prefix("/apps/")?.split_once('/')?;
        let plain_segment = |segment: &str| {
            !segment.is_empty() && !segment.bytes().any(|byte| matches!(byte, b'/' | b'%'))
        };
        (plain_segment(app) && plain_segment(id)).then_some((route, app, id))
    }
}

/// Whether every layer would pass the request through unchanged (see the module docs): one
/// pass over its headers. A replication header of any value is left to the router, which
/// reads it.
fn plain(headers: &HeaderMap) -> bool {
    !headers.iter().any(|(name, value)| {
        name == header::CONTENT_ENCODING
            || name == REPLICATION_HEADER
            || is_a_browser_mark(name, value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heartbeats_path_names_its_application_and_id() {
        let paths = HeartbeatPaths::new("/eureka");
        let (route, app, id) = paths
            .heartbeat("/eureka/apps/ORDERS/host:orders:8080")
            .unwrap();
        assert_eq!((app, id), ("ORDERS", "host:orders:8080"));
        assert_eq!(route.label, paths.route.label);
        let (route, _, _) = paths.heartbeat("/eureka/v2/apps/ORDERS/i-1").unwrap();
        assert_eq!(route.label, paths.route_v2.label);
    }

    #[test]
    fn other_paths_are_the_routers() {
        let paths = HeartbeatPaths::new("/eureka");
        for path in [
            "/eureka/apps/ORDERS",
            "/eureka/apps/ORDERS/i-1/status",
            "/eureka/apps//i-1",
            "/eureka/apps/ORDERS/",
            "/eureka/apps/ORDERS/host%3A8080",
            "/eurekas/apps/ORDERS/i-1",
            "/other/apps/ORDERS/i-1",
        ] {
            assert!(paths.heartbeat(path).is_none(), "{path}");
        }
    }
}
