//! What the DNS server has answered, for `Dns::status` (the dashboard's system status); the
//! same numbers go to Prometheus through `metrics.rs`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use super::answer::Outcome;

/// Queries by outcome, and truncated answers.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    by_outcome: [AtomicU64; Outcome::ALL.len()],
    truncated: AtomicU64,
}

impl Counters {
    pub(crate) fn count(&self, outcome: Outcome) {
        self.by_outcome[outcome as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn truncated(&self) {
        self.truncated.fetch_add(1, Ordering::Relaxed);
    }

    fn of(&self, outcome: Outcome) -> u64 {
        self.by_outcome[outcome as usize].load(Ordering::Relaxed)
    }

    pub(crate) fn status(&self, enabled: bool, address: Option<SocketAddr>) -> DnsStatus {
        DnsStatus {
            enabled,
            address,
            queries: Outcome::ALL.iter().map(|outcome| self.of(*outcome)).sum(),
            answered: self.of(Outcome::Answered),
            nxdomain: self.of(Outcome::NxDomain),
            rate_limited: self.of(Outcome::RateLimited),
            truncated: self.truncated.load(Ordering::Relaxed),
        }
    }
}

/// The DNS server at a glance: whether it runs, where, and what it answered since start-up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DnsStatus {
    /// `heureka.dns.enabled`.
    pub(crate) enabled: bool,
    /// Where it listens (UDP and TCP), once bound.
    pub(crate) address: Option<SocketAddr>,
    /// Every query answered, whatever the answer.
    pub(crate) queries: u64,
    /// Answered with at least one record.
    pub(crate) answered: u64,
    pub(crate) nxdomain: u64,
    /// Refused over `heureka.dns.rate-limit`.
    pub(crate) rate_limited: u64,
    /// Answers cut to fit a UDP message (TC set; the client retries over TCP).
    pub(crate) truncated: u64,
}
