//! The resolver of the senders' addresses: one task that looks every peer's host name up now
//! and every `RESOLVE_INTERVAL`, and publishes what it found in `senders::PeerAddresses`
//! (`senders.rs` says why peer names are resolved again).

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use super::replicator::Replication;
use super::senders::{peer_host, PeerHost};
use crate::config::address::canonical;

/// How often the peers' host names are looked up again.
pub(crate) const RESOLVE_INTERVAL: Duration = Duration::from_secs(30);

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
