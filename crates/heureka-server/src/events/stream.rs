//! `GET {base}/events`: the event stream as Server-Sent Events (`docs/events.md`).
//!
//! One broadcast receiver per connection. `?app=NAME` (repeatable, any case) keeps the events
//! of those applications, the `renewals` counts of those applications, and every server-wide
//! event (self-preservation, peers, `lagged`). A subscriber that falls behind gets `lagged`
//! with the number of events it missed, and should re-fetch the registry; so does one that
//! reconnects with `Last-Event-ID`, since events are not replayed.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::IntoResponse;
use bytes::Bytes;
use heureka_wire::{Event, EventBody};
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::{Stream, StreamExt};

use super::Published;
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
    let events = subscriber_events(&state, apps, reconnected).map(move |outgoing| {
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

/// One event as one subscriber gets it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outgoing {
    pub(crate) name: &'static str,
    pub(crate) seq: u64,
    pub(crate) json: Bytes,
}

/// The events of one subscriber, subscribed now: a client that loads the registry once the
/// stream is open misses nothing in between. `reconnected` starts it with `lagged`.
pub(crate) fn subscriber_events(
    state: &SharedState,
    apps: Vec<String>,
    reconnected: bool,
) -> impl Stream<Item = Outgoing> + Send + 'static {
    let receiver = state.events.subscribe();
    let first = reconnected.then(|| lagged(state.events.last_seq(), 0));
    let state = state.clone();
    let events = BroadcastStream::new(receiver).filter_map(move |item| match item {
        Ok(published) => for_subscriber(&published, &apps),
        Err(BroadcastStreamRecvError::Lagged(missed)) => {
            Some(lagged(state.events.last_seq(), missed))
        }
    });
    tokio_stream::iter(first).chain(events)
}

/// The event for one subscriber, or `None` when its filter drops it.
fn for_subscriber(published: &Arc<Published>, apps: &[String]) -> Option<Outgoing> {
    let whole = || Outgoing {
        name: published.event.name(),
        seq: published.event.seq,
        json: published.json().clone(),
    };
    if apps.is_empty() {
        return Some(whole());
    }
    match (&published.event.body, published.app()) {
        (_, Some(app)) => apps.iter().any(|wanted| wanted == app).then(whole),
        (
            EventBody::Renewals {
                period_ms,
                apps: counts,
                self_preservation,
            },
            None,
        ) => {
            let counts: Vec<(String, u64)> = counts
                .iter()
                .filter(|(app, _)| apps.contains(app))
                .cloned()
                .collect();
            if counts.is_empty() {
                return None;
            }
            let event = Event {
                body: EventBody::Renewals {
                    period_ms: *period_ms,
                    apps: counts,
                    self_preservation: *self_preservation,
                },
                ..published.event.clone()
            };
            Some(outgoing(&event))
        }
        (_, None) => Some(whole()),
    }
}

fn lagged(seq: u64, missed: u64) -> Outgoing {
    outgoing(&Event {
        seq,
        at: 0,
        body: EventBody::Lagged { missed },
    })
}

fn outgoing(event: &Event) -> Outgoing {
    Outgoing {
        name: event.name(),
        seq: event.seq,
        json: Bytes::from(heureka_wire::encode_event(event)),
    }
}
