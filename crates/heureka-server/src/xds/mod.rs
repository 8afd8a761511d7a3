//! xDS for proxyless gRPC and Envoy (`docs/xds.md`): an ADS server on `heureka.xds.port`
//! serving, per application, the Listener, RouteConfiguration, Cluster and
//! ClusterLoadAssignment gRPC's `xds:///APP` resolver asks for, from the local registry.
//!
//! * `resources.rs` — the Envoy resources built from plain endpoint data (pure);
//! * `targets.rs` — what a resource name stands for in the registry, as endpoints (pure);
//! * `cache.rs` — each application's endpoints as of its version, shared by the streams, so
//!   a change copies only the applications it touched;
//! * `stream.rs` — one stream's side of the protocol: subscriptions, versions, nonces,
//!   ACK/NACK, what to send after a change (pure);
//! * `hub.rs` — what the streams share: the registry version as a change sink, the stream
//!   budget, the last NACK, `status()`;
//! * `incoming.rs` — the port's connections, TLS, the peer's certificate;
//! * `server.rs` — the tonic service, authentication, each stream's task.

mod cache;
mod hub;
mod incoming;
mod resources;
mod server;
mod stream;
mod targets;

pub(crate) use self::hub::{Xds, XdsStatus};
pub(crate) use self::server::{bind, serve, Context};
