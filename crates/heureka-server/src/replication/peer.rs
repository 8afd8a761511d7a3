//! One peer as replication sees it: its URL, its queue of pending tasks, which replication it
//! speaks, and what the dispatcher last saw of it (`PeerState`, for logs, `/eureka/status`
//! and the dashboard). `peers.rs` says which servers are peers; this file is one of them.

use heureka_core::Millis;
use heureka_wire::ReplicationAction;
use parking_lot::Mutex;
use tokio::sync::Notify;

use super::peers::PeerUrl;
use super::queue::{InstanceKey, QueueLimits, ReplicationQueue};

/// What the dispatcher knows of a peer, for logs, `/eureka/status` and the dashboard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PeerState {
    pub(crate) url: String,
    /// False after a failed batch, true again after a delivered one.
    pub(crate) up: bool,
    pub(crate) queue_depth: usize,
    /// Tasks dropped because the queue was full or they expired.
    pub(crate) dropped_tasks: u64,
    pub(crate) batches_sent: u64,
    pub(crate) tasks_sent: u64,
    pub(crate) failures: u64,
    pub(crate) consecutive_failures: u32,
    pub(crate) last_success_at: Option<Millis>,
    pub(crate) last_error: Option<String>,
    /// How long the oldest task of the last delivered batch had waited, in ms.
    pub(crate) replication_lag_ms: Option<Millis>,
}

impl PeerState {
    pub(crate) fn new(url: &str) -> PeerState {
        PeerState {
            url: url.to_owned(),
            up: true,
            queue_depth: 0,
            dropped_tasks: 0,
            batches_sent: 0,
            tasks_sent: 0,
            failures: 0,
            consecutive_failures: 0,
            last_success_at: None,
            last_error: None,
            replication_lag_ms: None,
        }
    }
}

/// Which replication a peer speaks, as last learnt from its answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PeerProtocol {
    /// Not yet known (never answered, or unreachable since): stamped batches are tried first.
    Unknown,
    /// A Heureka server: stamped copies (`handlers/stamped.rs`).
    Heureka,
    /// A Java server (or a Heureka too old for stamps): Eureka's own batches.
    Eureka,
}

/// One peer: its URL, its queue, and what the dispatcher last saw of it.
#[derive(Debug)]
pub(crate) struct Peer {
    pub(crate) url: PeerUrl,
    /// The peer's URL in the default namespace (`url` itself there): what every namespace
    /// knows of the peer is kept under it (`holders.rs`).
    pub(crate) home: String,
    pub(super) queue: Mutex<ReplicationQueue>,
    /// Wakes the dispatcher when a task is queued.
    pub(super) wake: Notify,
    pub(super) state: Mutex<PeerState>,
    protocol: Mutex<PeerProtocol>,
}

impl Peer {
    pub(super) fn new(url: PeerUrl, limits: QueueLimits) -> Peer {
        let home = url.url.clone();
        Peer::at(home, url, limits)
    }

    /// The peer whose default namespace is at `home`, reached at `url` (in another namespace).
    pub(super) fn at(home: String, url: PeerUrl, limits: QueueLimits) -> Peer {
        Peer {
            state: Mutex::new(PeerState::new(url.as_str())),
            home,
            url,
            queue: Mutex::new(ReplicationQueue::new(limits)),
            wake: Notify::new(),
            protocol: Mutex::new(PeerProtocol::Unknown),
        }
    }

    pub(crate) fn protocol(&self) -> PeerProtocol {
        *self.protocol.lock()
    }

    pub(crate) fn set_protocol(&self, protocol: PeerProtocol) {
        *self.protocol.lock() = protocol;
    }

    pub(crate) fn enqueue(&self, app: &str, id: &str, action: ReplicationAction, now: Millis) {
        let key = InstanceKey {
            app: app.to_owned(),
            id: id.to_owned(),
        };
        self.queue.lock().push(key, action, now);
        self.wake.notify_one();
    }

    /// A snapshot of the peer's replication state, with the queue's current numbers.
    pub(crate) fn snapshot(&self) -> PeerState {
        let mut state = self.state.lock().clone();
        let queue = self.queue.lock();
        state.queue_depth = queue.len();
        state.dropped_tasks = queue.dropped();
        state
    }
}
