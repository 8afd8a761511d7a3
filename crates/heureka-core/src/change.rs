//! What a write did to the registry, as a value.
//!
//! Every write (register, renew, cancel, status override set or removed, metadata, eviction)
//! records its effect through one function, `Registry::record` (`record.rs`), which also keeps
//! the delta queue and the version counters. The changes pile up in the registry's outbox until
//! the caller reads them (`Registry::changes`) and takes or discards them
//! (`Registry::take_changes`, `Registry::discard_changes`); the server does so after every
//! write, under the same lock, and fans them out to replication and whatever else listens.

use std::sync::Arc;

use crate::health::Health;
use crate::lease::Lease;
use crate::model::{InstanceStatus, Millis};
use crate::origin::Origin;
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
    /// Upper-cased, as the registry keys it. The registry's own shared copy of the name, as
    /// is `id`: recording a heartbeat allocates no name.
    pub app: Arc<str>,
    pub id: Arc<str>,
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

/// What a write left of the instance it touched, for `Registry::record` (`record.rs`).
pub(crate) enum Left {
    /// The instance is registered; `before` is its status before the write, None if it is new.
    Registered { before: Option<InstanceStatus> },
    /// The instance is registered, and the write read it already (a heartbeat, the commonest
    /// write), so `record` need not look it up again.
    Read {
        before: Option<InstanceStatus>,
        read: Read,
    },
    /// The write removed it: the lease as it went, with the map's shared copy of its id,
    /// which the delta shows after the instance has left the registry.
    Removed(Name, Lease),
}

/// What a change records of a registered instance, read from its lease: the lease's own shared
/// copies of its names, and the parts of the instance that a change carries.
pub(crate) struct Read {
    pub(crate) app: Name,
    pub(crate) id: Name,
    pub(crate) status: InstanceStatus,
    pub(crate) overridden_status: InstanceStatus,
    pub(crate) last_dirty_timestamp: Millis,
    pub(crate) health: Health,
}

impl Read {
    /// `lease`, held in its map under `id`.
    pub(crate) fn of(id: &Name, lease: &Lease) -> Read {
        let holder = &lease.holder;
        Read {
            app: Name::clone(&holder.app),
            id: Name::clone(id),
            status: holder.status,
            overridden_status: holder.overridden_status,
            last_dirty_timestamp: holder.last_dirty_timestamp,
            health: holder.health,
        }
    }

    /// What a change records of an instance the registry does not hold.
    pub(crate) fn absent(app: &str, id: &str) -> Read {
        Read {
            app: Name::from(app),
            id: Name::from(id),
            status: InstanceStatus::Unknown,
            overridden_status: InstanceStatus::Unknown,
            last_dirty_timestamp: 0,
            health: Health::Passing,
        }
    }
}
