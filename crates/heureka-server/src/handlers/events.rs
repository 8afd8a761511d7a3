//! `GET {base}/events`: the event stream as Server-Sent Events (`docs/events.md`), one
//! subscriber (`events/stream.rs`) per connection, with `?app=NAME` filters.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::IntoResponse;
use tokio_stream::StreamExt;

use crate::events::stream::subscriber_events;
use crate::state::SharedState;

/// A comment line this often keeps proxies and browsers from closing an idle stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub(crate) async fn stream(
    State(state): State<SharedState>,
    Query(query): Query<Vec<(String, String)>>,
    headers: HeaderMap,
) -> impl IntoResponse {
    let apps: Vec<String> = query
        .iter()
        .filter(|(name, _)| name == "app")
        .map(|(_, value)| value.trim().to_uppercase())
        .filter(|app| !app.is_empty())
        .collect();
    let reconnected = headers.contains_key("last-event-id");
    // Counted in the metrics for as long as the stream lives (the guard moves into it).
    let subscribed = state.metrics.event_stream_subscriber();
    let events = subscriber_events(&state.events, apps, reconnected).map(move |outgoing| {
        let _subscribed = &subscribed;
        // The encoder escapes control characters: the JSON is one line, as SSE data must be.
        Ok::<_, Infallible>(
            SseEvent::default()
                .event(outgoing.name)
                .id(outgoing.seq.to_string())
                .data(String::from_utf8_lossy(&outgoing.json)),
        )
    });
    Sse::new(events).keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
}
