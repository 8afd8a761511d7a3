//! Eureka's rate limiter on registry fetches (`eureka.server.rate-limiter-*`, spec §6.13).
//!
//! GETs of `{base}/apps` (a full fetch), `{base}/apps/delta` and `{base}/apps/{app}` take a
//! token from one bucket shared by every client (`registry-fetch-average-rate` per second,
//! up to `burst-size` at once); full fetches also take one from a second bucket
//! (`full-fetch-average-rate`). A fetch that finds a bucket empty is over the rate: counted in
//! `heureka_rate_limited_fetches_total`, and answered 503 only when `rate-limiter-enabled`, so
//! an operator can watch what the limiter would refuse before turning it on.
//!
//! Clients are told apart by `DiscoveryIdentity-Name`: Eureka servers (`DefaultServer`) and the
//! names in `rate-limiter-privileged-clients` are never limited, Eureka's own clients
//! (`DefaultClient`) only with `rate-limiter-throttle-standard-clients`. Exempt fetches take no
//! token. The buckets take the time as an argument, so their rule is tested without waiting.
//! The three fetch handlers ask it through `http/rate_limit.rs`, which reads the client's name
//! and answers a refusal.

use heureka_core::Millis;
use parking_lot::Mutex;

use crate::config::RateLimiterConfig;

/// What Eureka servers send as their identity when they fetch from a peer.
const SERVER_NAME: &str = "DefaultServer";
/// What Eureka's Java client sends.
const CLIENT_NAME: &str = "DefaultClient";

/// Which kind of fetch a request is; only fetches are limited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fetch {
    Full,
    Delta,
    Application,
}

impl Fetch {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Fetch::Full => "full",
            Fetch::Delta => "delta",
            Fetch::Application => "application",
        }
    }
}

/// A token bucket: refills at `rate` tokens per second up to `burst`, starting full.
#[derive(Debug)]
pub(crate) struct TokenBucket {
    /// Tokens in thousandths, so that a refill of a few milliseconds is not lost to rounding.
    milli_tokens: u64,
    refilled_at: Option<Millis>,
}

impl TokenBucket {
    pub(crate) const fn new() -> TokenBucket {
        TokenBucket {
            milli_tokens: 0,
            refilled_at: None,
        }
    }

    /// Takes a token if there is one at `now` (milliseconds).
    pub(crate) fn acquire(&mut self, burst: u32, rate: u32, now: Millis) -> bool {
        let capacity = u64::from(burst.max(1)) * 1000;
        self.milli_tokens = match self.refilled_at {
            None => capacity,
            Some(then) => {
                // A clock stepping back refills nothing.
                let elapsed = u64::try_from(now.saturating_sub(then)).unwrap_or(0);
                let refill = elapsed.saturating_mul(u64::from(rate));
                self.milli_tokens.saturating_add(refill).min(capacity)
            }
        };
        self.refilled_at = Some(self.refilled_at.map_or(now, |then| then.max(now)));
        if self.milli_tokens >= 1000 {
            self.milli_tokens -= 1000;
            true
        } else {
            false
        }
    }
}

/// What the limiter decided for one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Not a fetch, an exempt client, or within the rate.
    Pass,
    /// Over the rate, and the limiter only counts.
    Counted(Fetch),
    /// Over the rate, and the limiter refuses (503).
    Refused(Fetch),
}

/// The limiter: its settings and the two shared buckets.
#[derive(Debug)]
pub(crate) struct RateLimiter {
    config: RateLimiterConfig,
    /// Every fetch, then full fetches: taken together under one lock, as one decision.
    buckets: Mutex<(TokenBucket, TokenBucket)>,
}

impl RateLimiter {
    pub(crate) fn new(config: RateLimiterConfig) -> RateLimiter {
        RateLimiter {
            config,
            buckets: Mutex::new((TokenBucket::new(), TokenBucket::new())),
        }
    }

    /// Whether `client` (its `DiscoveryIdentity-Name`) is never limited.
    fn exempt(&self, client: Option<&str>) -> bool {
        let Some(client) = client else {
            return false;
        };
        client == SERVER_NAME
            || (client == CLIENT_NAME && !self.config.throttle_standard_clients)
            || self
                .config
                .privileged_clients
                .iter()
                .any(|name| name == client)
    }

    /// Decides for a `fetch` by `client` at `now`.
    pub(crate) fn decide(&self, fetch: Fetch, client: Option<&str>, now: Millis) -> Decision {
        if self.exempt(client) {
            return Decision::Pass;
        }
        let config = &self.config;
        let burst = config.burst_size;
        let mut buckets = self.buckets.lock();
        let (all, full) = &mut *buckets;
        // Both buckets are asked, as in Eureka: a full fetch over either rate is over.
        let mut within = all.acquire(burst, config.registry_fetch_average_rate, now);
        if fetch == Fetch::Full {
            within &= full.acquire(burst, config.full_fetch_average_rate, now);
        }
        match (within, config.enabled) {
            (true, _) => Decision::Pass,
            (false, false) => Decision::Counted(fetch),
            (false, true) => Decision::Refused(fetch),
        }
    }
}

#[cfg(test)]
mod tests;
