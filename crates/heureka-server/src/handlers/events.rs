//! `GET {base}/events`: the event stream as Server-Sent Events (`docs/events.md`), one
//! subscriber (`events/stream.rs`) per connection, with `?app=NAME` filters.
//!
//! A stream holds its connection, so it is admitted within the stream budget
//! (`events/budget.rs`) or refused with 429, and marked for the listener, which ends it when
//! its client stops reading, when it reaches its maximum age, and at shutdown.

use std::convert::Infallible;

use axum::extract::Query;
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use tokio_stream::StreamExt;

use crate::connection::Sender;
use crate::events::stream::subscriber_events;
use crate::handlers::request::Ns;
use crate::http::error::ApiError;
use crate::listener::EventStreamLimits;

pub(crate) async fn stream(
    Ns(state): Ns,
    Query(query): Query<Vec<(String, String)>>,
    sender: Option<Extension<Sender>>,
    headers: HeaderMap,
) -> Response {
    // Limits are per IP address, a v4-mapped v6 address counting as its v4 one.
    let client = sender.map(|Extension(Sender(address))| address.ip().to_canonical());
    let permit = match state.events.open_streams.admit(client) {
        Ok(permit) => permit,
        Err(reason) => {
            state.observe.metrics.event_stream_refused();
            return ApiError::TooManyStreams(reason).into_response();
        }
    };
    let apps: Vec<String> = query
        .iter()
        .filter(|(name, _)| name == "app")
        .map(|(_, value)| value.trim().to_uppercase())
        .filter(|app| !app.is_empty())
        .collect();
    let reconnected = headers.contains_key("last-event-id");
    // Counted in the metrics and the budget for as long as the stream lives (the guards move
    // into it).
    let subscribed = state.observe.metrics.event_stream_subscriber();
    let events = subscriber_events(&state.events.feed, apps, reconnected).map(move |outgoing| {
        let _held = (&subscribed, &permit);
        // The encoder escapes control characters: the JSON is one line, as SSE data must be.
        Ok::<_, Infallible>(
            SseEvent::default()
                .event(outgoing.name)
                .id(outgoing.seq.to_string())
                .data(String::from_utf8_lossy(&outgoing.json)),
        )
    });
    let limits = &state.events.stream_settings;
    // The keep-alive comment also proves the client still reads: one not taken within the
    // send timeout closes the stream (`listener.rs`).
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(limits.keep_alive_interval))
        .into_response();
    response.extensions_mut().insert(EventStreamLimits {
        stall_after: limits.keep_alive_interval + limits.send_timeout,
        max_age: limits.max_age,
    });
    response
}
