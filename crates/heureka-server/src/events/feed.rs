//! The event feed (`docs/events.md`): registry changes as events, fanned out on a
//! `tokio::sync::broadcast` channel to every subscriber (the SSE endpoint, webhooks).
//!
//! Fed from four places, each a small call: the write path (its [`ChangeSink`] impl, under the
//! registry lock, so events are in registry order), the self-preservation observation (the
//! renews-bucket task and the once-a-second renewals flush), the replication dispatcher's
//! up/down transitions, and the audit trail's complete entries (`audit.rs`). Sending on a broadcast channel never waits: a subscriber that falls
//! behind loses the oldest events and is told so with a `lagged` event, so a slow reader costs
//! the registry nothing. Heartbeats are not sent one by one: they are counted per application
//! and flushed as one `renewals` event per second.
//!
//! The module also keeps the dashboard's `lastn` lists (the last 1,000 registered and
//! cancelled leases, as Spring's `/lastn` shows them), fed by the same call.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use heureka_core::{Change, ChangeKind, Health, Millis, Registry, SelfPreservation};
use heureka_wire::{
    Event, EventBody, InstanceEvent, InstanceEventKind, LeaseRecord, SelfPreservationStatus,
};
use parking_lot::Mutex;
use tokio::sync::broadcast;

use crate::config::Config;
use crate::store::{ChangeSink, Store};

/// How many events a subscriber may fall behind before it loses the oldest.
const CHANNEL_CAPACITY: usize = 1024;
/// How many registered and cancelled leases `lastn` remembers (Spring's 1,000).
const LASTN_CAPACITY: usize = 1000;
/// How often heartbeats are flushed as one `renewals` event.
pub(crate) const RENEWALS_PERIOD: Duration = Duration::from_secs(1);

/// An event as subscribers receive it: the value, and its JSON, encoded once on first use
/// (never under the registry lock, and once however many subscribers read it).
#[derive(Debug)]
pub(crate) struct Published {
    pub(crate) event: Event,
    json: OnceLock<Bytes>,
}

impl Published {
    pub(super) fn new(event: Event) -> Arc<Published> {
        Arc::new(Published {
            event,
            json: OnceLock::new(),
        })
    }

    pub(crate) fn json(&self) -> &Bytes {
        self.json
            .get_or_init(|| Bytes::from(heureka_wire::encode_event(&self.event)))
    }

    /// The application an event is about, for `?app=` filters; `None` for server-wide events.
    pub(crate) fn app(&self) -> Option<&str> {
        match &self.event.body {
            EventBody::Instance(event) => Some(&event.app),
            EventBody::Takeover { app, .. } => Some(app),
            EventBody::Audit(entry) => entry.app.as_deref(),
            _ => None,
        }
    }
}

/// The configuration the self-preservation numbers are shown with.
#[derive(Clone, Copy, Debug)]
struct SelfPreservationSettings {
    enabled: bool,
    renewal_percent_threshold: f64,
    expected_client_renewal_interval_seconds: u32,
    wait_time_in_ms_when_sync_empty: Millis,
}

#[derive(Debug)]
pub(crate) struct Events {
    sender: broadcast::Sender<Arc<Published>>,
    /// The last sequence number sent. Held while sending, so sequence numbers and channel
    /// order agree even when the write path and the flush task send at the same moment.
    seq: Mutex<u64>,
    /// Heartbeats since the last flush, per application.
    renewals: Mutex<HashMap<String, u64>>,
    /// The self-preservation numbers last sent, and whether expiry was off then.
    last_self_preservation: Mutex<Option<SelfPreservationStatus>>,
    lastn: Mutex<Lastn>,
    settings: SelfPreservationSettings,
    /// Subscriptions alive ([`Subscription`]): read at every change to skip the work when
    /// nobody listens. The channel's own count takes its lock, whose line every worker thread
    /// would write at every heartbeat.
    subscribers: Arc<AtomicUsize>,
}

/// A subscription to the events: the channel's receiver, counted while the token lives.
pub(crate) struct Subscription {
    pub(crate) receiver: broadcast::Receiver<Arc<Published>>,
    pub(crate) token: SubscriberToken,
}

/// Counts its subscription among [`Events`]' subscribers until dropped; keep it as long as
/// the receiver.
#[derive(Debug)]
pub(crate) struct SubscriberToken(Arc<AtomicUsize>);

impl Drop for SubscriberToken {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

#[derive(Debug, Default)]
struct Lastn {
    /// Newest at the front.
    registered: VecDeque<LeaseRecord>,
    cancelled: VecDeque<LeaseRecord>,
}

impl Events {
    pub(crate) fn new(config: &Config) -> Events {
        let server = &config.eureka_server;
        Events {
            sender: broadcast::channel(CHANNEL_CAPACITY).0,
            seq: Mutex::new(0),
            renewals: Mutex::new(HashMap::new()),
            last_self_preservation: Mutex::new(None),
            lastn: Mutex::new(Lastn::default()),
            settings: SelfPreservationSettings {
                enabled: server.enable_self_preservation,
                renewal_percent_threshold: server.renewal_percent_threshold,
                expected_client_renewal_interval_seconds: server
                    .expected_client_renewal_interval_seconds,
                wait_time_in_ms_when_sync_empty: server.wait_time_in_ms_when_sync_empty as Millis,
            },
            subscribers: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Counted before the receiver exists, so no change is skipped that it would receive.
    pub(crate) fn subscribe(&self) -> Subscription {
        self.subscribers.fetch_add(1, Ordering::AcqRel);
        let token = SubscriberToken(self.subscribers.clone());
        Subscription {
            receiver: self.sender.subscribe(),
            token,
        }
    }

    /// The sequence number of the last event sent (for `lagged` events made per subscriber).
    pub(crate) fn last_seq(&self) -> u64 {
        *self.seq.lock()
    }

    /// Sends `renewals` for the heartbeats counted since the last call, when there were any
    /// or the self-preservation numbers moved; sends `self-preservation-entered`/`-left` when
    /// expiry stopped or resumed. Called once per [`RENEWALS_PERIOD`].
    pub(crate) fn flush_renewals(&self, numbers: SelfPreservation, now: Millis, below: bool) {
        let status = self.status(numbers, below);
        let mut apps: Vec<(String, u64)> = self.renewals.lock().drain().collect();
        apps.sort();
        let moved = self.observe_self_preservation(status, now);
        if !apps.is_empty() || moved {
            self.send(
                now,
                EventBody::Renewals {
                    period_ms: RENEWALS_PERIOD.as_millis() as u64,
                    apps,
                    self_preservation: status,
                },
            );
        }
    }

    /// Records the current self-preservation numbers and sends `self-preservation-entered` or
    /// `-left` when expiry stopped or resumed since the last observation. Returns whether the
    /// numbers changed. The first observation only records: the state at start-up is in the
    /// dashboard summary, not an event.
    pub(crate) fn observe_self_preservation(
        &self,
        status: SelfPreservationStatus,
        now: Millis,
    ) -> bool {
        let previous = self.last_self_preservation.lock().replace(status);
        let Some(previous) = previous else {
            return true;
        };
        if self.settings.enabled && previous.active != status.active {
            self.send(
                now,
                EventBody::SelfPreservation {
                    entered: status.active,
                    status,
                },
            );
        }
        previous != status
    }

    /// The numbers as events and the dashboard show them.
    pub(crate) fn status(&self, numbers: SelfPreservation, below: bool) -> SelfPreservationStatus {
        SelfPreservationStatus {
            enabled: self.settings.enabled,
            active: !numbers.lease_expiration_enabled,
            below_renew_threshold: below,
            renews_last_min: numbers.renews_last_min,
            renews_threshold: numbers.renews_threshold,
            expected_clients: numbers.expected_clients,
            renewal_percent_threshold: self.settings.renewal_percent_threshold,
            expected_client_renewal_interval_seconds: self
                .settings
                .expected_client_renewal_interval_seconds,
        }
    }

    /// The numbers of `registry` now, under its lock (the caller holds it).
    pub(crate) fn status_of(&self, registry: &Registry, now: Millis) -> SelfPreservationStatus {
        let below =
            registry.is_below_renew_threshold(now, self.settings.wait_time_in_ms_when_sync_empty);
        self.status(registry.self_preservation(), below)
    }

    pub(crate) fn wait_time_in_ms_when_sync_empty(&self) -> Millis {
        self.settings.wait_time_in_ms_when_sync_empty
    }

    /// The health checks started or stopped suspecting this server's own network.
    pub(crate) fn health_checks(
        &self,
        suspended: bool,
        round: (u64, u64),
        reason: &str,
        now: Millis,
    ) {
        let (failed, checked) = round;
        let reason = reason.to_owned();
        let body = EventBody::HealthChecks {
            suspended,
            failed,
            checked,
            reason,
        };
        self.send(now, body);
    }

    /// The dispatcher saw a peer start or stop accepting batches.
    pub(crate) fn peer(&self, url: &str, up: bool, error: Option<String>, now: Millis) {
        self.send(
            now,
            EventBody::Peer {
                up,
                url: url.to_owned(),
                error,
            },
        );
    }

    /// A remote region became ready, stale or dropped (`regions/task.rs`).
    pub(crate) fn region(
        &self,
        state: heureka_wire::RegionEventKind,
        region: &str,
        url: &str,
        error: Option<String>,
        now: Millis,
    ) {
        let body = EventBody::Region {
            state,
            region: region.to_owned(),
            url: url.to_owned(),
            error,
        };
        self.send(now, body);
    }

    /// A complete audit entry (`audit.rs`), as an `audit` event at the entry's time.
    pub(crate) fn audit(&self, entry: heureka_wire::AuditEntry) {
        self.send(entry.at, EventBody::Audit(Box::new(entry)));
    }

    /// `{"registered":[…],"cancelled":[…]}`, newest first.
    pub(crate) fn lastn_json(&self) -> Vec<u8> {
        let lastn = self.lastn.lock();
        heureka_wire::encode_lastn(lastn.registered.iter(), lastn.cancelled.iter())
    }

    fn book_lastn(&self, change: &Change) {
        // Eureka books evictions as cancels: both go through its `internalCancel`. Decided
        // before the lock: a heartbeat, the commonest change, books nothing.
        let registered = match change.kind {
            ChangeKind::Registered => true,
            ChangeKind::Cancelled | ChangeKind::Evicted => false,
            _ => return,
        };
        let mut lastn = self.lastn.lock();
        let list = if registered {
            &mut lastn.registered
        } else {
            &mut lastn.cancelled
        };
        if list.len() == LASTN_CAPACITY {
            list.pop_back();
        }
        list.push_front(LeaseRecord {
            at: change.at,
            app: change.app.to_string(),
            id: change.id.to_string(),
        });
    }

    fn send(&self, at: Millis, body: EventBody) {
        let mut seq = self.seq.lock();
        *seq += 1;
        // An error only means nobody is subscribed right now.
        let _ = self.sender.send(Published::new(Event {
            seq: *seq,
            at,
            body,
        }));
    }
}

/// The event for a change; `None` for a plain heartbeat, which is only counted.
fn event_kind(change: &Change) -> Option<(InstanceEventKind, Option<&'static str>)> {
    Some(match change.kind {
        ChangeKind::HealthChanged => match change.health {
            Health::Failing => (InstanceEventKind::HealthCheckFailed, None),
            Health::Passing => (InstanceEventKind::HealthCheckRecovered, None),
        },
        ChangeKind::Registered => (InstanceEventKind::Registered, None),
        ChangeKind::Cancelled => (InstanceEventKind::Cancelled, None),
        ChangeKind::Evicted => (InstanceEventKind::Evicted, None),
        ChangeKind::StatusChanged => (InstanceEventKind::StatusChanged, Some("heartbeat")),
        ChangeKind::StatusOverridden => (InstanceEventKind::StatusChanged, Some("override")),
        ChangeKind::StatusOverrideRemoved => {
            (InstanceEventKind::StatusChanged, Some("override-removed"))
        }
        ChangeKind::MetadataUpdated => (InstanceEventKind::MetadataChanged, None),
        ChangeKind::Renewed | ChangeKind::Restamped => return None,
    })
}

/// The once-a-second task: flushes the heartbeat counts and watches self-preservation, whose
/// state also moves when registrations change the threshold, between the minute rolls.
pub(crate) async fn flush_renewals_every_second(store: Arc<Store>, events: Arc<Events>) {
    let mut timer = tokio::time::interval(RENEWALS_PERIOD);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        timer.tick().await;
        let now = store.now();
        let wait = events.wait_time_in_ms_when_sync_empty();
        let (numbers, below) = {
            let registry = store.read();
            (
                registry.self_preservation(),
                registry.is_below_renew_threshold(now, wait),
            )
        };
        events.flush_renewals(numbers, now, below);
    }
}

impl ChangeSink for Events {
    /// Called by the write path under the registry lock, once per change: books `lastn`,
    /// counts heartbeats, and sends instance events. Does nothing costly when nobody listens.
    fn publish(&self, change: &Change, registry: &Registry) {
        self.book_lastn(change);
        if self.subscribers.load(Ordering::Acquire) == 0 {
            return;
        }
        let Some((kind, cause)) = event_kind(change) else {
            let mut renewals = self.renewals.lock();
            match renewals.get_mut(&*change.app) {
                Some(count) => *count += 1,
                None => {
                    renewals.insert(change.app.to_string(), 1);
                }
            }
            return;
        };
        if let Some(taken_over) = &change.takeover {
            self.send(
                change.at,
                EventBody::Takeover {
                    app: change.app.to_string(),
                    id: change.id.to_string(),
                    previous: taken_over.previous.to_string(),
                    incoming: taken_over.incoming.to_string(),
                },
            );
        }
        let instance = if change.kind.is_removal() {
            None
        } else {
            registry.instance(&change.app, &change.id, change.at)
        };
        self.send(
            change.at,
            EventBody::Instance(Box::new(InstanceEvent {
                kind,
                app: change.app.to_string(),
                id: change.id.to_string(),
                origin: change.origin,
                status: change.status,
                overridden_status: change.overridden_status,
                cause,
                instance,
            })),
        );
    }
}

#[cfg(test)]
mod tests;
