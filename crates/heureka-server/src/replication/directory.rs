//! What replication knows of this node's namespaces: the directory the default namespace's
//! discovery (`discovery.rs`) creates namespaces in, behind a trait that
//! `namespaces/directory.rs` implements, so that replication depends on no namespace code.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::Mutex;

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

    /// The directory, while it exists.
    pub(super) fn directory(&self) -> Option<Arc<dyn NamespaceDirectory>> {
        self.directory.get().and_then(Weak::upgrade)
    }

    /// Logs the namespaces this node would not create, when they differ from last round's:
    /// a node at `heureka.namespaces.max` says so once, not every anti-entropy interval.
    pub(super) fn log_refusals(&self, refused: BTreeSet<String>) {
        let mut last = self.refused.lock();
        if *last == refused {
            return;
        }
        if let Some(first) = refused.iter().next() {
            tracing::warn!(count = refused.len(), %first, "namespaces held by peers not created here");
        }
        *last = refused;
    }
}
