//! The eviction run (§6.12): cancel leases that stopped renewing, a few at a time.
//!
//! Eureka's `AbstractInstanceRegistry.evict` caps one run at `size − floor(size × pct)` leases,
//! so even with self-preservation off a single run cannot empty a registry, and picks the
//! victims uniformly at random so no app is always hit first. The randomness is a seed passed
//! in by the caller; the generator is a tiny SplitMix64, since this crate has no dependencies.

use crate::change::ChangeKind;
use crate::model::Millis;
use crate::origin::Origin;
use crate::outcomes::EvictionReport;
use crate::registry::Registry;

/// Eureka's `evictionLimit`: at most this many leases go in one run.
pub fn eviction_limit(registry_size: usize, renewal_percent_threshold: f64) -> usize {
    let keep = (registry_size as f64 * renewal_percent_threshold) as usize;
    registry_size - keep.min(registry_size)
}

/// Moves `count` uniformly chosen items to the front and cuts the rest: a partial
/// Fisher–Yates shuffle, as Eureka does with its clock-seeded `Random`.
pub(crate) fn choose_randomly<T>(mut candidates: Vec<T>, count: usize, seed: u64) -> Vec<T> {
    let count = count.min(candidates.len());
    let mut rng = SplitMix64(seed);
    for index in 0..count {
        let pick = index + rng.below(candidates.len() - index);
        candidates.swap(index, pick);
    }
    candidates.truncate(count);
    candidates
}

/// Sebastiano Vigna's SplitMix64: tiny, well mixed, and good enough to pick eviction victims.
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (multiply-shift; its bias is far below anything observable).
    pub(crate) fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }
}

impl Registry {
    /// One eviction run (§6.12). `compensation_ms` as Eureka computes it; `seed` drives the random choice.
    ///
    /// In self-preservation nothing is evicted; the report still carries the size, expired
    /// count and limit that would have applied, for the log line.
    pub fn evict(&mut self, now: Millis, compensation_ms: Millis, seed: u64) -> EvictionReport {
        let lease_expiration_enabled = self.lease_expiration_enabled();
        let registry_size = self.registry_size();
        let expired = self.expired_leases(now, compensation_ms);
        let eviction_limit = eviction_limit(registry_size, self.policy.renewal_percent_threshold);
        let mut report = EvictionReport {
            lease_expiration_enabled,
            registry_size,
            expired: expired.len(),
            eviction_limit,
            evicted: Vec::new(),
        };
        if !lease_expiration_enabled {
            return report;
        }
        let to_evict = expired.len().min(eviction_limit);
        for (app, id) in choose_randomly(expired, to_evict, seed) {
            // Eureka's `internalCancel`: like a cancel (E shrinks, DELETED delta), never replicated.
            if self.remove_lease(ChangeKind::Evicted, &app, &id, Origin::Client, now) {
                report.evicted.push((app, id));
            }
        }
        report
    }

    /// Expired leases as `(app, id)`, sorted so that a given seed always picks the same ones.
    fn expired_leases(&self, now: Millis, compensation_ms: Millis) -> Vec<(String, String)> {
        let mut expired: Vec<(String, String)> = self
            .apps
            .iter()
            .flat_map(|(app, leases)| {
                leases
                    .iter()
                    .filter(|(_, lease)| lease.is_expired(now, compensation_ms))
                    .map(move |(id, _)| (app.to_string(), id.to_string()))
            })
            .collect();
        expired.sort_unstable();
        expired
    }
}

#[cfg(test)]
mod tests;
