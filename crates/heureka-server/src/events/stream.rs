//! One subscriber's view of the event stream (`docs/events.md`; served as Server-Sent
//! Events by `handlers/events.rs`).
//!
//! One broadcast receiver per subscriber. `?app=NAME` (repeatable, any case) keeps the events
//! of those applications, the `renewals` counts of those applications, and every server-wide
//! event (self-preservation, peers, `lagged`). A subscriber that falls behind gets `lagged`
//! with the number of events it missed, and should re-fetch the registry; so does one that
//! reconnects with `Last-Event-ID`, since events are not replayed.

use std::sync::Arc;

use bytes::Bytes;
use heureka_wire::{Event, EventBody};
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::{Stream, StreamExt};

use super::feed::{Events, Published, Subscription};

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
    events: &Arc<Events>,
    apps: Vec<String>,
    reconnected: bool,
) -> impl Stream<Item = Outgoing> + Send + 'static {
    let Subscription { receiver, token } = events.subscribe();
    let first = reconnected.then(|| lagged(events.last_seq(), 0));
    let hub = events.clone();
    let events = BroadcastStream::new(receiver).filter_map(move |item| {
        // The stream counts as a subscriber for as long as it lives.
        let _subscribed = &token;
        match item {
            Ok(published) => for_subscriber(&published, &apps),
            Err(BroadcastStreamRecvError::Lagged(missed)) => Some(lagged(hub.last_seq(), missed)),
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
