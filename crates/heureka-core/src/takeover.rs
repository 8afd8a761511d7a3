//! Takeovers: a client registering an instance id that a live lease holds at another address.
//!
//! Eureka keys instances by app and id alone, so a second process that registers the same id
//! (a copied configuration, a clone started before the old one stopped, or a hostile client)
//! silently replaces the first one's address for every consumer. Heureka keeps Eureka's rule —
//! the last registration wins — but notices: the write path reports the takeover with both
//! addresses (a WARN, a metric, an event), and an opt-in setting refuses it while the old lease
//! is alive. A lease that has expired or was cancelled is free to take.

use std::fmt;

use crate::lease::Lease;
use crate::model::{Instance, Millis};

/// Where an instance says it can be reached: what consumers would send traffic to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub host_name: String,
    pub ip_addr: String,
    pub port: u32,
}

impl Endpoint {
    fn of(instance: &Instance) -> Endpoint {
        Endpoint {
            host_name: instance.host_name.clone(),
            ip_addr: instance.ip_addr.clone(),
            port: instance.port.number,
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.ip_addr, self.port)?;
        if self.host_name != self.ip_addr {
            write!(f, " ({})", self.host_name)?;
        }
        Ok(())
    }
}

/// A registration that replaced a live instance's endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Takeover {
    /// Where the live lease's instance was.
    pub previous: Endpoint,
    /// Where the registration moves it.
    pub incoming: Endpoint,
}

/// Whether registering `incoming` over `existing` is a takeover at `now`: the lease is alive
/// (neither cancelled nor silent past its duration) and the endpoints differ.
///
/// The endpoints are compared where they are stored, and copied only for a takeover: nearly
/// every registration of a live lease comes from where it was, and copying both endpoints to
/// compare them was four allocations a registration.
pub(crate) fn takeover(existing: &Lease, incoming: &Instance, now: Millis) -> Option<Takeover> {
    if existing.is_expired(now, 0) {
        return None;
    }
    let (host_name, ip_addr, port) = existing.holder.endpoint();
    let moved = (host_name, ip_addr, port)
        != (
            incoming.host_name.as_str(),
            incoming.ip_addr.as_str(),
            incoming.port.number,
        );
    moved.then(|| Takeover {
        previous: Endpoint {
            host_name: host_name.to_owned(),
            ip_addr: ip_addr.to_owned(),
            port,
        },
        incoming: Endpoint::of(incoming),
    })
}

#[cfg(test)]
mod tests;
