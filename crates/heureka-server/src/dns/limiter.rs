//! `heureka.dns.rate-limit`: a token bucket per source address (the fetch limiter's
//! [`TokenBucket`]), `rate` queries a second, a second's worth at once. The table of sources
//! is bounded: when full, sources idle for a minute are forgotten, and if none is, a new
//! source is refused until one is (a flood from many addresses is refused, not remembered).

use std::collections::HashMap;
use std::net::IpAddr;

use heureka_core::Millis;

use crate::rate_limiter::TokenBucket;

/// Sources remembered at most.
const MAX_SOURCES: usize = 65_536;
/// A source not heard from for this long may be forgotten (its bucket is full again anyway).
const IDLE_MS: Millis = 60_000;

#[derive(Debug)]
pub(crate) struct SourceLimiter {
    rate: u32,
    sources: HashMap<IpAddr, (TokenBucket, Millis)>,
    max_sources: usize,
}

impl SourceLimiter {
    pub(crate) fn new(rate: u32) -> SourceLimiter {
        SourceLimiter::bounded(rate, MAX_SOURCES)
    }

    fn bounded(rate: u32, max_sources: usize) -> SourceLimiter {
        SourceLimiter {
            rate,
            sources: HashMap::new(),
            max_sources,
        }
    }

    /// Whether a query from `source` at `now` is within the rate.
    pub(crate) fn admit(&mut self, source: IpAddr, now: Millis) -> bool {
        if !self.sources.contains_key(&source) && self.sources.len() >= self.max_sources {
            self.sources
                .retain(|_, (_, heard)| now.saturating_sub(*heard) < IDLE_MS);
            if self.sources.len() >= self.max_sources {
                return false;
            }
        }
        let (bucket, heard) = self
            .sources
            .entry(source)
            .or_insert_with(|| (TokenBucket::new(), now));
        *heard = now;
        bucket.acquire(self.rate, self.rate, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(last: u8) -> IpAddr {
        [192, 0, 2, last].into()
    }

    #[test]
    fn a_source_gets_a_seconds_worth_at_once_then_the_rate() {
        let mut limiter = SourceLimiter::new(10);
        let admitted = (0..15).filter(|_| limiter.admit(source(1), 0)).count();
        assert_eq!(admitted, 10);
        assert!(!limiter.admit(source(1), 50), "half a token refilled");
        assert!(limiter.admit(source(1), 100), "one token refilled");
    }

    #[test]
    fn sources_are_limited_apart() {
        let mut limiter = SourceLimiter::new(1);
        assert!(limiter.admit(source(1), 0));
        assert!(!limiter.admit(source(1), 0));
        assert!(limiter.admit(source(2), 0));
    }

    #[test]
    fn a_full_table_forgets_idle_sources_and_refuses_new_ones_while_none_is() {
        let mut limiter = SourceLimiter::bounded(5, 2);
        assert!(limiter.admit(source(1), 0));
        assert!(limiter.admit(source(2), 30_000));
        assert!(
            !limiter.admit(source(3), 40_000),
            "no source idle for a minute"
        );
        assert!(limiter.admit(source(3), 60_000), "source 1 forgotten");
        assert!(limiter.admit(source(2), 60_000), "source 2 kept");
    }
}
