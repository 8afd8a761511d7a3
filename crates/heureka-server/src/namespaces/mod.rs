//! Namespaces: isolated registries in one server, for many teams with their clients unchanged.
//!
//! A namespace is a whole `AppState` of its own (registry, leases, eviction, self-preservation,
//! caches, replication queues, events, push, consumers, health checks, persistence) sharing
//! the node's security, metrics and audit trail; one router serves them all, its handlers
//! reading the state of the request's namespace.
//! A Eureka client reaches one by its URL alone: `{prefix}/{name}{base}/…`.
//!
//! * `name.rs` — what a namespace may be called.
//! * `directory.rs` — the namespaces of this node: found, created (first registration or a
//!   peer's replication of one, within `heureka.namespaces.*`), listed.
//! * `dispatch.rs` — the service every connection is handed: picks a request's namespace from
//!   its path or `x-namespace` header and puts its state in the request for the router.
//! * `streams.rs` — a stream the vacant namespace serves ends when its namespace is created.
//! * `creation.rs` — the innermost check that creates a namespace once a request that creates
//!   one has passed authentication and the roles.

mod creation;
mod directory;
mod dispatch;
pub(crate) mod name;
mod streams;

pub(crate) use self::creation::CreateOnWrite;
pub(crate) use self::directory::{Factory, Namespace, Namespaces, Vacancy};
pub(crate) use self::dispatch::{Dispatch, InNamespace};
