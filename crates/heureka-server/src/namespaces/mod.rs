//! Namespaces: isolated registries in one server, for many teams with their clients unchanged.
//!
//! A namespace is a whole `AppState` of its own (registry, leases, eviction, self-preservation,
//! caches, replication queues, events, push, consumers, health checks, persistence) sharing
//! the node's security, metrics and audit trail, served by its own router over its own state.
//! A Eureka client reaches one by its URL alone: `{prefix}/{name}{base}/…`.
//!
//! * `name.rs` — what a namespace may be called.
//! * `directory.rs` — the namespaces of this node: found, created (first registration or a
//!   peer's replication of one, within `heureka.namespaces.*`), listed.
//! * `dispatch.rs` — the service every connection is handed: picks a request's namespace from
//!   its path or `x-namespace` header and hands it to that namespace's router.
//! * `creation.rs` — the layer of the vacant router that creates a namespace once a request
//!   that creates one has passed authentication and the roles.

mod creation;
mod directory;
mod dispatch;
pub(crate) mod name;

pub(crate) use self::creation::create_on_write;
pub(crate) use self::directory::{Factory, Namespace, Namespaces};
pub(crate) use self::dispatch::{Dispatch, Vacancy};
