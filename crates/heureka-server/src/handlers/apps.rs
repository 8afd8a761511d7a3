//! Registry reads: full fetch, delta, one application, VIP selections.

use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue};
use axum::response::Response;
use axum::Extension;
use tokio::runtime::{Handle, RuntimeFlavor};

use crate::cache::{Encoding, Selection};
use crate::connection::Sender;
use crate::consumers::{ConsumerKey, Fetch as Consumed};
use crate::handlers::regions;
use crate::handlers::request::Ns;
use crate::handlers::request::{Headers, QueryParams};
use crate::handlers::response::document;
use crate::http::error::ApiError;
use crate::http::negotiate;
use crate::http::rate_limit::{self, Fetch};
use crate::security::principal::Principal;
use crate::security::roles::Role;
use crate::state::SharedState;

/// `GET {base}/apps`: the whole registry, and the remote regions `regions=` names (or every
/// region by transparent fallback; `handlers/regions.rs`). With no region configured the
/// parameter changes nothing (as in Eureka).
pub(crate) async fn all(
    Ns(state): Ns,
    sender: Option<Extension<Sender>>,
    principal: Principal,
    query: QueryParams,
    Headers(headers): Headers,
) -> Result<Response, ApiError> {
    let sender = sender.map(|Extension(sender)| sender);
    fetch(
        &state,
        sender,
        &principal,
        &query,
        &headers,
        Document::AllApps,
    )
    .await
}

/// `GET {base}/apps/delta`: what changed within the retention window, with the changes of the
/// remote regions a full fetch would serve.
pub(crate) async fn delta(
    Ns(state): Ns,
    sender: Option<Extension<Sender>>,
    principal: Principal,
    query: QueryParams,
    Headers(headers): Headers,
) -> Result<Response, ApiError> {
    let sender = sender.map(|Extension(sender)| sender);
    fetch(
        &state,
        sender,
        &principal,
        &query,
        &headers,
        Document::Delta,
    )
    .await
}

/// The full or delta document `which`, as its route answers it: the fast lane
/// (`fast_lane.rs`) calls this too.
pub(crate) async fn fetch(
    state: &SharedState,
    sender: Option<Sender>,
    principal: &Principal,
    query: &QueryParams,
    headers: &HeaderMap,
    which: Document,
) -> Result<Response, ApiError> {
    ready(state)?;
    if which == Document::Delta && state.node.disable_delta {
        return Err(ApiError::Forbidden);
    }
    let with_regions = regions::chosen_for_fetch(state, query, headers)?;
    let (limited, consumed) = match which {
        Document::AllApps => (Fetch::Full, Consumed::Full),
        Document::Delta => (Fetch::Delta, Consumed::Delta),
    };
    rate_limit::admit(state, headers, limited)?;
    let version = state.store.read().version();
    let response = match with_regions {
        None => cached(state, headers, which).await,
        Some(chosen) => merged(state, headers, which == Document::Delta, chosen).await,
    };
    book(state, sender, principal, headers, consumed, version);
    Ok(response)
}

/// The header the dashboard's script sends with its reads: an operator's page is not a
/// consumer, and a drain must not wait for it.
const DASHBOARD_READ: HeaderName = HeaderName::from_static("x-heureka-dashboard");

/// Books a registry fetch in the consumers' table (`consumers.rs`): the version read before
/// the body was taken, which the body holds at least. A peer's fetch is not a consumer's, nor
/// the dashboard's. Returns the consumer booked.
pub(crate) fn book(
    state: &SharedState,
    sender: Option<Sender>,
    principal: &Principal,
    headers: &HeaderMap,
    fetch: Consumed,
    version: u64,
) -> Option<ConsumerKey> {
    let Sender(address) = sender?;
    if headers.contains_key(&DASHBOARD_READ) {
        return None;
    }
    // The peer user holds `peer` alone; a user with every role (Spring's one user, which
    // clients often share) is a consumer like any other.
    let roles = principal.grant().roles;
    if roles.has(Role::Peer) && !roles.has(Role::Read) {
        return None;
    }
    let now = state.store.now();
    state
        .observe
        .consumers
        .record(address.ip(), headers, fetch, version, now)
}

/// Registry reads answer 403 until the start-up sync is done, as Eureka's do while
/// `shouldAllowAccess` is false: a client then asks another server (§6.10). Writes and
/// single-instance reads are always served. The 403 says the node is starting, so that a
/// Heureka peer's start-up sync does not wait for it.
pub(crate) fn ready(state: &SharedState) -> Result<(), ApiError> {
    if state.is_ready() {
        Ok(())
    } else {
        Err(ApiError::Starting)
    }
}

/// `GET {base}/apps/{app}`: one application, else the first remote region holding it (when
/// fallback is on); 404 when none has instances of it.
pub(crate) async fn one(
    Ns(state): Ns,
    Path(app): Path<String>,
    Headers(headers): Headers,
) -> Result<Response, ApiError> {
    ready(&state)?;
    rate_limit::admit(&state, &headers, Fetch::Application)?;
    if let Some(local) = selected(&state, &headers, Selection::App(app.clone())) {
        return Ok(local);
    }
    let remote = regions::application(&state, &app).ok_or(ApiError::NotFound)?;
    let format = negotiate::collection_format(&headers);
    Ok(document(
        format,
        heureka_wire::encode_application(&remote, format),
    ))
}

/// `GET {base}/vips/{vip}`: instances whose `vipAddress` lists `vip`; never 404.
pub(crate) async fn vip(
    Ns(state): Ns,
    Path(vip): Path<String>,
    Headers(headers): Headers,
) -> Result<Response, ApiError> {
    ready(&state)?;
    if let Some(merged) = regions::vip(&state, &vip, false) {
        return Ok(encoded(&headers, &merged));
    }
    selected(&state, &headers, Selection::Vip(vip)).ok_or(ApiError::NotFound)
}

/// `GET {base}/svips/{svip}`: the same for `secureVipAddress`.
pub(crate) async fn svip(
    Ns(state): Ns,
    Path(svip): Path<String>,
    Headers(headers): Headers,
) -> Result<Response, ApiError> {
    ready(&state)?;
    if let Some(merged) = regions::vip(&state, &svip, true) {
        return Ok(encoded(&headers, &merged));
    }
    selected(&state, &headers, Selection::SecureVip(svip)).ok_or(ApiError::NotFound)
}

/// A document built for this request (the VIP reads that include remote regions).
fn encoded(headers: &HeaderMap, applications: &heureka_core::Applications) -> Response {
    let format = negotiate::collection_format(headers);
    document(
        format,
        heureka_wire::encode_applications(applications, format),
    )
}

/// A single-application or VIP document from its cache; None for an application with no
/// instances (VIP selections are never None).
fn selected(state: &SharedState, headers: &HeaderMap, selection: Selection) -> Option<Response> {
    let format = negotiate::collection_format(headers);
    let body = state
        .caches
        .selections
        .get(&state.store, &selection, format)?;
    Some(document(format, body))
}

/// Serves a full or delta document from its cache, gzipped when the client accepts it. A body
/// already built is taken on the worker. A build (up to a whole encoding and compression of
/// the registry, hundreds of milliseconds at 100,000 instances) runs in `block_in_place`: the
/// runtime hands this worker's other tasks to another thread, so the build never stalls them,
/// while this request goes on on the thread it is on. `spawn_blocking` would do the same for
/// the other tasks but move the build to a thread that must first be scheduled, then wake the
/// worker again: on this loaded 2-core machine those two wake-ups cost milliseconds per change
/// even when the build takes microseconds. On a current-thread runtime (tests, the fuzzer)
/// there is no other worker to hand tasks to, so the build goes to the blocking pool there.
async fn cached(state: &SharedState, headers: &HeaderMap, which: Document) -> Response {
    let format = negotiate::collection_format(headers);
    let encoding = if negotiate::accepts_gzip(headers) {
        Encoding::Gzip
    } else {
        Encoding::Plain
    };
    let ready = match which {
        Document::AllApps => state
            .caches
            .full_fetch
            .ready(&state.store, format, encoding),
        Document::Delta => state.caches.delta.ready(&state.store, format, encoding),
    };
    let body = match ready {
        Some(body) => body,
        None => {
            let state = state.clone();
            off_the_worker(move || match which {
                Document::AllApps => state
                    .caches
                    .full_fetch
                    .build(&state.store, format, encoding),
                Document::Delta => state.caches.delta.build(&state.store, format, encoding),
            })
            .await
        }
    };
    let mut response = Response::new(body.into_http_body());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    if encoding == Encoding::Gzip {
        response
            .headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

/// Runs a build as the comment on [`cached`] says: in `block_in_place` on a multi-threaded
/// runtime, on the blocking pool on a current-thread one.
pub(crate) async fn off_the_worker<T: Send + 'static>(
    build: impl FnOnce() -> T + Send + 'static,
) -> T {
    if Handle::current().runtime_flavor() == RuntimeFlavor::MultiThread {
        tokio::task::block_in_place(build)
    } else {
        match tokio::task::spawn_blocking(build).await {
            Ok(built) => built,
            // A build that panicked fails this request as it would have on the worker; one
            // cancelled (the runtime shutting down) ends it too.
            Err(error) => std::panic::resume_unwind(
                error
                    .try_into_panic()
                    .unwrap_or_else(|_| Box::new("the runtime shut down during a build")),
            ),
        }
    }
}

/// A document that includes remote regions: taken on the worker when built, else built off
/// it like a cached one (a merged body is built whole).
async fn merged(
    state: &SharedState,
    headers: &HeaderMap,
    delta: bool,
    chosen: Vec<usize>,
) -> Response {
    let key = regions::merged_key(state, headers, delta, chosen);
    let body = match regions::merged_ready(state, &key) {
        Some(body) => body,
        None => {
            let (state, key) = (state.clone(), key.clone());
            off_the_worker(move || regions::merged_build(&state, &key)).await
        }
    };
    regions::merged_response(&key, body)
}

/// Which cached document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Document {
    /// `GET /apps`.
    AllApps,
    /// `GET /apps/delta`.
    Delta,
}
