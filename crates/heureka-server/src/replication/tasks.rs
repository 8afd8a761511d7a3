//! Replication's background tasks: a dispatcher per peer, the peer-list refresh, anti-entropy
//! and the senders' resolver, started together; and the flush of the queues at shutdown.

use std::time::Duration;

use tokio::task::JoinSet;

use super::replicator::{Replication, Replicator};
use super::{anti_entropy, dispatcher, resolver};
use crate::config::Config;

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
    if replication.settings.peers_only && replication.is_default_namespace() {
        tasks.spawn(resolver::run(replication.clone()));
    }
    tasks
}

/// Reads the configuration again, for the periodic peer-list refresh (of every namespace).
pub type ConfigReload = std::sync::Arc<dyn Fn() -> Option<Config> + Send + Sync>;

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
        let urls = state.replication.configured_peers(&config);
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
