//! The lane of heartbeats, registrations and registry fetches: most requests a registry serves
//! are heartbeats (`PUT {base}/apps/{app}/{id}`, every 30 s from every instance) and fetches
//! (`GET {base}/apps/delta` every 30 s from every client, `GET {base}/apps` at its start and
//! when its delta does not add up) and, when a fleet starts or rolls, registrations
//! (`POST {base}/apps/{app}`). The router's general work for each — matching against the whole
//! table, the path's segments copied into the request, the layer stack's services and
//! futures, the extractors — costs more than renewing the lease, about as much as registering
//! the instance, and about as much as taking a cached document. [`Dispatch`](crate::dispatch)
//! offers each request to this lane once it knows the namespace; the lane answers only what it
//! can answer exactly as the router would, and hands everything else back untouched.
//!
//! A heartbeat, registration or fetch takes the lane when every layer of `routes.rs` would let
//! it through unchanged:
//!
//! * no user is configured (authentication, the roles and the namespace grants are then off:
//!   with users, every request is checked on the router);
//! * it does not carry a browser's marks (`http/hosts.rs`), so the cross-site and
//!   DNS-rebinding checks pass it (`http/cross_site.rs`);
//! * it carries no `x-netflix-discovery-replication` header, of any value: a peer's replica is
//!   only taken from peers (`http/peers_only.rs`) and its conflict answers a document;
//! * it names no `Content-Encoding`, which the decoder would judge (`http/decompress.rs`);
//! * its namespace exists (a vacant one is the router's, `http/namespace_creation.rs`), and
//!   its application and id hold no percent escape, which the router decodes;
//! * a registration's application is not `delta`, whose path is the delta's route, where the
//!   router answers a `POST` 405;
//! * a fetch is a `GET` (the router answers a `HEAD` too, without the body) of `{base}/apps`
//!   or `{base}/apps/delta` as they are spelled, under either prefix; its query is the
//!   handler's to read, as on the router.
//!
//! A heartbeat is then renewed by the handler's own function ([`renew_lease`]); a
//! registration's body is read under the router's body limit (`DefaultBodyLimit`, 413 past it)
//! and registered by its handler's function ([`register_instance`]); a fetch is answered by
//! its handler's function ([`fetch`]), which books the consumer. Each answer gets the
//! security headers' rule (`http/security_headers.rs`) and is observed as the router's
//! observing layer observes it, under the same route template (`http/observe.rs`). The test
//! `tests/it/fast_lane.rs` sends a table of heartbeats, registrations, fetches, refusals and
//! near misses to a server with the lane and to one without, and requires the same answers,
//! the same registries, the same consumers and the same metrics.
//!
//! A heartbeat is offered here even before the listener's per-request work, through
//! [`Dispatch`](crate::dispatch)'s `AnswersAtOnce` (`connection.rs`): it has no body and its
//! renewal reads only the method, the URI and the headers, so wrapping its body, putting its
//! sender in the extensions and boxing its future cost an eighth of its instructions.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Request};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use heureka_core::Origin;

use crate::clock;
use crate::connection::Sender;
use crate::handlers::apps::{fetch, Document};
use crate::handlers::instances::{register_instance, renew_lease};
use crate::handlers::request::QueryParams;
use crate::http::hosts::is_a_browser_mark;
use crate::http::observe::{self, Series};
use crate::http::scan;
use crate::http::{principal, security_headers};
use crate::metrics::{KeptSeries, RequestLabels, RouteLabel};
use crate::security::origins::REPLICATION_HEADER;
use crate::state::SharedState;

thread_local! {
    /// Requests the lane answered on this thread: how the tests tell the lane's answers from
    /// the router's, which must not differ otherwise (a thread's own cell, so no core waits
    /// for another's).
    static ANSWERED: Cell<u64> = const { Cell::new(0) };
}

/// How many requests the lane answered on the calling thread.
pub(crate) fn answered_on_this_thread() -> u64 {
    ANSWERED.get()
}

/// An answer under way: a registration's body is still to be read, a fetch's document may be
/// still to build.
pub(crate) type Pending = Pin<Box<dyn Future<Output = Response> + Send>>;

/// The lane, built once per server.
#[derive(Debug)]
pub(crate) struct FastLane {
    /// The router's state: its observing layer's metrics and logs.
    router_state: SharedState,
    paths: LanePaths,
    /// The router's limit on a request body (`heureka.max-request-body-bytes`).
    max_body_bytes: usize,
}

/// Where heartbeats and registrations are sent.
#[derive(Debug)]
struct LanePaths {
    /// `{base}/apps` and `{base}/v2/apps` (`/eureka/apps`, `/eureka/v2/apps`): a path is
    /// compared with one of them whole, rather than part by part.
    apps: String,
    v2_apps: String,
    plain: Routes,
    v2: Routes,
}

/// The routes of one prefix the lane takes.
#[derive(Debug)]
struct Routes {
    heartbeat: Route,
    register: Route,
    full: Route,
    delta: Route,
}

/// A route the router registers a request the lane takes under.
#[derive(Debug)]
struct Route {
    method: &'static str,
    /// Its template, as metrics name it.
    label: RouteLabel,
    /// The series of its usual answer (a renewal's `200`, a registration's `204`), resolved
    /// once: most answers count there.
    usual: KeptSeries,
}

/// A request the lane takes and answers later, and which prefix it came under: a
/// registration (its application owned, so that the request can move into the answer) or a
/// fetch.
#[derive(Debug)]
pub(crate) enum Later {
    Registration { v2: bool, app: String },
    Fetch { v2: bool, which: Document },
}

impl FastLane {
    /// The lane of a server over `state`, or `None` when authentication is on.
    pub(crate) fn new(
        state: &SharedState,
        base_path: &str,
        max_body_bytes: usize,
    ) -> Option<Arc<FastLane>> {
        if state.security.users.is_some() {
            return None;
        }
        Some(Arc::new(FastLane {
            router_state: state.clone(),
            paths: LanePaths::new(base_path),
            max_body_bytes,
        }))
    }

    /// The answer to `request` when it is a heartbeat the lane takes, renewed in the
    /// namespace of `state`; `path` is its path within the namespace.
    pub(crate) fn renew<B>(
        &self,
        state: &SharedState,
        request: &axum::http::Request<B>,
        path: &str,
    ) -> Option<Response> {
        // Not a heartbeat's method, not worth a pass over the headers (fetches and
        // registrations come this way).
        if request.method() != Method::PUT || !plain(request.headers()) {
            return None;
        }
        self.renew_plain(state, request, path)
    }

    /// [`FastLane::renew`] for a request whose headers are known to be plain
    /// ([`passes_unchanged`] for each): the dispatcher looks at them once for both.
    pub(crate) fn renew_plain<B>(
        &self,
        state: &SharedState,
        request: &axum::http::Request<B>,
        path: &str,
    ) -> Option<Response> {
        if request.method() != Method::PUT {
            return None;
        }
        let (routes, app, id) = self.paths.heartbeat(path)?;
        let headers = request.headers();
        let started = clock::instant();
        // A client's heartbeat: the headers were found plain, so none is a replication header.
        let query = request.uri().query();
        let response = renew_lease(state, app, id, query, headers, Origin::Client);
        let response = security_headers::add(response.into_response());
        self.observe(&routes.heartbeat, started, request.uri(), &response);
        Some(response)
    }

    /// The registration or fetch `request` is when the lane takes it; `path` is its path
    /// within the namespace.
    pub(crate) fn later(&self, request: &Request, path: &str) -> Option<Later> {
        let headers = request.headers();
        match *request.method() {
            Method::POST => {
                let (v2, app) = self.paths.registration(path)?;
                plain(headers).then(|| Later::Registration {
                    v2,
                    app: app.to_owned(),
                })
            }
            Method::GET => {
                let (v2, which) = self.paths.fetch(path)?;
                plain(headers).then_some(Later::Fetch { v2, which })
            }
            _ => None,
        }
    }

    /// The answer to `later`, which `request` is, in the namespace of `state`.
    pub(crate) fn answer(
        self: Arc<Self>,
        state: SharedState,
        later: Later,
        request: Request,
    ) -> Pending {
        match later {
            Later::Registration { v2, app } => Box::pin(self.register(state, v2, app, request)),
            Later::Fetch { v2, which } => Box::pin(self.fetch(state, v2, which, request)),
        }
    }

    /// A registration of `app`, whose body `request` carries.
    async fn register(
        self: Arc<Self>,
        state: SharedState,
        v2: bool,
        app: String,
        mut request: Request,
    ) -> Response {
        let started = clock::instant();
        // As the router's extractors leave it: the limit where its layer puts it, the
        // headers moved out before the body is read.
        DefaultBodyLimit::max(self.max_body_bytes).apply(&mut request);
        let headers = std::mem::take(request.headers_mut());
        let uri = std::mem::take(request.uri_mut());
        let body = Bytes::from_request(request, &()).await;
        let response = register_instance(&state, &app, &headers, body);
        let response = security_headers::add(response.into_response());
        self.observe(&self.paths.routes(v2).register, started, &uri, &response);
        response
    }

    /// A fetch of the document `which`, as its extractors hand `request` to the handler.
    async fn fetch(
        self: Arc<Self>,
        state: SharedState,
        v2: bool,
        which: Document,
        request: Request,
    ) -> Response {
        let started = clock::instant();
        let sender = request.extensions().get::<Sender>().copied();
        let principal = principal::of(request.extensions());
        let (parts, _) = request.into_parts();
        let query = QueryParams::new(parts.uri);
        let response = fetch(&state, sender, &principal, &query, &parts.headers, which).await;
        let response = security_headers::add(response.into_response());
        let routes = self.paths.routes(v2);
        let route = match which {
            Document::AllApps => &routes.full,
            Document::Delta => &routes.delta,
        };
        self.observe(route, started, query.uri(), &response);
        response
    }

    /// Observes an answer of `route` as the router's observing layer would.
    fn observe(&self, route: &Route, started: clock::Instant, uri: &Uri, response: &Response) {
        let series = if response.status().as_u16() == route.usual.labels().status {
            Series::Kept(&route.usual)
        } else {
            Series::Labels(route.method, route.label.clone())
        };
        observe::answered(&self.router_state, started, series, uri, response);
        ANSWERED.set(ANSWERED.get() + 1);
    }
}

impl LanePaths {
    fn new(base_path: &str) -> LanePaths {
        let route = |method: &'static str, template: String, usual: StatusCode| {
            let label = RouteLabel::Template(Arc::from(template));
            let usual = KeptSeries::new(RequestLabels {
                method,
                route: label.clone(),
                status: usual.as_u16(),
            });
            Route {
                method,
                label,
                usual,
            }
        };
        let routes = |prefix: &str| Routes {
            heartbeat: route(
                "PUT",
                format!("{prefix}/apps/{{app}}/{{id}}"),
                StatusCode::OK,
            ),
            register: route(
                "POST",
                format!("{prefix}/apps/{{app}}"),
                StatusCode::NO_CONTENT,
            ),
            full: route("GET", format!("{prefix}/apps"), StatusCode::OK),
            delta: route("GET", format!("{prefix}/apps/delta"), StatusCode::OK),
        };
        LanePaths {
            apps: format!("{base_path}/apps"),
            v2_apps: format!("{base_path}/v2/apps"),
            plain: routes(base_path),
            v2: routes(&format!("{base_path}/v2")),
        }
    }

    fn routes(&self, v2: bool) -> &Routes {
        if v2 {
            &self.v2
        } else {
            &self.plain
        }
    }

    /// Whether `path` is under the `/v2` prefix, and what follows `{prefix}/apps`; `None` for
    /// a path under neither prefix's applications.
    fn after_apps<'p>(&self, path: &'p str) -> Option<(bool, &'p str)> {
        match path.strip_prefix(self.apps.as_str()) {
            Some(rest) => Some((false, rest)),
            None => Some((true, path.strip_prefix(self.v2_apps.as_str())?)),
        }
    }

    /// Whether `path` is under the `/v2` prefix, and what follows `{prefix}/apps/`; `None`
    /// for a path under neither prefix's applications.
    fn under_apps<'p>(&self, path: &'p str) -> Option<(bool, &'p str)> {
        let (v2, rest) = self.after_apps(path)?;
        Some((v2, rest.strip_prefix('/')?))
    }

    /// Whether a fetch's path is under `/v2`, and the document it fetches; `None` for any
    /// other path.
    fn fetch(&self, path: &str) -> Option<(bool, Document)> {
        match self.after_apps(path)? {
            (v2, "") => Some((v2, Document::AllApps)),
            (v2, "/delta") => Some((v2, Document::Delta)),
            _ => None,
        }
    }

    /// The routes, application and id of a heartbeat's path, `None` for any other path.
    fn heartbeat<'p>(&self, path: &'p str) -> Option<(&Routes, &'p str, &'p str)> {
        let (v2, rest) = self.under_apps(path)?;
        let (app, id) = app_and_id(rest)?;
        Some((self.routes(v2), app, id))
    }

    /// Whether a registration's path is under `/v2`, and its application; `None` for any
    /// other path.
    fn registration<'p>(&self, path: &'p str) -> Option<(bool, &'p str)> {
        let (v2, app) = self.under_apps(path)?;
        (plain_segment(app) && app != "delta").then_some((v2, app))
    }
}

/// A path segment the router would pass to a handler as it is: not empty, one segment, no
/// percent escape to decode.
fn plain_segment(segment: &str) -> bool {
    !segment.is_empty() && !segment.bytes().any(|byte| matches!(byte, b'/' | b'%'))
}

/// `{app}/{id}` as two plain segments (see [`plain_segment`]), in one scan for the marks.
fn app_and_id(rest: &str) -> Option<(&str, &str)> {
    const MARKS: [u8; 2] = [b'/', b'%'];
    let bytes = rest.as_bytes();
    let slash = scan::next_mark(bytes, 0, MARKS).filter(|&at| bytes[at] == b'/')?;
    if scan::next_mark(bytes, slash + 1, MARKS).is_some() {
        return None;
    }
    // `/` is ASCII: the cut falls on a character boundary.
    let (app, id) = (&rest[..slash], &rest[slash + 1..]);
    (!app.is_empty() && !id.is_empty()).then_some((app, id))
}

/// Whether every layer would pass the request through unchanged (see the module docs): one
/// pass over its headers.
fn plain(headers: &HeaderMap) -> bool {
    headers
        .iter()
        .all(|(name, value)| passes_unchanged(name, value))
}

/// Whether every layer would pass one header unchanged. A replication header of any value is
/// left to the router, which reads it.
pub(crate) fn passes_unchanged(name: &HeaderName, value: &HeaderValue) -> bool {
    !(name == header::CONTENT_ENCODING
        || name == REPLICATION_HEADER
        || is_a_browser_mark(name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heartbeats_path_names_its_application_and_id() {
        let paths = LanePaths::new("/eureka");
        let (routes, app, id) = paths
            .heartbeat("/eureka/apps/ORDERS/host:orders:8080")
            .unwrap();
        assert_eq!((app, id), ("ORDERS", "host:orders:8080"));
        assert_eq!(routes.heartbeat.label, paths.plain.heartbeat.label);
        let (routes, _, _) = paths.heartbeat("/eureka/v2/apps/ORDERS/i-1").unwrap();
        assert_eq!(routes.heartbeat.label, paths.v2.heartbeat.label);
    }

    #[test]
    fn other_paths_are_not_heartbeats() {
        let paths = LanePaths::new("/eureka");
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

    #[test]
    fn a_registrations_path_names_its_application() {
        let paths = LanePaths::new("/eureka");
        assert_eq!(
            paths.registration("/eureka/apps/ORDERS"),
            Some((false, "ORDERS"))
        );
        assert_eq!(
            paths.registration("/eureka/v2/apps/orders"),
            Some((true, "orders"))
        );
    }

    #[test]
    fn other_paths_are_not_registrations() {
        let paths = LanePaths::new("/eureka");
        for path in [
            "/eureka/apps",
            "/eureka/apps/",
            "/eureka/apps/delta",
            "/eureka/apps/ORDERS/i-1",
            "/eureka/apps/OR%44ERS",
            "/eurekas/apps/ORDERS",
            "/other/apps/ORDERS",
        ] {
            assert!(paths.registration(path).is_none(), "{path}");
        }
    }
}
