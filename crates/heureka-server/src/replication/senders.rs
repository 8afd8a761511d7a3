//! Who may send replication here: the peers, known by the addresses their URLs resolve to,
//! and the addresses `heureka.replication.allowed-addresses` adds.
//!
//! Eureka accepts a peer batch from anyone; with authentication off (its default) anyone can
//! then overwrite, cancel or re-status any instance, and the peers spread it. Heureka accepts
//! replication only from its peers (`http/peers_only.rs` is the gate; peers with credentials
//! of their own are recognised there). A peer URL names a host, and DNS names of peers move,
//! so the names are resolved again every `RESOLVE_INTERVAL` by one task (`resolver.rs`), which
//! owns what it learnt and publishes the union here; every address a name resolves to counts, v4
//! and v6. IP literals need no lookup and are known from the start.

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::sync::Arc;

use parking_lot::RwLock;
use url::{Host, Url};

use super::peers::PeerUrl;
use crate::config::{address::canonical, AddressRange};

/// The addresses replication is accepted from.
#[derive(Debug)]
pub(crate) struct PeerAddresses {
    /// `heureka.replication.allowed-addresses`.
    allowed: Vec<AddressRange>,
    /// Every address the peers' URLs resolved to, canonical (`address::canonical`).
    resolved: RwLock<Arc<BTreeSet<IpAddr>>>,
}

/// Why a sender's replication is accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Known {
    /// It comes from an address a peer's URL resolves to.
    PeerAddress,
    /// It comes from `heureka.replication.allowed-addresses`.
    AllowedAddress,
}

impl PeerAddresses {
    /// The allowed addresses, and the peers' IP literals (names wait for the first lookup).
    pub(crate) fn new(allowed: Vec<AddressRange>, peers: &[PeerUrl]) -> PeerAddresses {
        let literals = peers
            .iter()
            .filter_map(|peer| match peer_host(peer)? {
                PeerHost::Ip(ip) => Some(canonical(ip)),
                PeerHost::Name(..) => None,
            })
            .collect();
        PeerAddresses {
            allowed,
            resolved: RwLock::new(Arc::new(literals)),
        }
    }

    /// Whether `sender` may replicate here, and why.
    pub(crate) fn recognise(&self, sender: IpAddr) -> Option<Known> {
        let sender = canonical(sender);
        if self.resolved.read().contains(&sender) {
            return Some(Known::PeerAddress);
        }
        self.allowed
            .iter()
            .any(|range| range.contains(sender))
            .then_some(Known::AllowedAddress)
    }

    pub(super) fn publish(&self, addresses: BTreeSet<IpAddr>) {
        *self.resolved.write() = Arc::new(addresses);
    }
}

/// A peer URL's host: an address, or a name (with the port, which a lookup wants).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum PeerHost {
    Ip(IpAddr),
    Name(String, u16),
}

pub(super) fn peer_host(peer: &PeerUrl) -> Option<PeerHost> {
    let url = Url::parse(peer.as_str()).ok()?;
    let port = url.port_or_known_default().unwrap_or(80);
    Some(match url.host()? {
        Host::Ipv4(ip) => PeerHost::Ip(IpAddr::V4(ip)),
        Host::Ipv6(ip) => PeerHost::Ip(IpAddr::V6(ip)),
        Host::Domain(name) => match name.parse::<IpAddr>() {
            Ok(ip) => PeerHost::Ip(ip),
            Err(_) => PeerHost::Name(name.to_ascii_lowercase(), port),
        },
    })
}

#[cfg(test)]
mod tests;
