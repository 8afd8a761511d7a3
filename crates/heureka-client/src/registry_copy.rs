//! The local registry copy as its two writers share it: the periodic refresh (full fetch, then
//! deltas) and the push (`push.rs`: snapshots and deltas as the server makes them). Both go
//! through the same replace and patch of `cache.rs`'s [`LocalRegistry`] and publish the same
//! events, so instance lists and selection follow whichever came first.
//!
//! A fetch is answered with the registry as it was when the server read it; a pushed change
//! that the client applied while the fetch was under way may be newer. So a fetch takes a
//! [`Mark`] before its request and its answer is dropped if the push moved the copy since, as
//! Java's client drops a fetch that another overtook (`fetchRegistryGeneration`): the push
//! already holds what the fetch would bring, or newer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use heureka_core::{Applications, InstanceStatus};
use tokio::sync::broadcast;

use crate::cache::LocalRegistry;
use crate::events::{ClientEvent, FetchKind};

/// How the local copy has been kept current so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FetchCounts {
    /// Successful full fetches (`GET apps`).
    pub full: u64,
    /// Fetched deltas (`GET apps/delta`) applied whose hash matched, so that no full fetch was
    /// needed.
    pub deltas: u64,
    /// Snapshots the push replaced the copy with (`GET push`, `event: snapshot`).
    pub snapshots: u64,
    /// Deltas the push patched the copy with (`event: delta`), whatever their hash said.
    pub pushed: u64,
}

/// How many pushed documents the copy had taken when a fetch began.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mark(u64);

/// The copy, the events its changes publish, and the counts.
pub(crate) struct RegistryCopy {
    local: Mutex<LocalRegistry>,
    /// Pushed documents applied; written with `local` locked, so a fetch that reads it under
    /// the same lock knows whether the push went first.
    pushes: AtomicU64,
    /// The client's own instance, whose status in the copy is watched: `APP` and id.
    own: (String, String),
    /// The own instance's status in the copy, last time it was looked at.
    remote_status: Mutex<Option<InstanceStatus>>,
    events: broadcast::Sender<ClientEvent>,
    full: AtomicU64,
    deltas: AtomicU64,
    snapshots: AtomicU64,
    pushed: AtomicU64,
}

impl RegistryCopy {
    /// An empty copy (see [`LocalRegistry::new`]) of a client whose instance is `app`/`id`.
    pub(crate) fn new(
        filter_only_up: bool,
        own: (String, String),
        events: broadcast::Sender<ClientEvent>,
    ) -> RegistryCopy {
        RegistryCopy {
            local: Mutex::new(LocalRegistry::new(filter_only_up)),
            pushes: AtomicU64::new(0),
            own,
            remote_status: Mutex::new(None),
            events,
            full: AtomicU64::new(0),
            deltas: AtomicU64::new(0),
            snapshots: AtomicU64::new(0),
            pushed: AtomicU64::new(0),
        }
    }

    /// The copy, locked for reading.
    pub(crate) fn read(&self) -> MutexGuard<'_, LocalRegistry> {
        self.local.lock().expect("registry lock")
    }

    /// Taken by a fetch before it sends its request.
    pub(crate) fn mark(&self) -> Mark {
        let _local = self.read();
        Mark(self.pushes.load(Ordering::Relaxed))
    }

    /// Replaces the copy with a fetched full document and counts it; the applications that
    /// changed, or `None` (nothing done) when the push moved the copy since `mark`.
    pub(crate) fn replace_fetched(&self, full: Applications, mark: Mark) -> Option<Vec<String>> {
        let mut local = self.read();
        if self.pushes.load(Ordering::Relaxed) != mark.0 {
            return None;
        }
        let changed = local.replace(full);
        self.full.fetch_add(1, Ordering::Relaxed);
        Some(changed)
    }

    /// Patches the copy with a fetched delta (see [`LocalRegistry::apply_delta`]) and counts it
    /// when consistent; `None` (nothing done) when the push moved the copy since `mark`.
    pub(crate) fn patch_fetched(
        &self,
        delta: Applications,
        mark: Mark,
    ) -> Option<(bool, Vec<String>)> {
        let mut local = self.read();
        if self.pushes.load(Ordering::Relaxed) != mark.0 {
            return None;
        }
        let (consistent, changed) = local.apply_delta(delta);
        // Each fetch spreads the callers anew, as Java's does; a pushed delta only reshuffles
        // what it touched.
        local.reshuffle();
        if consistent {
            self.deltas.fetch_add(1, Ordering::Relaxed);
        }
        Some((consistent, changed))
    }

    /// Replaces the copy with a pushed snapshot; the applications that changed.
    pub(crate) fn replace_pushed(&self, snapshot: Applications) -> Vec<String> {
        let mut local = self.read();
        self.pushes.fetch_add(1, Ordering::Relaxed);
        self.snapshots.fetch_add(1, Ordering::Relaxed);
        local.replace(snapshot)
    }

    /// Patches the copy with a pushed delta: whether the result's hash is the delta's, and the
    /// applications it changed.
    pub(crate) fn patch_pushed(&self, delta: Applications) -> (bool, Vec<String>) {
        let mut local = self.read();
        self.pushes.fetch_add(1, Ordering::Relaxed);
        self.pushed.fetch_add(1, Ordering::Relaxed);
        local.apply_delta(delta)
    }

    pub(crate) fn counts(&self) -> FetchCounts {
        FetchCounts {
            full: self.full.load(Ordering::Relaxed),
            deltas: self.deltas.load(Ordering::Relaxed),
            snapshots: self.snapshots.load(Ordering::Relaxed),
            pushed: self.pushed.load(Ordering::Relaxed),
        }
    }

    /// Publishes a refresh: `CacheRefreshed` with what the copy now holds, `InstancesChanged`
    /// for each application in `changed`, and `RemoteStatusChanged` when the own instance's
    /// status in the copy moved.
    pub(crate) fn refreshed(&self, kind: FetchKind, mut changed: Vec<String>) {
        let ((applications, instances), remote) = {
            let local = self.read();
            (local.counts(), local.status_of(&self.own.0, &self.own.1))
        };
        self.emit(ClientEvent::CacheRefreshed {
            kind,
            applications,
            instances,
        });
        changed.sort();
        changed.dedup();
        for app in changed {
            self.emit(ClientEvent::InstancesChanged { app });
        }
        let old = std::mem::replace(
            &mut *self.remote_status.lock().expect("remote status lock"),
            remote,
        );
        if old != remote {
            self.emit(ClientEvent::RemoteStatusChanged { old, new: remote });
        }
    }

    pub(crate) fn emit(&self, event: ClientEvent) {
        // No subscriber is not an error.
        let _ = self.events.send(event);
    }
}
