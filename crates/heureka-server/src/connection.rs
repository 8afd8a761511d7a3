//! What the listener learns about a connection and puts in each request it carries: the
//! sender's address and the names of the client's certificate; and what it asks the service
//! first ([`AnswersAtOnce`]). A leaf, so that the listener that writes them and the HTTP side
//! that reads them need not import each other.

use std::net::SocketAddr;
use std::sync::Arc;

/// The address a request's connection comes from, in the request's extensions: replication
/// is accepted by sender (`http/peers_only.rs`), event streams are limited per sender's IP
/// address (`handlers/events.rs`). Absent for requests that never crossed a
/// socket (the in-process test and fuzzing servers).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sender(pub(crate) SocketAddr);

/// A service that answers some requests from their head alone, before the listener's
/// per-request work: wrapping the body, putting the sender in the extensions, boxing the
/// future, timing the body. The fast lane's heartbeats take it (`dispatch.rs`): a heartbeat
/// has no body, and its renewal reads only the method, the URI and the headers.
pub(crate) trait AnswersAtOnce {
    /// The answer to `request`, or `None`: the request then goes the whole way, unchanged.
    fn answer_at_once<B>(
        &self,
        request: &axum::http::Request<B>,
    ) -> Option<axum::response::Response>;
}

/// The names of the certificate a client presented over TLS (its subject's common name, then
/// its alternative names), in the request's extensions; absent without one. Authentication
/// (`http/auth.rs`) maps it to a user.
#[derive(Clone, Debug)]
pub(crate) struct ClientCertificate(pub(crate) Arc<Vec<String>>);
