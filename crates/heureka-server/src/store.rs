//! The store: the only owner of the registry and of the clock its writes are stamped by (in
//! the spirit of mini-redis's `Db`). Everything else holds an `Arc<Store>` and goes through three doors:
//!
//! * [`Store::read`] lends the registry read-only, under its lock;
//! * [`Store::write`] is the one write path: it applies a write at the store's `now`, takes
//!   the [`Change`]s the registry recorded and hands each, still under the lock, to every
//!   [`ChangeSink`] in the order [`Store::new`] was given them, then logs them once the lock
//!   is released;
//! * [`Store::now`] and [`Store::instant`] are the time, wall-clock milliseconds for Eureka's
//!   timestamps and a monotonic instant for ages and deadlines, both from the store's
//!   [`Clock`] (Tokio's paused clock in tests). Code that keeps deadlines but holds no store
//!   reads the same monotonic time from `clock::instant()`.
//!
//! The registry is a blocking mutex, not an async one: every critical section is a few hash
//! lookups (or one snapshot copy) and never spans an `.await`, so no task is ever parked
//! holding it. Publishing under the lock keeps every sink's view in registry order (a cancel
//! is never seen before the register it follows); sinks only queue, count or send, so the lock
//! is held for a few pushes, never for I/O. The response caches need no sink: they key on the
//! registry's versions, which the same changes moved.

use std::fmt::Debug;
use std::ops::Deref;
use std::sync::Arc;

use heureka_core::{Change, ChangeKind, Millis, Registry};
use parking_lot::{Mutex, MutexGuard};

use crate::clock::{Clock, Instant};
use crate::log_budget::LogBudget;

/// A consumer of the registry's changes: replication, events, metrics. Called under the
/// registry lock, once per change, in registry order; it must only queue, count or send.
pub(crate) trait ChangeSink: Debug + Send + Sync {
    fn publish(&self, change: &Change, registry: &Registry);

    /// Called once a write's changes have all been published, still under the lock, with the
    /// registry as the write left it, when one of them is visible to readers (a heartbeat's is
    /// not): for a sink that sends one message per write (the push's delta, whose
    /// `apps__hashcode` must be the registry's after the whole write).
    fn written(&self, _registry: &Registry) {}
}

#[derive(Debug)]
pub(crate) struct Store {
    registry: Mutex<Registry>,
    clock: Clock,
    sinks: Vec<Arc<dyn ChangeSink>>,
    refused_copies: Mutex<RefusedCopies>,
}

/// Peers' copies of new instances the registry refused for want of room (`max-instances`),
/// reported as a client's refused registration is, within a budget of lines a minute: an
/// anti-entropy round against a peer holding thousands more would otherwise log each.
#[derive(Debug)]
struct RefusedCopies {
    budget: LogBudget,
    /// Refused since the last line, told in the next.
    unreported: u64,
}

/// Lines a minute about refused copies.
const REFUSED_COPIES_LOGGED_PER_MINUTE: u32 = 10;

/// The registry lent read-only: [`Store::read`]'s guard. Writes cannot go through it.
pub(crate) struct ReadGuard<'a>(MutexGuard<'a, Registry>);

impl Deref for ReadGuard<'_> {
    type Target = Registry;

    fn deref(&self) -> &Registry {
        &self.0
    }
}

impl Store {
    /// A store owning `registry`, telling time by `clock`, fanning changes out to `sinks`.
    pub(crate) fn new(registry: Registry, clock: Clock, sinks: Vec<Arc<dyn ChangeSink>>) -> Store {
        Store {
            registry: Mutex::new(registry),
            clock,
            sinks,
            refused_copies: Mutex::new(RefusedCopies {
                budget: LogBudget::new(REFUSED_COPIES_LOGGED_PER_MINUTE),
                unreported: 0,
            }),
        }
    }

    /// The registry, read-only, for as long as the guard lives: keep it short, never across
    /// an `.await`.
    pub(crate) fn read(&self) -> ReadGuard<'_> {
        ReadGuard(self.registry.lock())
    }

    /// Applies one write to the registry at the current time and publishes what it changed.
    pub(crate) fn write<T>(&self, write: impl FnOnce(&mut Registry, Millis) -> T) -> T {
        let now = self.now();
        let (result, logged, refused) = {
            let mut registry = self.registry.lock();
            let result = write(&mut registry, now);
            let changes = registry.changes();
            for change in changes {
                for sink in &self.sinks {
                    sink.publish(change, &registry);
                }
            }
            if changes.iter().any(|change| change.kind.is_visible()) {
                for sink in &self.sinks {
                    sink.written(&registry);
                }
            }
            // The changes leave the registry only when one of them is logged: a heartbeat's
            // line is at debug level, and a vector per heartbeat was an allocation each.
            let logged = if changes.iter().any(has_a_log_line) {
                registry.take_changes()
            } else {
                registry.discard_changes();
                Vec::new()
            };
            let refused = (
                registry.take_copies_refused_for_room(),
                registry.limits().max_instances,
            );
            (result, logged, refused)
        };
        // Logging writes to stdout, which may block: never under the lock.
        for change in &logged {
            log(change);
        }
        if refused.0 > 0 {
            self.report_refused_copies(refused.0, refused.1);
        }
        result
    }

    fn report_refused_copies(&self, copies: u64, max: usize) {
        let mut refused = self.refused_copies.lock();
        refused.unreported += copies;
        if refused.budget.take(self.instant()).is_some() {
            let copies = std::mem::take(&mut refused.unreported);
            drop(refused);
            tracing::warn!(
                copies,
                max_instances = max,
                "refused peers' copies of new instances: the registry holds \
                 heureka.limits.max-instances (re-registrations, updates and removals are taken)"
            );
        }
    }

    /// The current time in Eureka's milliseconds since the epoch.
    pub(crate) fn now(&self) -> Millis {
        self.clock.now_millis()
    }

    /// The clock this store tells time by, for another namespace's store on this node.
    pub(crate) fn clock(&self) -> Clock {
        self.clock
    }

    /// The current monotonic time, for ages and deadlines.
    pub(crate) fn instant(&self) -> Instant {
        self.clock.instant()
    }
}

/// Whether `log` writes a line for the change at the levels enabled.
fn has_a_log_line(change: &Change) -> bool {
    change.kind != ChangeKind::Renewed || tracing::enabled!(tracing::Level::DEBUG)
}

/// One log line per change a reader can see; heartbeats only at debug level.
fn log(change: &Change) {
    let Change {
        app,
        id,
        origin,
        status,
        ..
    } = change;
    if let Some(taken_over) = &change.takeover {
        // Eureka logs this as an ordinary registration; it moves every consumer's traffic.
        tracing::warn!(
            %app,
            %id,
            previous = %taken_over.previous,
            incoming = %taken_over.incoming,
            "instance taken over: registered from another endpoint while its lease was alive"
        );
    }
    match change.kind {
        ChangeKind::Renewed => tracing::debug!(%app, %id, ?origin, "renewed lease"),
        ChangeKind::Registered => {
            tracing::info!(%app, %id, %status, ?origin, "registered instance")
        }
        ChangeKind::Cancelled => tracing::info!(%app, %id, ?origin, "cancelled lease"),
        ChangeKind::Evicted => tracing::info!(%app, %id, "evicted expired lease"),
        ChangeKind::StatusChanged => tracing::info!(%app, %id, %status, "status changed on renew"),
        ChangeKind::StatusOverridden => {
            tracing::info!(%app, %id, %status, ?origin, "status override set")
        }
        ChangeKind::StatusOverrideRemoved => {
            tracing::info!(%app, %id, %status, ?origin, "status override removed")
        }
        ChangeKind::MetadataUpdated => tracing::info!(%app, %id, "metadata updated"),
        ChangeKind::HealthChanged => {
            let health = change.health.as_str();
            tracing::info!(%app, %id, %status, ?origin, health, "health check verdict changed");
        }
        ChangeKind::Restamped => {
            tracing::info!(%app, %id, ?origin, "status override written again (no change here)")
        }
    }
}
