//! Peer replication (spec §7): every write a client makes here is copied to every peer, and
//! what peers copy here is applied and never copied further (the one-hop rule).
//!
//! * `peers.rs` — which servers are peers, from `eureka.client.service-url.*`.
//! * `queue.rs` — one peer's pending tasks: coalescing, batching, expiry, a size limit.
//! * `dispatcher.rs` — one task per peer that sends its queue in batches, backs off, and
//!   reacts to the answers (re-register on a heartbeat's 404, adopt the peer's copy on 409).
//! * `transport.rs` — the HTTP requests to a peer, and the classification of their failures.
//! * `sync.rs` — the start-up sync: fetch the peers' registries before serving reads.
//! * `anti_entropy.rs` — periodic comparison with each peer and repair of differences.
//! * `senders.rs` — the addresses replication is accepted from: the peers', re-resolved.
//!
//! Writes reach the queues from the write path (`store.rs`, as a `ChangeSink`), under the registry lock, so
//! each peer's queue holds an instance's changes in the order the registry made them.

mod anti_entropy;
mod dispatcher;
mod peers;
mod queue;
mod senders;
mod sync;
mod transport;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use heureka_core::{Change, ChangeKind, Millis, Origin, Registry};
use heureka_wire::ReplicationAction;
use parking_lot::{Mutex, RwLock};
use tokio::sync::Notify;
use tokio::task::JoinSet;

use crate::config::Config;
use crate::events::Events;
use crate::store::{ChangeSink, Store};

pub(crate) use self::dispatcher::PeerState;
pub(crate) use self::peers::{OwnAddress, PeerUrl};
use self::queue::{InstanceKey, QueueLimits, ReplicationQueue};
pub(crate) use self::senders::PeerAddresses;
pub(crate) use self::sync::sync_from_peers;
pub(crate) use self::transport::STARTING_HEADER;
use self::transport::{PeerClient, Timeouts};

/// The replication settings, resolved from configuration once.
#[derive(Clone, Debug)]
pub(crate) struct ReplicationSettings {
    pub(crate) limits: QueueLimits,
    pub(crate) timeouts: Timeouts,
    pub(crate) compress: bool,
    pub(crate) adopt_newer_copies: bool,
    pub(crate) anti_entropy_interval: Option<Duration>,
    pub(crate) peer_refresh_interval: Duration,
    pub(crate) sync_attempts: u32,
    pub(crate) sync_retry_wait: Duration,
    /// `eureka.client.fetch-registry`: whether the start-up sync fetches from peers.
    pub(crate) fetch_registry_at_start: bool,
    /// `heureka.replication.peers-only`: whether senders are checked (and so resolved).
    pub(crate) peers_only: bool,
}

impl ReplicationSettings {
    pub(crate) fn from_config(config: &Config) -> ReplicationSettings {
        let server = &config.eureka_server;
        let heureka = &config.heureka.replication;
        ReplicationSettings {
            limits: QueueLimits {
                capacity: server.max_elements_in_peer_replication_pool.max(1),
                max_age_ms: server.max_time_for_replication as Millis,
                batch_delay_ms: heureka.batch_delay_ms as Millis,
                batch_size: heureka.batch_size,
            },
            timeouts: Timeouts {
                connect: Duration::from_millis(server.peer_node_connect_timeout_ms.max(1)),
                batch: Duration::from_millis(server.peer_node_read_timeout_ms.max(1)),
                registry_read: Duration::from_secs(
                    config.client.eureka_server_read_timeout_seconds.max(1),
                ),
            },
            compress: server.enable_replicated_request_compression,
            adopt_newer_copies: server.sync_when_timestamp_differs,
            anti_entropy_interval: Some(heureka.anti_entropy_interval_ms)
                .filter(|ms| *ms > 0)
                .map(Duration::from_millis),
            peer_refresh_interval: Duration::from_millis(
                server.peer_eureka_nodes_update_interval_ms.max(1_000),
            ),
            // Spring's rule: 0 configured retries become 5 when the server registers itself.
            sync_attempts: match (
                server.registry_sync_retries,
                config.client.register_with_eureka,
            ) {
                (0, true) => 5,
                (retries, _) => retries,
            },
            sync_retry_wait: Duration::from_millis(server.registry_sync_retry_wait_ms),
            fetch_registry_at_start: config.client.fetch_registry,
            peers_only: heureka.peers_only,
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
    queue: Mutex<ReplicationQueue>,
    /// Wakes the dispatcher when a task is queued.
    wake: Notify,
    state: Mutex<PeerState>,
    protocol: Mutex<PeerProtocol>,
}

impl Peer {
    fn new(url: PeerUrl, limits: QueueLimits) -> Peer {
        Peer {
            state: Mutex::new(PeerState::new(url.as_str())),
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

/// The peers of this server and the client that talks to them.
#[derive(Debug)]
pub(crate) struct Replication {
    peers: RwLock<Vec<Arc<Peer>>>,
    own: OwnAddress,
    settings: ReplicationSettings,
    client: PeerClient,
    /// False until the start-up sync is done; registry reads answer 403 until then, as
    /// Eureka's do (clients try another server).
    synced: AtomicBool,
    /// The addresses replication is accepted from, kept by `senders::run`.
    senders: PeerAddresses,
    /// Whether a registry restored from the store has been compared with a peer's.
    restore_check: Mutex<RestoreCheck>,
}

/// A node restored from its store serves what it kept only once a peer's copies and
/// tombstones have been merged into it, unless no peer answers: then it serves the restored
/// view alone (available, possibly stale), says so, and checks it at the first anti-entropy
/// round a peer answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RestoreCheck {
    /// Nothing was restored, or the node has no peers to compare with.
    NotNeeded,
    /// Restored, and not yet compared (the start-up sync has not run or found no peer).
    Unchecked,
    /// Restored, and compared with at least one peer's registry.
    Checked,
}

/// What replication's tasks share: the store they read and repair, the peers, and the event
/// stream that hears when a peer goes up or down.
#[derive(Clone, Debug)]
pub(crate) struct Replicator {
    pub(crate) store: Arc<Store>,
    pub(crate) replication: Arc<Replication>,
    pub(crate) events: Arc<Events>,
}

/// The TLS configuration of calls to `https://` peers (and of the health checks' probes). The binary has checked it before
/// starting; a server started otherwise with a bad one trusts the public roots only, and says so.
pub(crate) fn peer_tls(config: &Config) -> heureka_tls::rustls::ClientConfig {
    crate::tls::client_config(config.client.tls.as_ref()).unwrap_or_else(|error| {
        tracing::error!(%error, "eureka.client.tls cannot be used: https:// peers are verified against the public roots only");
        crate::tls::client_config(None).expect("the public roots always make a configuration")
    })
}

impl Replication {
    pub(crate) fn new(config: &Config, own: OwnAddress) -> Replication {
        let settings = ReplicationSettings::from_config(config);
        let urls = peers::peer_urls(config, &own);
        let senders =
            PeerAddresses::new(config.heureka.replication.allowed_addresses.clone(), &urls);
        let peers: Vec<Arc<Peer>> = urls
            .into_iter()
            .map(|url| Arc::new(Peer::new(url, settings.limits)))
            .collect();
        Replication {
            senders,
            // A single node has no one to sync from: it serves reads from the first request.
            synced: AtomicBool::new(peers.is_empty()),
            peers: RwLock::new(peers),
            client: PeerClient::new(settings.timeouts, settings.compress, peer_tls(config)),
            own,
            settings,
            restore_check: Mutex::new(RestoreCheck::NotNeeded),
        }
    }

    /// Marks the registry as restored from the store, to be checked against the peers.
    pub(crate) fn restored_from_store(&self) {
        if !self.peers.read().is_empty() {
            *self.restore_check.lock() = RestoreCheck::Unchecked;
        }
    }

    pub(crate) fn restore_check(&self) -> RestoreCheck {
        *self.restore_check.lock()
    }

    /// A comparison with `peer`'s digest has been applied: a restored registry is checked.
    pub(crate) fn restore_checked_with(&self, peer: &Peer) {
        let mut check = self.restore_check.lock();
        if *check == RestoreCheck::Unchecked {
            *check = RestoreCheck::Checked;
            tracing::info!(
                peer = %peer.url.as_str(),
                "restored registry checked against a peer: what peers wrote meanwhile is merged"
            );
        }
    }

    /// Whether `peer` is still one of the configured peers.
    pub(crate) fn is_peer(&self, peer: &Arc<Peer>) -> bool {
        self.peers
            .read()
            .iter()
            .any(|known| Arc::ptr_eq(known, peer))
    }

    /// Whether the start-up sync is done, so registry reads are served.
    pub(crate) fn is_synced(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }

    pub(crate) fn mark_synced(&self) {
        self.synced.store(true, Ordering::Release);
    }

    pub(crate) fn peers(&self) -> Vec<Arc<Peer>> {
        self.peers.read().clone()
    }

    pub(crate) fn settings(&self) -> &ReplicationSettings {
        &self.settings
    }

    pub(crate) fn client(&self) -> &PeerClient {
        &self.client
    }

    /// Who may send replication here.
    pub(crate) fn senders(&self) -> &PeerAddresses {
        &self.senders
    }
}

impl ChangeSink for Replication {
    /// Queues a change for every peer, unless it came from a peer (the one-hop rule) or is
    /// not replicated at all (eviction: each server evicts on its own).
    fn publish(&self, change: &Change, _: &Registry) {
        if change.origin == Origin::Peer {
            return;
        }
        let Some(action) = action_for(change.kind) else {
            return;
        };
        for peer in self.peers.read().iter() {
            peer.enqueue(&change.app, &change.id, action, change.at);
        }
    }
}

impl Replication {
    /// Every peer's replication state, for the status endpoint, logs and the dashboard.
    pub(crate) fn peer_states(&self) -> Vec<PeerState> {
        self.peers
            .read()
            .iter()
            .map(|peer| peer.snapshot())
            .collect()
    }

    /// Replaces the peer list with `urls`, keeping the peers (and queues) that stay and
    /// returning the new ones, whose dispatchers the caller starts. An empty list is ignored,
    /// as Eureka ignores it.
    fn update_peers(&self, urls: Vec<PeerUrl>) -> (Vec<Arc<Peer>>, Vec<String>) {
        if urls.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let mut peers = self.peers.write();
        let removed: Vec<String> = peers
            .iter()
            .filter(|peer| !urls.contains(&peer.url))
            .map(|peer| peer.url.as_str().to_owned())
            .collect();
        peers.retain(|peer| urls.contains(&peer.url));
        let mut added = Vec::new();
        for url in urls {
            if !peers.iter().any(|peer| peer.url == url) {
                let peer = Arc::new(Peer::new(url, self.settings.limits));
                peers.push(peer.clone());
                added.push(peer);
            }
        }
        (added, removed)
    }
}

/// The replication action for a local change (spec §7.2).
fn action_for(kind: ChangeKind) -> Option<ReplicationAction> {
    Some(match kind {
        ChangeKind::Registered | ChangeKind::MetadataUpdated => ReplicationAction::Register,
        // A status the rules changed on renew travels with the heartbeat, as in Eureka.
        ChangeKind::Renewed | ChangeKind::StatusChanged => ReplicationAction::Heartbeat,
        // A Heureka peer answers the heartbeat's newer stamps with 404 and gets our copy; a
        // Java peer, which has no stamps, just renews.
        ChangeKind::Restamped => ReplicationAction::Heartbeat,
        ChangeKind::Cancelled => ReplicationAction::Cancel,
        ChangeKind::StatusOverridden => ReplicationAction::StatusUpdate,
        ChangeKind::StatusOverrideRemoved => ReplicationAction::DeleteStatusOverride,
        // A Heureka peer merges the copy, verdict and all; a Java peer, which knows no
        // verdicts, takes the instance re-registered with the status it reads now (DOWN, or
        // back), as `docs/compat.md` says.
        ChangeKind::HealthChanged => ReplicationAction::Register,
        ChangeKind::Evicted => return None,
    })
}

/// Waits (briefly) until every peer's queue is empty, so the last writes before a shutdown,
/// this server's own cancel among them, reach the peers. Gives up after two seconds: a peer
/// that is down then learns of them from its eviction or anti-entropy.
pub(crate) async fn flush(replication: &Replication) {
    for _ in 0..40 {
        if replication
            .peer_states()
            .iter()
            .all(|peer| peer.queue_depth == 0)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Starts a dispatcher per peer, the peer-list refresh and anti-entropy.
pub(crate) fn spawn_all(state: &Replicator, reload: Option<ConfigReload>) -> JoinSet<()> {
    let mut tasks = JoinSet::new();
    let replication = &state.replication;
    for peer in replication.peers() {
        tracing::info!(peer = %peer.url.as_str(), "replicating to peer");
        tasks.spawn(dispatcher::run(state.clone(), peer));
    }
    if replication.peers().is_empty() {
        tracing::info!("no peers configured: running as a single node");
    }
    if let Some(interval) = replication.settings.anti_entropy_interval {
        tasks.spawn(anti_entropy::run(state.clone(), interval));
    }
    if let Some(reload) = reload {
        tasks.spawn(refresh_peers(state.clone(), reload));
    }
    if replication.settings.peers_only {
        tasks.spawn(senders::run(replication.clone()));
    }
    tasks
}

/// Reads the configuration again, for the periodic peer-list refresh.
pub type ConfigReload = Box<dyn Fn() -> Option<Config> + Send + Sync>;

/// Eureka's `PeerEurekaNodes` update timer: the configuration is read again (files and all)
/// every `peer-eureka-nodes-update-interval-ms`, and peers come and go with it.
async fn refresh_peers(state: Replicator, reload: ConfigReload) {
    let period = state.replication.settings.peer_refresh_interval;
    let mut timer = tokio::time::interval_at(crate::clock::instant() + period, period);
    let mut dispatchers = JoinSet::new();
    loop {
        timer.tick().await;
        let Some(config) = reload() else {
            tracing::warn!("peer list not refreshed: the configuration no longer loads");
            continue;
        };
        let urls = peers::peer_urls(&config, &state.replication.own);
        let (added, removed) = state.replication.update_peers(urls);
        for url in removed {
            tracing::info!(peer = %url, "peer removed from the configuration");
        }
        for peer in added {
            tracing::info!(peer = %peer.url.as_str(), "replicating to new peer");
            dispatchers.spawn(dispatcher::run(state.clone(), peer));
        }
    }
}
