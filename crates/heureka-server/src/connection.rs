//! What the listener learns about a connection and puts in each request it carries: the
//! sender's address and the names of the client's certificate. A leaf, so that the listener
//! that writes them and the HTTP side that reads them need not import each other.

use std::net::SocketAddr;
use std::sync::Arc;

/// The address a request's connection comes from, in the request's extensions: replication
/// is accepted by sender (`http/peers_only.rs`), event streams are limited per sender's IP
/// address (`handlers/events.rs`). Absent for requests that never crossed a
/// socket (the in-process test and fuzzing servers).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sender(pub(crate) SocketAddr);

/// The names of the certificate a client presented over TLS (its subject's common name, then
/// its alternative names), in the request's extensions; absent without one. Authentication
/// (`http/auth.rs`) maps it to a user.
#[derive(Clone, Debug)]
pub(crate) struct ClientCertificate(pub(crate) Arc<Vec<String>>);
