//! Which peers hold namespaces. Namespaces are Heureka's: a Java Eureka peer (or a Heureka
//! older than namespaces) holds the default namespace only and answers 404 under
//! `{prefix}/{name}/…`. Every namespace's replication shares this book, keyed by the peer's
//! URL in the default namespace, so that a namespace other than default sends such a peer
//! nothing (no batches, no failures counted, no start-up sync waited on) once any of them
//! has learnt it:
//! * the default namespace's dispatcher, when the peer answers as a Java server;
//! * any namespace, when the peer answers 404 under the prefix (a stamped batch, a registry).
//!
//! It is forgotten when the peer may have become another server (unreachable, then back) or
//! lists its namespaces (`discovery.rs`): the namespaces then try it again.

use std::collections::HashSet;

use parking_lot::Mutex;

/// The peers known to hold no namespaces, by their URL in the default namespace.
#[derive(Debug, Default)]
pub(crate) struct NamespaceHolders {
    lacking: Mutex<HashSet<String>>,
    /// Peers already logged as holding none: the log says it once per peer, however often
    /// it is learnt again.
    logged: Mutex<HashSet<String>>,
}

impl NamespaceHolders {
    /// Whether the peer at `home` is known to hold no namespace but default.
    pub(crate) fn lacks(&self, home: &str) -> bool {
        self.lacking.lock().contains(home)
    }

    /// The peer at `home` holds no namespaces: `why` is what showed it. Logged once per peer.
    pub(crate) fn mark_lacking(&self, home: &str, why: &str) {
        self.lacking.lock().insert(home.to_owned());
        if self.logged.lock().insert(home.to_owned()) {
            tracing::info!(
                peer = %home,
                %why,
                "peer holds the default namespace only (a Java Eureka server, or a Heureka \
                 without namespaces): other namespaces are not replicated to it"
            );
        }
    }

    /// The peer at `home` may hold namespaces (again): the namespaces try it.
    pub(crate) fn forget(&self, home: &str) {
        self.lacking.lock().remove(home);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_marked_lacking_is_lacking_until_forgotten() {
        let holders = NamespaceHolders::default();
        assert!(!holders.lacks("http://java:8761/eureka/"));
        holders.mark_lacking("http://java:8761/eureka/", "speaks Eureka's protocol");
        assert!(holders.lacks("http://java:8761/eureka/"));
        assert!(!holders.lacks("http://other:8761/eureka/"));
        holders.forget("http://java:8761/eureka/");
        assert!(!holders.lacks("http://java:8761/eureka/"));
    }
}
