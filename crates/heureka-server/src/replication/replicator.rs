//! What replication's tasks share: `Replication` (this server's peers, the client that talks
//! to them, who may send replication here, whether the start-up sync is done) and the
//! `Replicator` the tasks run on. As a `ChangeSink` it queues each local write for every peer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use heureka_core::{Change, ChangeKind, Origin, Registry};
use heureka_wire::ReplicationAction;
use parking_lot::{Mutex, RwLock};

use super::directory::{Discovery, NamespaceDirectory};
use super::holders::NamespaceHolders;
use super::peer::{Peer, PeerState};
use super::peers::{self, OwnAddress, PeerUrl};
use super::senders::PeerAddresses;
use super::settings::ReplicationSettings;
use super::transport::PeerClient;
use crate::config::Config;
use crate::events::Events;
use crate::store::{ChangeSink, Store};

/// The peers of this server and the client that talks to them.
#[derive(Debug)]
pub(crate) struct Replication {
    pub(super) peers: RwLock<Vec<Arc<Peer>>>,
    /// Whether `peers` holds any, kept with it (`update_peers`): a change published on a
    /// single node reads this flag, not the lock, whose reader count every worker thread
    /// would otherwise write at every heartbeat.
    has_peers: AtomicBool,
    pub(super) own: OwnAddress,
    pub(super) settings: ReplicationSettings,
    pub(super) client: PeerClient,
    /// False until the start-up sync is done; registry reads answer 403 until then, as
    /// Eureka's do (clients try another server).
    pub(super) synced: AtomicBool,
    /// The addresses replication is accepted from, kept by `resolver::run`; one set for
    /// every namespace, kept by the default namespace's resolver.
    pub(super) senders: Arc<PeerAddresses>,
    /// The path segment of this namespace (`/ns/team-a`), put before each peer URL's path,
    /// so that a peer applies what this namespace sends to its namespace of that name;
    /// empty in the default namespace (`peers::in_namespace`).
    pub(super) namespace_segment: String,
    /// Whether a registry restored from the store has been compared with a peer's.
    pub(super) restore_check: Mutex<RestoreCheck>,
    /// Which peers hold no namespace but default; one book for every namespace.
    pub(super) holders: Arc<NamespaceHolders>,
    /// This node's namespaces, which the default namespace's start-up sync and anti-entropy
    /// complete with those its peers hold (`discovery.rs`).
    pub(super) discovery: Discovery,
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
        let senders = Arc::new(PeerAddresses::new(
            config.heureka.replication.allowed_addresses.clone(),
            &urls,
        ));
        let peers: Vec<Arc<Peer>> = urls
            .into_iter()
            .map(|url| Arc::new(Peer::new(url, settings.limits)))
            .collect();
        Replication {
            senders,
            // A single node has no one to sync from: it serves reads from the first request.
            synced: AtomicBool::new(peers.is_empty()),
            has_peers: AtomicBool::new(!peers.is_empty()),
            peers: RwLock::new(peers),
            client: PeerClient::new(settings.timeouts, settings.compress, peer_tls(config)),
            own,
            settings,
            restore_check: Mutex::new(RestoreCheck::NotNeeded),
            namespace_segment: String::new(),
            holders: Arc::default(),
            discovery: Discovery::default(),
        }
    }

    /// The replication of the namespace at `segment` (`/ns/team-a`): the same peers, each
    /// reached under the namespace's path, sharing this one's client and senders. `peered`
    /// false gives a namespace no peers (one that only answers reads as empty).
    pub(crate) fn in_namespace(&self, segment: &str, peered: bool) -> Replication {
        let peers: Vec<Arc<Peer>> = if peered {
            self.peers()
                .iter()
                .map(|peer| {
                    let url = peers::in_namespace(&peer.url, segment);
                    Arc::new(Peer::at(peer.home.clone(), url, self.settings.limits))
                })
                .collect()
        } else {
            Vec::new()
        };
        Replication {
            senders: self.senders.clone(),
            synced: AtomicBool::new(peers.is_empty()),
            has_peers: AtomicBool::new(!peers.is_empty()),
            peers: RwLock::new(peers),
            client: self.client.clone(),
            own: self.own.clone(),
            settings: self.settings.clone(),
            restore_check: Mutex::new(RestoreCheck::NotNeeded),
            namespace_segment: segment.to_owned(),
            holders: self.holders.clone(),
            discovery: Discovery::default(),
        }
    }

    /// The peers `config` names, by their URLs in the default namespace.
    pub(super) fn configured_peers(&self, config: &Config) -> Vec<PeerUrl> {
        peers::peer_urls(config, &self.own)
    }

    /// This node's namespaces, for the default namespace's discovery of its peers'.
    pub(crate) fn discover_into(&self, directory: Weak<dyn NamespaceDirectory>) {
        self.discovery.create_in(directory);
    }

    /// Whether this namespace sends `peer` nothing: a namespace other than default, and the
    /// peer holds none (`holders.rs`).
    pub(crate) fn skips(&self, peer: &Peer) -> bool {
        !self.is_default_namespace() && self.holders.lacks(&peer.home)
    }

    /// `peer` holds no namespace but default, as `why` showed.
    pub(super) fn lacks_namespaces(&self, peer: &Peer, why: &str) {
        self.holders.mark_lacking(&peer.home, why);
    }

    /// `peer` may hold namespaces (again): every namespace tries it.
    pub(super) fn may_hold_namespaces(&self, peer: &Peer) {
        self.holders.forget(&peer.home);
    }

    /// The path segment of this namespace (`/ns/team-a`), or `/` in the default one: for logs.
    pub(crate) fn namespace_path(&self) -> &str {
        if self.namespace_segment.is_empty() {
            "/"
        } else {
            &self.namespace_segment
        }
    }

    /// Whether this is the default namespace's replication (the one whose tasks keep the
    /// shared senders resolved).
    pub(crate) fn is_default_namespace(&self) -> bool {
        self.namespace_segment.is_empty()
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
        if !self.has_peers.load(Ordering::Acquire) {
            return;
        }
        for peer in self.peers.read().iter() {
            if !self.skips(peer) {
                peer.enqueue(&change.app, &change.id, action, change.at);
            }
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

    /// Replaces the peer list with `homes` (the peers' URLs in the default namespace), keeping
    /// the peers (and queues) that stay and returning the new ones, whose dispatchers the
    /// caller starts. An empty list is ignored, as Eureka ignores it.
    pub(super) fn update_peers(&self, homes: Vec<PeerUrl>) -> (Vec<Arc<Peer>>, Vec<String>) {
        if homes.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let segment = &self.namespace_segment;
        let urls: Vec<(String, PeerUrl)> = homes
            .iter()
            .map(|home| (home.url.clone(), peers::in_namespace(home, segment)))
            .collect();
        let mut peers = self.peers.write();
        let removed: Vec<String> = peers
            .iter()
            .filter(|peer| !urls.iter().any(|(_, url)| *url == peer.url))
            .map(|peer| peer.url.as_str().to_owned())
            .collect();
        peers.retain(|peer| urls.iter().any(|(_, url)| *url == peer.url));
        let mut added = Vec::new();
        for (home, url) in urls {
            if !peers.iter().any(|peer| peer.url == url) {
                let peer = Arc::new(Peer::at(home, url, self.settings.limits));
                peers.push(peer.clone());
                added.push(peer);
            }
        }
        self.has_peers.store(!peers.is_empty(), Ordering::Release);
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
