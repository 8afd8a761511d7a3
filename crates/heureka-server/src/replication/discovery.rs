//! Namespace discovery between Heureka peers. Replication creates a namespace on a peer with
//! the first write it copies there (`namespaces/creation.rs`), but a node that starts after
//! a namespace was created, or was cut off while it was, never saw that write. So the default
//! namespace's start-up sync and each of its anti-entropy rounds ask every peer which
//! namespaces it holds (`GET {peer origin}{prefix}`) and create those this node lacks,
//! within `heureka.namespaces.*`. A namespace created so runs its own start-up sync, and then
//! its own anti-entropy, which fill it from the peers.
//!
//! Java peers are not asked: they hold the default namespace only. A peer whose listing
//! answers 404 holds none either (`holders.rs`); one that lists is tried again.

use std::collections::BTreeSet;
use std::sync::{OnceLock, Weak};

use parking_lot::Mutex;
use tokio::task::JoinSet;

use super::peer::PeerProtocol;
use super::replicator::Replicator;

/// What discovery needs of this node's namespaces (`namespaces/directory.rs` has them).
pub(crate) trait NamespaceDirectory: Send + Sync {
    /// Whether this node holds a namespace called `name`, as a peer spelt it.
    fn holds(&self, name: &str) -> bool;
    /// Creates the namespace called `name` (as a peer spelt it), within
    /// `heureka.namespaces.*`; why not otherwise.
    fn create(&self, name: &str) -> Result<(), String>;
}

/// The directory discovery creates namespaces in, and what it last logged of refusals.
#[derive(Default)]
pub(crate) struct Discovery {
    /// Weak: the directory holds the default namespace's state, which holds this.
    directory: OnceLock<Weak<dyn NamespaceDirectory>>,
    /// The namespaces refused last round: a refusal is logged when this set changes, not
    /// every round.
    refused: Mutex<BTreeSet<String>>,
}

impl std::fmt::Debug for Discovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Discovery")
            .field("refused", &self.refused.lock())
            .finish_non_exhaustive()
    }
}

impl Discovery {
    /// Discovery creates namespaces in `directory` from now on.
    pub(crate) fn create_in(&self, directory: Weak<dyn NamespaceDirectory>) {
        let _ = self.directory.set(directory);
    }
}

/// Asks every peer that may hold namespaces which it holds, side by side, and creates those
/// this node lacks. Does nothing before a directory is given (a node without namespaces).
pub(crate) async fn discover(state: &Replicator) {
    let discovery = &state.replication.discovery;
    let Some(directory) = discovery.directory.get().and_then(Weak::upgrade) else {
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
    log_refusals(&discovery.refused, refused);
}

/// Logs the namespaces this node would not create, when they differ from last round's:
/// a node at `heureka.namespaces.max` says so once, not every anti-entropy interval.
fn log_refusals(last: &Mutex<BTreeSet<String>>, refused: BTreeSet<String>) {
    let mut last = last.lock();
    if *last == refused {
        return;
    }
    if let Some(first) = refused.iter().next() {
        tracing::warn!(count = refused.len(), %first, "namespaces held by peers not created here");
    }
    *last = refused;
}
