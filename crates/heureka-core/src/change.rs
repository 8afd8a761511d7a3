//! What a write did to the registry, as a value.
//!
//! Every write (register, renew, cancel, status override set or removed, metadata, eviction)
//! records its effect through one function, [`Registry::record`], which also keeps the delta
//! queue and the version counters. The changes pile up in the registry's outbox until the
//! caller takes them ([`Registry::take_changes`]); the server does so after every write, under
//! the same lock, and fans them out to replication and whatever else listens. Nothing else in
//! the registry touches the delta queue or the versions, so none of them can disagree.

use crate::health::Health;
use crate::lease::Lease;
use crate::model::{InstanceStatus, Millis};
use crate::policy::Origin;
use crate::registry::Registry;
use crate::stored::Name;
use crate::takeover::Takeover;

/// What happened to one instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// Register or re-register, by a client or a peer.
    Registered,
    /// A heartbeat that changed nothing a reader sees.
    Renewed,
    /// A heartbeat on which the override rules changed the effective status.
    StatusChanged,
    /// An explicit cancel (deregister).
    Cancelled,
    /// Removed by the eviction task because its lease expired.
    Evicted,
    /// A status override was set (`PUT …/status`).
    StatusOverridden,
    /// A status override was removed (`DELETE …/status`).
    StatusOverrideRemoved,
    /// Metadata merged in place (`PUT …/metadata`), which Eureka turns into a re-register.
    MetadataUpdated,
    /// A health check's verdict flipped (`health.rs`): the instance reads DOWN, or is back.
    HealthChanged,
    /// An operator's override write that changes nothing a reader sees here (the override
    /// set again, or removed where none was in force) but is the latest write of the
    /// override: its stamp must reach the peers, so that an older write made elsewhere does
    /// not outlive it (`merge.rs`).
    Restamped,
}

impl ChangeKind {
    /// Whether readers see this change in the delta document and in new versions of the
    /// cached documents. Plain renews are invisible (their lease timestamps lag in cached
    /// documents, as behind Eureka's response cache), and so are restamps.
    pub fn is_visible(self) -> bool {
        !matches!(self, ChangeKind::Renewed | ChangeKind::Restamped)
    }

    /// Whether the instance is gone from the registry after this change.
    pub fn is_removal(self) -> bool {
        matches!(self, ChangeKind::Cancelled | ChangeKind::Evicted)
    }
}

/// One change to one instance, with the few facts replication and listeners need without
/// going back to the registry: the status, override and dirty timestamp *after* the write
/// (for a removal, as the instance was when it went).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub kind: ChangeKind,
    /// Upper-cased, as the registry keys it.
    pub app: String,
    pub id: String,
    /// A client's write or a peer's replica; replicas are never replicated again.
    pub origin: Origin,
    pub at: Millis,
    pub status: InstanceStatus,
    /// `UNKNOWN` when no override is in force.
    pub overridden_status: InstanceStatus,
    pub last_dirty_timestamp: Millis,
    /// The health checks' verdict after the write (`health.rs`).
    pub health: Health,
    /// A client's registration that moved a live instance to another endpoint
    /// (`takeover.rs`); `None` for every other change.
    pub takeover: Option<Box<Takeover>>,
}

/// What a write left of the instance it touched, for [`Registry::record`].
pub(crate) enum Left {
    /// The instance is registered; `before` is its status before the write, None if it is new.
    Registered { before: Option<InstanceStatus> },
    /// The write removed it: the lease as it went, with the map's shared copy of its id,
    /// which the delta shows after the instance has left the registry.
    Removed(Name, Lease),
}

impl Registry {
    /// The one place a write's effect is recorded: the outbox, the delta queue (for visible
    /// changes), the version counters (which also count each application's instances) and
    /// the status counts.
    /// Marks the change just recorded (a client's registration) as a takeover.
    pub(crate) fn mark_takeover(&mut self, taken_over: Takeover) {
        if let Some(change) = self.outbox.last_mut() {
            change.takeover = Some(Box::new(taken_over));
        }
    }

    pub(crate) fn record(
        &mut self,
        kind: ChangeKind,
        app: &str,
        id: &str,
        origin: Origin,
        left: Left,
        now: Millis,
    ) {
        let (before, holder) = match &left {
            Left::Registered { before } => {
                let lease = self.apps.get(app).and_then(|leases| leases.get(id));
                (*before, lease.map(|lease| &lease.holder))
            }
            // A removal leaves the lease's status as it was.
            Left::Removed(_, lease) => (Some(lease.holder.status), Some(&lease.holder)),
        };
        let after = match &left {
            Left::Registered { .. } => holder.map(|holder| holder.status),
            Left::Removed(..) => None,
        };
        let (status, overridden_status, last_dirty_timestamp, health) = holder
            .map(|holder| {
                (
                    holder.status,
                    holder.overridden_status,
                    holder.last_dirty_timestamp,
                    holder.health,
                )
            })
            .unwrap_or((
                InstanceStatus::Unknown,
                InstanceStatus::Unknown,
                0,
                Health::Passing,
            ));
        self.statuses.changed(before, after);
        self.outbox.push(Change {
            kind,
            app: app.to_owned(),
            id: id.to_owned(),
            origin,
            at: now,
            status,
            overridden_status,
            last_dirty_timestamp,
            health,
            takeover: None,
        });
        if !kind.is_visible() {
            return;
        }
        match left {
            Left::Removed(id_name, mut lease) => {
                // The lease's own shared copies of app and id, for the delta queue to share.
                let app_name = Name::clone(&lease.holder.app);
                let earlier = lease.delta_seq.take();
                self.recently_changed
                    .push_deleted(app_name, id_name, earlier, lease, now);
            }
            Left::Registered { .. } => self.queue_live(app, id, now),
        }
        let names = &mut self.names;
        self.versions
            .app_changed(app, before.is_some(), after.is_some(), || names.intern(app));
    }

    /// Queues the live item of a visible change and tells the lease its number.
    fn queue_live(&mut self, app: &str, id: &str, now: Millis) {
        // The lease's own shared copies of app and id, for the delta queue to share.
        let stored = self
            .apps
            .get(app)
            .and_then(|leases| leases.get_key_value(id));
        let Some((app_name, id_name, earlier)) = stored.map(|(key, lease)| {
            let app_name = Name::clone(&lease.holder.app);
            (app_name, Name::clone(key), lease.delta_seq)
        }) else {
            // Every visible change is to an instance the registry holds or has just removed.
            let (app, id) = (Name::from(app), Name::from(id));
            self.recently_changed.push_live(app, id, None, now);
            return;
        };
        let seq = self
            .recently_changed
            .push_live(app_name, id_name, earlier, now);
        // A second lookup: std's map lends its shared key only by shared reference.
        if let Some(lease) = self.apps.get_mut(app).and_then(|leases| leases.get_mut(id)) {
            lease.delta_seq = Some(seq);
        }
    }

    /// Every change recorded since the last call, oldest first. The server calls this after
    /// each write under the registry lock; the outbox is empty afterwards.
    pub fn take_changes(&mut self) -> Vec<Change> {
        std::mem::take(&mut self.outbox)
    }
}

#[cfg(test)]
mod tests;
