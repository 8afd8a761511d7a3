//! The audit trail (issue "TLS everywhere and least privilege", item 5): every administrative
//! act — a status override set or removed, an ASG status request, a deregistration or metadata
//! update by anyone but the instance itself — and every minute of refused credentials (401) or
//! refused replication (403) from one address and user, as an entry saying who, from where,
//! what, when and with what outcome (`heureka_wire::AuditEntry`).
//!
//! Each complete entry goes three ways: one INFO line on the log target `heureka::audit`, the
//! newest `heureka.audit.retained` kept in memory for `GET {base}/dashboard/audit`
//! (`ring.rs`, which also summarises refusals), and an `audit` event on the event stream.
//! `heureka.audit.enabled=false` turns all three off.
//!
//! One trail for the node, each entry naming its namespace: the list a namespace serves and
//! its event stream carry that namespace's entries only (a team bound to one namespace sees
//! nothing of another's), and the log line carries them all.
//!
//! A subsystem like the others: it holds the store (for the time) and the events, never the
//! state. What the HTTP side records, and how it tells who asked, is `http/audit.rs`.

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use heureka_wire::{AuditAction, AuditEntry};
use parking_lot::{Mutex, RwLock};

use crate::config::AuditConfig;
use crate::events::Events;
use crate::store::Store;

pub(crate) mod ring;

use ring::AuditRing;

/// How often summaries of refusals whose minute is over are completed.
const CLOSE_PERIOD: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub(crate) struct Audit {
    enabled: bool,
    ring: Mutex<AuditRing>,
    store: Arc<Store>,
    /// Each namespace's event stream, by name (`default`'s among them), for its entries.
    streams: RwLock<BTreeMap<String, Weak<Events>>>,
}

impl Audit {
    pub(crate) fn new(config: &AuditConfig, store: Arc<Store>, events: Arc<Events>) -> Audit {
        Audit {
            enabled: config.enabled,
            ring: Mutex::new(AuditRing::new(config.retained)),
            store,
            streams: RwLock::new(BTreeMap::from([(
                crate::namespace_name::DEFAULT.to_owned(),
                Arc::downgrade(&events),
            )])),
        }
    }

    /// Publishes namespace `name`'s entries on `events`, its stream, from now on.
    pub(crate) fn add_namespace(&self, name: &str, events: &Arc<Events>) {
        self.streams
            .write()
            .insert(name.to_owned(), Arc::downgrade(events));
    }

    /// Whether entries are recorded at all: callers skip gathering what no one keeps.
    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// Wall-clock milliseconds from the store's clock, for an entry's `at`.
    pub(crate) fn now(&self) -> heureka_core::Millis {
        self.store.now()
    }

    /// Records an administrative act: logged, kept and published at once.
    pub(crate) fn act(&self, entry: AuditEntry) {
        if !self.enabled {
            return;
        }
        let complete = self.ring.lock().record(entry);
        self.emit(complete);
    }

    /// Counts a refused request into its minute's summary, which is logged and published
    /// when the minute is over (the dashboard shows the running count meanwhile).
    pub(crate) fn refused(&self, entry: AuditEntry) {
        if !self.enabled {
            return;
        }
        let now = self.store.now();
        let complete = self.ring.lock().refuse(entry, now);
        self.emit(complete);
    }

    /// Completes the summaries whose minute is over.
    pub(crate) fn close_due(&self) {
        let now = self.store.now();
        let complete = self.ring.lock().close_due(now);
        self.emit(complete);
    }

    /// Completes every summary still counting: at shutdown, so none goes unlogged.
    pub(crate) fn close_all(&self) {
        let complete = self.ring.lock().close_all();
        self.emit(complete);
    }

    /// `{"entries":[…]}`, namespace `namespace`'s, newest first.
    pub(crate) fn recent_json(&self, namespace: &str) -> Vec<u8> {
        heureka_wire::encode_audit_entries(
            self.ring
                .lock()
                .newest_first()
                .filter(|entry| entry.namespace == namespace),
        )
    }

    /// Logs and publishes complete entries, outside the ring's lock: logging may block.
    fn emit(&self, complete: Vec<AuditEntry>) {
        for entry in complete {
            log(&entry);
            // A namespace not created yet has no stream of its own: its entry is kept and
            // logged only.
            let stream = self.streams.read().get(&entry.namespace).cloned();
            if let Some(events) = stream.and_then(|stream| stream.upgrade()) {
                events.audit(entry);
            }
        }
    }
}

/// One line per entry on `heureka::audit`, so operators can route the trail on its own.
fn log(entry: &AuditEntry) {
    let message = match entry.action {
        AuditAction::CredentialsRefused | AuditAction::ReplicationRefused => "refused requests",
        _ => "administrative act",
    };
    tracing::info!(
        target: "heureka::audit",
        at = entry.at,
        action = entry.action.name(),
        principal = %entry.principal,
        namespace = %entry.namespace,
        address = entry.address.as_deref(),
        app = entry.app.as_deref(),
        id = entry.id.as_deref(),
        asg = entry.asg.as_deref(),
        status = entry.status.as_deref(),
        metadata_keys = ?entry.metadata_keys,
        user = entry.user.as_deref(),
        outcome = entry.outcome,
        applied = entry.applied(),
        count = entry.count,
        "{message}"
    );
}

/// Completes the summaries of refusals once their minute is over, every second.
pub(crate) async fn close_summaries_every_second(audit: Arc<Audit>) {
    if !audit.enabled() {
        return;
    }
    let mut timer = tokio::time::interval(CLOSE_PERIOD);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        timer.tick().await;
        audit.close_due();
    }
}
