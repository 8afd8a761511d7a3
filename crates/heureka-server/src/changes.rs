//! The write path: every registry write goes through [`AppState::write`], which applies it
//! under the registry lock, takes the [`Change`]s it recorded and hands them, still under the
//! lock, to [`publish`]. That is the one place changes leave the registry: they are queued for
//! replication and counted for the metrics (and, as the server grows, streamed) from here, and logged once the
//! lock is released.
//!
//! The response caches need no message: they key on the registry's versions, which the same
//! changes moved. Publishing under the lock keeps every listener's view in registry order (a
//! cancel is never seen before the register it follows); listeners only queue, so the lock is
//! held for a few pushes, never for I/O.

use heureka_core::{Change, ChangeKind, Millis, Registry};

use crate::state::AppState;

impl AppState {
    /// Applies one write to the registry at the current time and publishes what it changed.
    pub(crate) fn write<T>(&self, write: impl FnOnce(&mut Registry, Millis) -> T) -> T {
        let now = self.now();
        let (result, changes) = {
            let mut registry = self.registry.lock();
            let result = write(&mut registry, now);
            let changes = registry.take_changes();
            publish(self, &registry, &changes);
            (result, changes)
        };
        // Logging writes to stdout, which may block: never under the lock.
        for change in &changes {
            log(change);
        }
        result
    }
}

/// Fans the changes of one write out to the listeners that queue them, under the lock.
fn publish(state: &AppState, registry: &Registry, changes: &[Change]) {
    for change in changes {
        state.replication.replicate(change);
        state.events.publish(change, registry);
        state.metrics.count(change);
    }
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
    }
}
