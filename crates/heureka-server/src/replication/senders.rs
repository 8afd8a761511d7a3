//! Who may send replication here: the peers, known by the addresses their URLs resolve to,
//! and the addresses `heureka.replication.allowed-addresses` adds.
//!
//! Eureka accepts a peer batch from anyone; with authentication off (its default) anyone can
//! then overwrite, cancel or re-status any instance, and the peers spread it. Heureka accepts
//! replication only from its peers (`http/peers_only.rs` is the gate; peers with credentials
//! of their own are recognised there). A peer URL names a host, and DNS names of peers move,
//! so the names are resolved again every [`RESOLVE_INTERVAL`] by one task, [`run`], which owns
//! what it learnt and publishes the union here; every address a name resolves to counts, v4
//! and v6. IP literals need no lookup and are known from the start.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use url::{Host, Url};

use super::{PeerUrl, Replication};
use crate::config::{address::canonical, AddressRange};

/// How often the peers' host names are looked up again.
pub(crate) const RESOLVE_INTERVAL: Duration = Duration::from_secs(30);

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

    fn publish(&self, addresses: BTreeSet<IpAddr>) {
        *self.resolved.write() = Arc::new(addresses);
    }
}

/// A peer URL's host: an address, or a name (with the port, which a lookup wants).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum PeerHost {
    Ip(IpAddr),
    Name(String, u16),
}

fn peer_host(peer: &PeerUrl) -> Option<PeerHost> {
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

/// The resolver: looks every peer's host up now and every [`RESOLVE_INTERVAL`], and publishes
/// the union of what it found.
pub(crate) async fn run(replication: Arc<Replication>) {
    let mut resolver = Resolver::default();
    let mut timer = tokio::time::interval(RESOLVE_INTERVAL);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        timer.tick().await;
        resolver.round(&replication).await;
    }
}

/// What the resolver knows between rounds; only [`run`] holds it.
#[derive(Debug, Default)]
pub(crate) struct Resolver {
    /// Each peer host's addresses as last resolved.
    known: BTreeMap<PeerHost, BTreeSet<IpAddr>>,
    /// Names whose last lookup failed: warned about once, not every round.
    failing: BTreeSet<PeerHost>,
}

impl Resolver {
    /// Looks up every current peer's host and publishes the union. A lookup that fails keeps
    /// that name's last addresses (a DNS hiccup must not cut a peer off); a host no longer
    /// among the peers is forgotten.
    pub(crate) async fn round(&mut self, replication: &Replication) {
        let hosts: BTreeSet<PeerHost> = replication
            .peers()
            .iter()
            .filter_map(|peer| peer_host(&peer.url))
            .collect();
        self.known.retain(|host, _| hosts.contains(host));
        self.failing.retain(|host| hosts.contains(host));
        for host in hosts {
            let found = match &host {
                PeerHost::Ip(ip) => Ok(BTreeSet::from([canonical(*ip)])),
                PeerHost::Name(name, port) => lookup(name, *port).await,
            };
            match found {
                Ok(found) => {
                    self.failing.remove(&host);
                    if self.known.get(&host) != Some(&found) {
                        if let PeerHost::Name(name, _) = &host {
                            tracing::info!(
                                peer = %name,
                                addresses = ?found,
                                "peer host resolved: replication accepted from these addresses"
                            );
                        }
                        self.known.insert(host, found);
                    }
                }
                Err(error) => {
                    if let PeerHost::Name(name, _) = &host {
                        if self.failing.insert(host.clone()) {
                            tracing::warn!(
                                peer = %name,
                                %error,
                                kept = ?self.known.get(&host),
                                "peer host name not resolved: its last addresses are kept"
                            );
                        }
                    }
                }
            }
        }
        replication
            .senders()
            .publish(self.known.values().flatten().copied().collect());
    }
}

async fn lookup(name: &str, port: u16) -> std::io::Result<BTreeSet<IpAddr>> {
    let found: BTreeSet<IpAddr> = tokio::net::lookup_host((name, port))
        .await?
        .map(|address| canonical(address.ip()))
        .collect();
    if found.is_empty() {
        return Err(std::io::Error::other("no address"));
    }
    Ok(found)
}

#[cfg(test)]
mod tests;
