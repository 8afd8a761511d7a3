//! The start-up sync (spec §6.15): before a node serves reads, it fetches its peers'
//! registries and registers every instance they hold as a peer's write (never replicated
//! back), so a restarted node does not answer its first read with an empty registry.
//!
//! Eureka retries the whole sync while it found nothing, `registry-sync-retries` times,
//! `registry-sync-retry-wait-ms` apart, even when every peer is plainly down, which is why a
//! Java node alone takes minutes to start. Here each peer is classified by its answer, and
//! only peers that may yet give a registry worth waiting for are asked again:
//! * it answered with its registry: its instances are registered (every peer that answers
//!   contributes, not only the first);
//! * it refused the connection, or accepted it and never answered: down, not waited for;
//! * it is a Heureka node in its own start-up sync (its 403 carries `STARTING_HEADER`):
//!   starting, not waited for either. It holds no registry yet beyond what it is itself
//!   waiting for, so waiting for it only makes nodes started together wait for each other
//!   (each for `retries × retry-wait`, minutes with Spring's defaults) while none of them has
//!   anything to give. What clients register on such a peer reaches this node by
//!   replication (batches are accepted while starting); what it syncs from its own peers, by
//!   anti-entropy (a peer's write is never replicated further);
//! * any other answer without a registry (a Java server's 403 while it starts, 503, 500):
//!   asked again, `registry-sync-retry-wait-ms` later, up to `registry-sync-retries` times.
//!
//! A node restored from its store (persistence) holds copies of real history, with stamps:
//! the full fetch's `register_synced` replaces none of them. So before that fetch it compares
//! what it restored with each peer's digest and merges the peers' later copies and tombstones
//! (`anti_entropy::reconcile_restored`): a cancel acknowledged while it was down wins over the
//! restored copy before the first read. With no peer answering it serves the restored view
//! alone and says so (`RestoreCheck::Unchecked`: a WARN, the persistence health component)
//! until an anti-entropy round with a peer checks it.
//!
//! So nodes started together open within a round trip of each other; a node that joins a
//! running cluster still holds its running peers' registries before its first read. The race
//! (a peer seen starting a moment before its sync ends) is harmless: what that peer is about
//! to hold comes from running peers this node asks itself, unless that peer is the only way
//! to them (a chain), and then anti-entropy brings it within one interval.

use std::collections::HashSet;
use std::sync::Arc;

use heureka_core::Applications;
use tokio::task::JoinSet;

use super::peer::Peer;
use super::replicator::{Replicator, RestoreCheck};
use super::transport::PeerError;
use super::{anti_entropy, discovery};

/// What the start-up sync found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SyncReport {
    /// Instances registered from peers (each once, from the first peer that held it).
    pub(crate) instances: usize,
    pub(crate) peers_answered: usize,
    pub(crate) peers_down: usize,
    /// Heureka peers in their own start-up sync, not waited for.
    pub(crate) peers_starting: usize,
    pub(crate) peers_unready: usize,
    /// Peers that hold no namespace but default (in another namespace), not waited for.
    pub(crate) peers_without_namespaces: usize,
    /// Peers whose digests a registry restored from the store was compared with.
    pub(crate) restored_checked_by: usize,
}

/// Syncs from every peer, then opens the registry for traffic with what was found.
pub(crate) async fn sync_from_peers(state: &Replicator) -> SyncReport {
    let mut report = SyncReport::default();
    if state.replication.restore_check() == RestoreCheck::Unchecked {
        report.restored_checked_by = check_restored(state).await;
    }
    if state.replication.is_default_namespace() {
        // The namespaces the peers hold are opened beside the default's fetch, and each then
        // runs a start-up sync of its own.
        tokio::join!(
            fetch_registries(state, &mut report),
            discovery::discover(state)
        );
    } else {
        fetch_registries(state, &mut report).await;
    }
    let count = u32::try_from(state.store.read().registry_size()).unwrap_or(u32::MAX);
    state
        .store
        .write(|registry, now| registry.open_for_traffic(count, now));
    state.replication.mark_synced();
    tracing::info!(
        instances = report.instances,
        registry_size = count,
        peers_answered = report.peers_answered,
        peers_down = report.peers_down,
        peers_starting = report.peers_starting,
        peers_unready = report.peers_unready,
        peers_without_namespaces = report.peers_without_namespaces,
        namespace = %state.replication.namespace_path(),
        "start-up sync done: serving reads"
    );
    if state.replication.restore_check() == RestoreCheck::Unchecked {
        tracing::warn!(
            "start-up sync: no Heureka peer answered to check the registry restored from the \
             store; serving the restored view alone until anti-entropy compares it with a \
             peer's (it may hold instances a peer has cancelled meanwhile)"
        );
    }
    report
}

/// A node restored from its store compares what it restored with every peer's digest, side
/// by side, and merges their later copies and tombstones before its first read: a cancel a
/// peer acknowledged while this node was down (or that this node applied and had not yet
/// written) wins over the restored copy. Returns how many peers it was checked with.
async fn check_restored(state: &Replicator) -> usize {
    let restored: HashSet<(String, String)> = state
        .store
        .read()
        .digest()
        .into_iter()
        .map(|entry| (entry.app, entry.id))
        .collect();
    let restored = Arc::new(restored);
    let mut checks = JoinSet::new();
    for peer in peers_to_ask(state) {
        let (state, restored) = (state.clone(), restored.clone());
        checks.spawn(async move {
            let outcome = anti_entropy::reconcile_restored(&state, &peer, &restored).await;
            (peer, outcome)
        });
    }
    let mut checked = 0;
    while let Some(joined) = checks.join_next().await {
        let Ok((peer, outcome)) = joined else {
            continue;
        };
        match outcome {
            Ok(Some(repairs)) => {
                checked += 1;
                state.replication.restore_checked_with(&peer);
                tracing::info!(
                    peer = %peer.url.as_str(),
                    pulled = repairs.pull.len(),
                    pushed = repairs.push.len(),
                    "start-up sync: restored registry compared with peer"
                );
            }
            Ok(None) => tracing::info!(
                peer = %peer.url.as_str(),
                "start-up sync: peer keeps no stamps (a Java server); restored copies are compared by anti-entropy"
            ),
            Err(error) => tracing::info!(
                peer = %peer.url.as_str(),
                %error,
                "start-up sync: restored registry not compared with peer"
            ),
        }
    }
    checked
}

/// Fetches every peer's registry, asking again those that may yet give one, and registers
/// what they hold (`register_synced`: nothing already held is replaced).
async fn fetch_registries(state: &Replicator, report: &mut SyncReport) {
    let settings = state.replication.settings();
    let mut pending = peers_to_ask(state);
    let attempts = if state.replication.settings().fetch_registry_at_start {
        settings.sync_attempts
    } else {
        0
    };
    for attempt in 1..=attempts {
        if pending.is_empty() {
            break;
        }
        if attempt > 1 {
            tracing::info!(
                attempt,
                peers = pending.len(),
                wait_ms = settings.sync_retry_wait.as_millis() as u64,
                "start-up sync: peers not ready, asking again"
            );
            tokio::time::sleep(settings.sync_retry_wait).await;
        }
        let mut still_unready = Vec::new();
        report.peers_unready = 0;
        for (peer, outcome) in fetch_all(state, &pending).await {
            match outcome {
                Ok(applications) => {
                    report.peers_answered += 1;
                    report.instances += register_all(state, applications);
                }
                Err(PeerError::Unreachable(why) | PeerError::TimedOut(why)) => {
                    report.peers_down += 1;
                    tracing::info!(peer = %peer.url.as_str(), %why, "start-up sync: peer is down");
                }
                Err(PeerError::Starting(why)) => {
                    report.peers_starting += 1;
                    tracing::info!(peer = %peer.url.as_str(), %why, "start-up sync: peer is starting too, not waited for");
                }
                Err(PeerError::Refused(why))
                    if why.starts_with("404") && !state.replication.is_default_namespace() =>
                {
                    report.peers_without_namespaces += 1;
                    state.replication.lacks_namespaces(&peer, &why);
                }
                Err(error) => {
                    report.peers_unready += 1;
                    tracing::warn!(peer = %peer.url.as_str(), %error, "start-up sync: peer did not give its registry");
                    still_unready.push(peer);
                }
            }
        }
        pending = still_unready;
    }
}

/// The peers this namespace syncs from: all of them, but those known to hold no namespace
/// outside the default one.
fn peers_to_ask(state: &Replicator) -> Vec<Arc<Peer>> {
    let mut peers = state.replication.peers();
    peers.retain(|peer| !state.replication.skips(peer));
    peers
}

async fn fetch_all(
    state: &Replicator,
    peers: &[std::sync::Arc<Peer>],
) -> Vec<(std::sync::Arc<Peer>, Result<Applications, PeerError>)> {
    let mut fetches = JoinSet::new();
    for peer in peers {
        let (client, peer) = (state.replication.client().clone(), peer.clone());
        fetches.spawn(async move {
            let outcome = client.fetch_applications(&peer.url).await;
            (peer, outcome)
        });
    }
    let mut outcomes = Vec::new();
    while let Some(joined) = fetches.join_next().await {
        if let Ok(outcome) = joined {
            outcomes.push(outcome);
        }
    }
    outcomes
}

/// Registers a peer's registry here as its replicas, of unknown history (`register_synced`:
/// nothing held is replaced), one application per write so that
/// requests arriving meanwhile wait for one application at most.
fn register_all(state: &Replicator, applications: Applications) -> usize {
    let mut count = 0;
    for application in applications.applications {
        count += state.store.write(|registry, now| {
            let mut count = 0;
            for instance in application.instances {
                if instance.app.is_empty() || instance.id().is_empty() {
                    continue;
                }
                // Of unknown history: the first stamped copy of any write replaces it.
                if registry.register_synced(instance, now) {
                    count += 1;
                }
            }
            count
        });
    }
    count
}
