//! Namespaces: isolated registries in one server, for many teams with their clients unchanged.
//!
//! A namespace is a whole `AppState` of its own (registry, leases, eviction, self-preservation,
//! caches, replication queues, events, push, consumers, health checks, persistence) sharing
//! the node's security, metrics and audit trail; one router serves them all, its handlers
//! reading the state of the request's namespace.
//! A Eureka client reaches one by its URL alone: `{prefix}/{name}{base}/…`.
//!
//! * `directory.rs` — the namespaces of this node: found, created (first registration or a
//!   peer's replication of one, within `heureka.namespaces.*`), listed; and the marks a
//!   request carries (`InNamespace`, `Vacancy`).
//! * `streams.rs` — a stream the vacant namespace serves ends when its namespace is created.
//!
//! Around them, each at its layer: what a name may be (`namespace_name.rs`, which the
//! configuration reads too), the service that picks a request's namespace (`dispatch.rs`),
//! and the innermost check that creates one (`http/namespace_creation.rs`).

mod directory;
mod streams;

pub(crate) use self::directory::{Factory, InNamespace, Namespace, Namespaces, Refused, Vacancy};
pub(crate) use self::streams::until_created;
