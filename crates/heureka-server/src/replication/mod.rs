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
//! * `senders.rs` — the addresses replication is accepted from: the peers', re-resolved
//!   by `resolver.rs`.
//! * `discovery.rs` — the default namespace asks its peers which namespaces they hold, and
//!   creates those this node lacks.
//! * `directory.rs` — the node's namespaces as discovery sees them (a trait the namespaces
//!   implement).
//! * `holders.rs` — which peers hold no namespace but default (Java ones): the other
//!   namespaces send them nothing.
//! * `peer.rs` — one peer: its queue, the replication it speaks, what the dispatcher saw.
//! * `settings.rs` — the replication settings, resolved from configuration once.
//! * `replicator.rs` — `Replication` (the peers and their client, as a `ChangeSink`) and the
//!   `Replicator` every task runs on.
//! * `tasks.rs` — starts the tasks above; flushes the queues at shutdown.
//!
//! This file only declares the modules and re-exports what the rest of the server uses, so
//! no file here imports back from it.
//!
//! Writes reach the queues from the write path (`store.rs`, as a `ChangeSink`), under the registry lock, so
//! each peer's queue holds an instance's changes in the order the registry made them.

mod anti_entropy;
mod directory;
mod discovery;
mod dispatcher;
mod holders;
mod peer;
mod peers;
mod queue;
mod replicator;
mod resolver;
mod senders;
mod settings;
mod sync;
mod tasks;
#[cfg(test)]
mod test_config;
mod transport;

pub(crate) use self::directory::NamespaceDirectory;
pub(crate) use self::peer::PeerState;
pub(crate) use self::peers::OwnAddress;
pub(crate) use self::replicator::{peer_tls, Replication, Replicator, RestoreCheck};
pub(crate) use self::sync::sync_from_peers;
pub use self::tasks::ConfigReload;
pub(crate) use self::tasks::{flush, spawn_all};
pub(crate) use self::transport::STARTING_HEADER;

// Named by tests elsewhere in the server.
#[cfg(test)]
pub(crate) use self::{peer::PeerProtocol, peers::PeerUrl, settings::ReplicationSettings};
