//! `GET {base}/push`, the push stream (`push/`, `docs/push.md`), and `POST {base}/push/ack`, a
//! consumer's acknowledgment of the registry version it applied.
//!
//! A stream holds its connection, so it is admitted within the push budget
//! (`heureka.push.max-subscribers`, `-per-client`; `events/budget.rs`) or refused with 429,
//! and marked for the listener, which ends it when its client stops reading, when it reaches
//! its maximum age, and at shutdown. Its start is booked in the consumers' table as a fetch
//! (`consumers.rs`), and the consumer is shown following the push while the stream is open.

use std::convert::Infallible;

use axum::body::Body;
use axum::extract::Query;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use tokio_stream::StreamExt;

use super::apps::{book, ready};
use super::request::first;
use crate::connection::Sender;
use crate::consumers::{ConsumerKey, Fetch};
use crate::handlers::request::Ns;
use crate::http::error::ApiError;
use crate::listener::EventStreamLimits;
use crate::push::message::{Follows, StreamPosition};
use crate::push::subscriber::Subscriber;
use crate::security::principal::Principal;
use crate::state::SharedState;

/// `GET {base}/push[?app=NAME…]`, with `Last-Event-ID` to resume.
pub(crate) async fn stream(
    Ns(state): Ns,
    Query(query): Query<Vec<(String, String)>>,
    sender: Option<Extension<Sender>>,
    principal: Principal,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if !state.events.push_settings.enabled {
        return Err(ApiError::NotFound);
    }
    // A stream carries the local registry only, while this node's fetches also serve remote
    // regions: a consumer following it would lose their instances. The 404 makes the add-on
    // and Heureka's client fetch as Eureka clients do until streams carry regions.
    if !state.regions.is_empty() {
        return Err(ApiError::NotServed(
            "push streams are not served while remote regions are configured: fetch /apps \
             (push carries the local region only)"
                .to_owned(),
        ));
    }
    ready(&state)?;
    // Limits are per IP address, a v4-mapped v6 address counting as its v4 one.
    let client = sender
        .as_ref()
        .map(|Extension(Sender(address))| address.ip().to_canonical());
    let permit = state.events.push_streams.admit(client).map_err(|reason| {
        state.observe.metrics.push_stream_refused();
        ApiError::TooManyStreams(reason)
    })?;
    let follows = Follows::from_names(
        query
            .iter()
            .filter(|(name, _)| name == "app")
            .map(|(_, value)| value.as_str()),
    );
    let resume = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(StreamPosition::parse);
    let feed = state.events.push.clone();
    let start = feed.start(state.store.read(), &follows, resume);
    // A snapshot is a full fetch; a resumed stream holds what its client held (version 0
    // books the time and keeps the version the table has).
    let version = start.snapshot_version.unwrap_or(0);
    let following = book(
        &state,
        sender.map(|Extension(sender)| sender),
        &principal,
        &headers,
        Fetch::Full,
        version,
    )
    .map(|key| Following::new(state.clone(), key));
    let held = Box::new((permit, state.observe.metrics.push_subscriber(), following));
    let settings = &state.events.push_settings;
    let subscriber = Subscriber::new(start, follows, settings.keep_alive_interval, feed, held);
    let mut response = Body::from_stream(subscriber.map(Ok::<_, Infallible>)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Tells a buffering proxy (nginx) to pass each message on as it comes.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response.extensions_mut().insert(EventStreamLimits {
        stall_after: settings.keep_alive_interval + settings.send_timeout,
        max_age: settings.max_age,
    });
    Ok(response)
}

/// `POST {base}/push/ack?version=V`: books the consumer as holding registry version `V`.
pub(crate) async fn ack(
    Ns(state): Ns,
    Query(query): Query<Vec<(String, String)>>,
    sender: Option<Extension<Sender>>,
    principal: Principal,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    if !state.events.push_settings.enabled {
        return Err(ApiError::NotFound);
    }
    let version = first(&query, "version")
        .ok_or_else(|| ApiError::BadRequest("missing query parameter 'version'".to_owned()))?;
    let version: u64 = version
        .trim()
        .parse()
        .map_err(|_| ApiError::BadRequest(format!("version '{version}' is not a whole number")))?;
    let current = state.store.read().version();
    if version > current {
        return Err(ApiError::BadRequest(format!(
            "version {version} is newer than this node's registry ({current})"
        )));
    }
    // Only a client holding a copy acknowledges: booked as a delta.
    book(
        &state,
        sender.map(|Extension(sender)| sender),
        &principal,
        &headers,
        Fetch::Delta,
        version,
    );
    Ok(StatusCode::NO_CONTENT)
}

/// A consumer following the push for as long as its stream lives.
struct Following {
    state: SharedState,
    key: ConsumerKey,
}

impl Following {
    fn new(state: SharedState, key: ConsumerKey) -> Following {
        state.observe.consumers.following(&key, true);
        Following { state, key }
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        self.state.observe.consumers.following(&self.key, false);
    }
}
