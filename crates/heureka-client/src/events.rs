//! What the client tells its application about: the counterpart of Java's `EurekaEvent`,
//! `StatusChangeEvent` and `CacheRefreshedEvent`, delivered on a Tokio broadcast channel
//! ([`crate::EurekaClient::subscribe`]).

use heureka_core::InstanceStatus;

/// Something the client did or saw. A subscriber that falls behind by more than
/// [`EVENT_BUFFER`] events loses the oldest (`RecvError::Lagged`); the client never waits for
/// one.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientEvent {
    /// A registration (`POST apps/APP`) was answered 204: at start, after a heartbeat's 404, or
    /// because the instance info changed.
    Registered { status: InstanceStatus },
    /// A registration failed; the instance stays dirty and is sent again.
    RegistrationFailed { error: String },
    /// A heartbeat was answered 200.
    Renewed,
    /// A heartbeat failed (after every service URL was tried).
    RenewalFailed { error: String },
    /// The local registry copy was refreshed: by a full fetch or a consistent delta, or by what
    /// the server pushed (`kind` says which); the counts are of what the copy now holds, every
    /// status included.
    CacheRefreshed {
        kind: FetchKind,
        applications: usize,
        instances: usize,
    },
    /// A refresh or a push changed an application's instances (any instance added, removed or
    /// modified), so a caller holding a list of them should take a fresh one.
    InstancesChanged { app: String },
    /// The status this client registers changed: the application set it, or the health check
    /// answered differently.
    StatusChanged {
        old: InstanceStatus,
        new: InstanceStatus,
    },
    /// The server's view of this instance's status changed, as seen in the registry copy
    /// (`None`: not in the registry). This is where an operator's override shows, since the
    /// server's override wins over what the client reports.
    RemoteStatusChanged {
        old: Option<InstanceStatus>,
        new: Option<InstanceStatus>,
    },
    /// The server that pushes to this client took its acknowledgement (`POST push/ack`, 204)
    /// that the copy holds its registry version `version`: it now counts the client as a
    /// consumer holding it, as after a fetch (what `heureka drain` waits for).
    Acknowledged { version: u64 },
}

/// How a refresh got the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FetchKind {
    /// A full fetch, `GET apps`.
    Full,
    /// A fetched delta, `GET apps/delta`, whose hash matched.
    Delta,
    /// A snapshot the server pushed (`GET push`, `event: snapshot`): the whole registry.
    Snapshot,
    /// A delta the server pushed (`event: delta`): one write's changes, as they happened.
    PushedDelta,
}

/// Events kept for a subscriber that has not read them yet.
pub const EVENT_BUFFER: usize = 256;
