//! The service every connection is handed: it finds a request's namespace, puts its state in
//! the request ([`InNamespace`], which handlers read through `handlers/request.rs`'s `Ns`),
//! and hands the request to the one router every namespace shares.
//!
//! A path under `{prefix}/{name}` names the namespace, and loses that part, so the router
//! sees the path a client of the default namespace sends (`/ns/team-a/eureka/apps` is
//! `/eureka/apps` in `team-a`). Without it, Polaris' `x-namespace` header names one. Neither:
//! the default namespace, whose state is the router's own, at the cost of one prefix
//! comparison and one pass over its few headers. A name not created yet goes to the vacant
//! namespace, marked with a [`Vacancy`] so that a write that creates one can
//! (`http/namespace_creation.rs`). `{prefix}` alone is the listing (`handlers/namespaces.rs`), given the directory in the request.
//!
//! Once the namespace is known, heartbeats, registrations and registry fetches are offered to
//! the fast lane (`fast_lane.rs`), which answers them without the router, and without
//! rewriting a namespaced path. The listener asks first whether a bodiless request can be
//! answered at once ([`AnswersAtOnce`]): a heartbeat the lane takes is, from the same
//! namespace and path [`Dispatch::route`] would find.
//!
//! One router for all, rather than one per namespace: a namespace costs no router's memory,
//! and requests to many namespaces run through the same (cache-warm) routes and layers.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::http::uri::{PathAndQuery, Uri};
use axum::http::{self, HeaderMap, HeaderName, HeaderValue, Method};
use axum::response::{IntoResponse, Response};
use axum::routing::future::RouteFuture;
use bytes::Bytes;
use tower::Service;
use tower_http::normalize_path::NormalizePath;

use crate::connection::AnswersAtOnce;
use crate::fast_lane::{self, FastLane, Later, Pending};
use crate::http::error::ApiError;
use crate::http::observe::AsSent;
use crate::namespace_name as name;
use crate::namespaces::{until_created, InNamespace, Namespace, Namespaces, Vacancy};
use crate::state::SharedState;

/// Polaris' header naming the namespace of a request whose path names none.
static NAMESPACE_HEADER: HeaderName = HeaderName::from_static("x-namespace");

/// The service connections are handed (behind trailing-slash normalisation).
#[derive(Clone, Debug)]
pub(crate) struct Dispatch {
    namespaces: Arc<Namespaces>,
    /// The router every namespace shares, over the default namespace's state.
    app: axum::Router,
    /// Heartbeats', registrations' and fetches' way past the router, when they may take it.
    lane: Option<Arc<FastLane>>,
}

impl Dispatch {
    pub(crate) fn new(
        namespaces: Arc<Namespaces>,
        app: axum::Router,
        lane: Option<Arc<FastLane>>,
    ) -> Dispatch {
        Dispatch {
            namespaces,
            app,
            lane,
        }
    }

    pub(crate) fn namespaces(&self) -> &Arc<Namespaces> {
        &self.namespaces
    }

    /// The answer to `request` under way, or why its namespace is no name.
    fn route(&self, mut request: Request) -> Result<Dispatched, &'static str> {
        match self.place(request.uri().path(), request.headers())? {
            Place::Listing => {
                // The listing: the default router serves it, reading the directory.
                request.extensions_mut().insert(self.namespaces.clone());
                Ok(self.call_router(request))
            }
            Place::ByPath(found, tail) => {
                if let Some(fast) = self.fast(existing(&found), &request, tail) {
                    return Ok(fast.dispatched(request));
                }
                let path = new_path(tail, request.uri().query());
                set_path(&mut request, path)?;
                Ok(self.to_namespace(found, request))
            }
            Place::ByHeader(found) => {
                if let Some(fast) = self.fast(existing(&found), &request, request.uri().path()) {
                    return Ok(fast.dispatched(request));
                }
                Ok(self.to_namespace(found, request))
            }
            Place::Default => {
                let default = &self.namespaces.default_namespace().state;
                if let Some(fast) = self.fast(Some(default), &request, request.uri().path()) {
                    return Ok(fast.dispatched(request));
                }
                Ok(self.call_router(request))
            }
        }
    }

    /// Where a request with this path and these headers goes, or why its namespace is no name.
    fn place<'p>(&self, path: &'p str, headers: &HeaderMap) -> Result<Place<'p>, &'static str> {
        // A pass over the request's few headers: cheaper than hashing the name to look it up.
        let named = headers
            .iter()
            .find_map(|(name, value)| (*name == NAMESPACE_HEADER).then_some(value));
        self.place_named(path, named)
    }

    /// [`Dispatch::place`] with the namespace header already found (`named`, its first).
    fn place_named<'p>(
        &self,
        path: &'p str,
        named: Option<&HeaderValue>,
    ) -> Result<Place<'p>, &'static str> {
        if let Some(rest) = path.strip_prefix(self.namespaces.prefix()) {
            if rest.is_empty() {
                return Ok(Place::Listing);
            }
            if let Some(rest) = rest.strip_prefix('/') {
                let (segment, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
                return Ok(Place::ByPath(self.find(segment)?, tail));
            }
        }
        let Some(header) = named else {
            return Ok(Place::Default);
        };
        let named = header.to_str().map_err(|_| "not ASCII")?;
        Ok(Place::ByHeader(self.find(named)?))
    }

    /// What the fast lane makes of the request, when it is a heartbeat, a registration or a
    /// fetch it takes in a namespace that exists; `path` is the request's path within the
    /// namespace.
    fn fast(&self, namespace: Option<&SharedState>, request: &Request, path: &str) -> Option<Fast> {
        let (lane, namespace) = (self.lane.as_ref()?, namespace?);
        if let Some(response) = lane.renew(namespace, request, path) {
            return Some(Fast::Answered(response));
        }
        let later = lane.later(request, path)?;
        Some(Fast::Later {
            lane: Arc::clone(lane),
            state: namespace.clone(),
            later,
        })
    }

    /// The namespace `text` names (percent-encoded, any case), or its name when it does not
    /// exist yet.
    fn find(&self, text: &str) -> Result<Result<Arc<Namespace>, String>, &'static str> {
        // Clients write names plainly; decoding is for the few that escape them.
        let decoded = if text.contains('%') {
            percent_encoding::percent_decode_str(text).decode_utf8_lossy()
        } else {
            std::borrow::Cow::Borrowed(text)
        };
        let name = name::parse_borrowed(&decoded)?;
        Ok(self.namespaces.get(&name).ok_or_else(|| name.into_owned()))
    }

    fn to_namespace(
        &self,
        found: Result<Arc<Namespace>, String>,
        mut request: Request,
    ) -> Dispatched {
        let namespace = match found {
            Ok(namespace) if Arc::ptr_eq(&namespace, self.namespaces.default_namespace()) => {
                return self.call_router(request);
            }
            Ok(namespace) => namespace,
            Err(name) => return self.to_vacant(name, request),
        };
        request
            .extensions_mut()
            .insert(InNamespace(namespace.state.clone()));
        self.call_router(request)
    }

    /// A request to a name not created yet: the vacant namespace answers it, and a stream it
    /// opens ends when the namespace is created (`streams.rs`).
    fn to_vacant(&self, name: String, mut request: Request) -> Dispatched {
        let vacancy = Vacancy {
            namespaces: self.namespaces.clone(),
            name,
        };
        let extensions = request.extensions_mut();
        extensions.insert(vacancy.clone());
        extensions.insert(InNamespace(self.namespaces.vacant().state.clone()));
        Dispatched::Vacant {
            future: self.app.clone().call(request),
            vacancy: Some(vacancy),
        }
    }

    fn call_router(&self, request: Request) -> Dispatched {
        Dispatched::Routed {
            future: self.app.clone().call(request),
        }
    }
}

/// Where a request's path and headers send it.
enum Place<'p> {
    /// `{prefix}` alone: the namespaces' listing.
    Listing,
    /// `{prefix}/{name}…`: the namespace named (or its name, not created yet) and the path
    /// within it.
    ByPath(Result<Arc<Namespace>, String>, &'p str),
    /// Polaris' header names it; the path is the request's.
    ByHeader(Result<Arc<Namespace>, String>),
    /// Neither: the default namespace.
    Default,
}

/// A heartbeat the fast lane takes is answered before the listener's per-request work; any
/// other request, and any heartbeat the lane declines, goes on to [`Dispatch::route`], which
/// offers it to the lane again.
impl AnswersAtOnce for Dispatch {
    fn answer_at_once<B>(&self, request: &http::Request<B>) -> Option<Response> {
        let lane = self.lane.as_ref()?;
        if request.method() != Method::PUT {
            return None;
        }
        // One pass over the headers for the namespace and the lane both; a request the lane
        // would decline for a header goes the whole way.
        let mut named = None;
        for (name, value) in request.headers() {
            if *name == NAMESPACE_HEADER {
                named = named.or(Some(value));
            } else if !fast_lane::passes_unchanged(name, value) {
                return None;
            }
        }
        let path = request.uri().path();
        match self.place_named(path, named).ok()? {
            Place::Listing => None,
            Place::ByPath(found, tail) => lane.renew_plain(existing(&found)?, request, tail),
            Place::ByHeader(found) => lane.renew_plain(existing(&found)?, request, path),
            Place::Default => {
                let default = &self.namespaces.default_namespace().state;
                lane.renew_plain(default, request, path)
            }
        }
    }
}

/// Through the trailing-slash normalisation: a path it would change goes the whole way.
impl AnswersAtOnce for NormalizePath<Dispatch> {
    fn answer_at_once<B>(&self, request: &http::Request<B>) -> Option<Response> {
        let path = request.uri().path();
        if path.ends_with('/') || path.starts_with("//") {
            return None;
        }
        self.get_ref().answer_at_once(request)
    }
}

/// A request the fast lane takes: a heartbeat it has answered, or a registration or fetch it
/// answers later.
enum Fast {
    Answered(Response),
    Later {
        lane: Arc<FastLane>,
        state: SharedState,
        later: Later,
    },
}

impl Fast {
    fn dispatched(self, request: Request) -> Dispatched {
        match self {
            Fast::Answered(response) => Dispatched::Answered {
                response: Some(response),
            },
            Fast::Later { lane, state, later } => Dispatched::Lane {
                future: lane.answer(state, later, request),
            },
        }
    }
}

/// The state of a namespace found, `None` for a name not created yet.
fn existing(found: &Result<Arc<Namespace>, String>) -> Option<&SharedState> {
    found.as_ref().ok().map(|namespace| &namespace.state)
}

fn invalid(why: &str) -> Response {
    ApiError::BadRequest(format!("invalid namespace name: {why}")).into_response()
}

/// What follows `{prefix}/{name}` (the root when nothing does), with the query: one
/// allocation of the exact size, which becomes the URI's bytes without a copy (`format!`
/// and a growing `String` cost a tenth of a heartbeat here).
fn new_path(tail: &str, query: Option<&str>) -> Bytes {
    let tail = if tail.is_empty() { "/" } else { tail };
    let query_len = query.map_or(0, |query| query.len() + 1);
    let mut path = Vec::with_capacity(tail.len() + query_len);
    path.extend_from_slice(tail.as_bytes());
    if let Some(query) = query {
        path.push(b'?');
        path.extend_from_slice(query.as_bytes());
    }
    Bytes::from(path)
}

/// Replaces the request's path and query with `path_and_query`, keeping the URI the client sent
/// for the log ([`AsSent`]).
fn set_path(request: &mut Request, path_and_query: Bytes) -> Result<(), &'static str> {
    let sent = std::mem::take(request.uri_mut());
    let mut parts = sent.clone().into_parts();
    parts.path_and_query = Some(
        PathAndQuery::from_maybe_shared(path_and_query)
            .map_err(|_| "the path is not a valid URI")?,
    );
    *request.uri_mut() = Uri::from_parts(parts).map_err(|_| "not a valid URI")?;
    request.extensions_mut().insert(AsSent(sent));
    Ok(())
}

impl Service<Request> for Dispatch {
    type Response = Response;
    type Error = Infallible;
    type Future = Dispatched;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Every namespace's router is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Dispatched {
        self.route(request)
            .unwrap_or_else(|why| Dispatched::Answered {
                response: Some(invalid(why)),
            })
    }
}

pin_project_lite::pin_project! {
    /// A dispatched request's answer: the router's, the router's for a name not created yet,
    /// a registration's or fetch's on the fast lane, or one made here (the fast lane's
    /// heartbeat, or a refusal of the namespace's name).
    #[project = DispatchedProjection]
    pub(crate) enum Dispatched {
        Routed { #[pin] future: RouteFuture<Infallible> },
        Vacant { #[pin] future: RouteFuture<Infallible>, vacancy: Option<Vacancy> },
        Lane { future: Pending },
        Answered { response: Option<Response> },
    }
}

impl Future for Dispatched {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            DispatchedProjection::Routed { future } => future.poll(cx),
            DispatchedProjection::Vacant { future, vacancy } => {
                let Poll::Ready(Ok(response)) = future.poll(cx) else {
                    return Poll::Pending;
                };
                let vacancy = vacancy.take().expect("polled after completion");
                Poll::Ready(Ok(until_created(response, vacancy)))
            }
            DispatchedProjection::Lane { future } => future.as_mut().poll(cx).map(Ok),
            DispatchedProjection::Answered { response } => {
                Poll::Ready(Ok(response.take().expect("polled after completion")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(uri: &str) -> Request {
        Request::builder()
            .uri(uri)
            .body(axum::body::Body::empty())
            .unwrap()
    }

    #[test]
    fn the_namespace_part_is_taken_off_and_the_query_kept() {
        let mut request = request("/ns/team-a/eureka/apps?regions=x");
        set_path(&mut request, new_path("/eureka/apps", Some("regions=x"))).unwrap();
        assert_eq!(request.uri().to_string(), "/eureka/apps?regions=x");
    }

    #[test]
    fn the_uri_the_client_sent_is_kept_for_the_log() {
        let mut request = request("/ns/team-a/eureka/apps?regions=x");
        set_path(&mut request, new_path("/eureka/apps", Some("regions=x"))).unwrap();
        let sent = request
            .extensions()
            .get::<AsSent>()
            .map(|sent| sent.0.to_string());
        assert_eq!(sent.as_deref(), Some("/ns/team-a/eureka/apps?regions=x"));
    }

    #[test]
    fn a_namespace_path_with_nothing_after_it_is_the_root() {
        let mut request = request("/ns/team-a");
        set_path(&mut request, new_path("", None)).unwrap();
        assert_eq!(request.uri().path(), "/");
    }
}
