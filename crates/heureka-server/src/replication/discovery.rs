//! Namespace discovery between Heureka peers. Replication creates a namespace on a peer with
//! the first write it copies there (`http/namespace_creation.rs`), but a node that starts after
//! a namespace was created, or was cut off while it was, never saw that write. So the default
//! namespace's start-up sync and each of its anti-entropy rounds ask every peer which
//! namespaces it holds (`GET {peer origin}{prefix}`) and create those this node lacks,
//! within `heureka.namespaces.*`. A namespace created so runs its own start-up sync, and then
//! its own anti-entropy, which fill it from the peers.
//!
//! Java peers are not asked: they hold the default namespace only. A peer whose listing
//! answers 404 holds none either (`holders.rs`); one that lists is tried again.

use std::collections::BTreeSet;

use tokio::task::JoinSet;

use super::peer::PeerProtocol;
use super::replicator::Replicator;

/// Asks every peer that may hold namespaces which it holds, side by side, and creates those
/// this node lacks. Does nothing before a directory is given (a node without namespaces).
pub(crate) async fn discover(state: &Replicator) {
    let discovery = &state.replication.discovery;
    let Some(directory) = discovery.directory() else {
        return;
    };
    let prefix = state.replication.settings().namespaces_prefix.clone();
    let mut asks = JoinSet::new();
    for peer in state.replication.peers() {
        if peer.protocol() == PeerProtocol::Eureka {
            continue;
        }
        let (client, prefix) = (state.replication.client().clone(), prefix.clone());
        asks.spawn(async move {
            let listed = client.fetch_namespace_names(&peer.url, &prefix).await;
            (peer, listed)
        });
    }
    let mut refused = BTreeSet::new();
    while let Some(joined) = asks.join_next().await {
        let Ok((peer, listed)) = joined else {
            continue;
        };
        let names = match listed {
            Ok(Some(names)) => names,
            Ok(None) => {
                let why = format!("404 on GET {prefix}");
                state.replication.lacks_namespaces(&peer, &why);
                continue;
            }
            Err(error) => {
                tracing::debug!(peer = %peer.url.as_str(), %error, "namespaces of peer not learnt");
                continue;
            }
        };
        state.replication.may_hold_namespaces(&peer);
        for name in names.iter().filter(|name| !directory.holds(name)) {
            match directory.create(name) {
                Ok(()) => {
                    tracing::info!(peer = %peer.url.as_str(), namespace = %name, "namespace learnt from a peer")
                }
                Err(why) => {
                    refused.insert(why);
                }
            }
        }
    }
    discovery.log_refusals(refused);
}
