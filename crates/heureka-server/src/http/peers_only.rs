//! The gate in front of replication (`heureka.replication.peers-only`, on by default): the
//! peer endpoints (`{base}/peerreplication/*`: batch, digest, stamped, copies) and every write
//! in the single-request form (`x-netflix-discovery-replication: true`) are accepted only
//! from a peer. Eureka accepts them from anyone, which with authentication off lets anyone
//! overwrite, cancel or re-status any instance, and its peers spread the forgery.
//!
//! A peer is recognised by the address its connection comes from (`replication/senders.rs`:
//! what the peer URLs resolve to, and `heureka.replication.allowed-addresses`), or by the
//! credentials only peers hold (`heureka.replication.peer-user.*`, which peers send from the
//! `user:password@` of their service URLs, as Java peers do). Anything else is refused 403
//! with a one-line reason, and logged at WARN with the sender's address, at most
//! [`WARNINGS_PER_MINUTE`] lines a minute so a flood cannot flood the log.
//!
//! A gate (`gate.rs`): every request passes it, and `middleware::from_fn` would box each one.

use std::net::IpAddr;

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use parking_lot::Mutex;

use crate::clock;
use crate::connection::Sender;
use crate::http::error::ApiError;
use crate::http::gate::{Check, GateLayer};
use crate::http::origin::origin;
use crate::log_budget::LogBudget;
use crate::security::basic::presents;
use crate::state::SharedState;
use heureka_core::Origin;

/// Refusals logged at WARN per minute at most; the rest are counted into the next line.
pub(crate) const WARNINGS_PER_MINUTE: u32 = 10;

/// The layer: see the module docs.
pub(crate) type PeersOnlyLayer = GateLayer<PeerGate>;

/// What the layer checks against.
pub(crate) struct PeerGate {
    state: SharedState,
    /// `{base}/peerreplication/` and `{base}/v2/peerreplication/`.
    prefixes: [String; 2],
    warnings: Mutex<LogBudget>,
}

impl PeersOnlyLayer {
    pub(crate) fn new(state: SharedState, base_path: &str) -> PeersOnlyLayer {
        GateLayer::of(PeerGate {
            state,
            prefixes: [
                format!("{base_path}/peerreplication/"),
                format!("{base_path}/v2/peerreplication/"),
            ],
            warnings: Mutex::new(LogBudget::new(WARNINGS_PER_MINUTE)),
        })
    }
}

impl Check for PeerGate {
    /// Lets through everything that is not replication, and replication from a peer.
    fn check(&self, request: &mut Request) -> Result<(), ApiError> {
        let path = request.uri().path();
        let peer_endpoint = self
            .prefixes
            .iter()
            .any(|prefix| path.starts_with(prefix.as_str()));
        // Reads change nothing, whatever they carry: only writes take the header's meaning.
        let replicated_write =
            !request.method().is_safe() && origin(request.headers()) == Origin::Peer;
        if !peer_endpoint && !replicated_write {
            return Ok(());
        }
        let credentials = request.headers().get(header::AUTHORIZATION);
        let expected = self.state.security.peer_auth_header.as_deref();
        if presents(expected, credentials.map(HeaderValue::as_bytes)) {
            return Ok(());
        }
        let sender = request
            .extensions()
            .get::<Sender>()
            .map(|sender| sender.0.ip());
        if let Some(ip) = sender {
            if self.state.replication.senders().recognise(ip).is_some() {
                return Ok(());
            }
        }
        let reason = match sender {
            Some(ip) => format!(
                "replication is accepted only from this server's peers, and {ip} is not one \
                 (heureka.replication.peers-only)"
            ),
            None => "replication is accepted only from this server's peers, and the sender's \
                     address is unknown (heureka.replication.peers-only)"
                .to_owned(),
        };
        if let Some(suppressed) = self.warnings.lock().take(clock::instant()) {
            tracing::warn!(
                sender = %sender.map_or_else(|| "unknown".to_owned(), |ip: IpAddr| ip.to_string()),
                method = %request.method(),
                path,
                suppressed,
                "refused replication from a sender that is not a peer (403)"
            );
        }
        crate::http::audit::replication_refused(&self.state, request);
        Err(ApiError::NotAPeer(reason))
    }
}
