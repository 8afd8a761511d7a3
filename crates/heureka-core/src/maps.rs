//! The hash maps and sets the registry keeps, all with one hasher.
//!
//! foldhash instead of std's SipHash: the registry hashes app names and instance ids on every
//! write and rehashes a whole map when it grows, under the registry lock; with SipHash a lease
//! map's resize took about 1.5 times as long (`bench/results/regcpu.md`). The keys come from clients, so the
//! hasher must not be predictable (HashDoS): foldhash's `RandomState` seeds each map from a
//! per-process random seed, so an attacker cannot precompute colliding ids offline, which is
//! the protection std's random SipHash keys give a hash table too.

/// A hash map with foldhash's randomly seeded hasher; make one with `default()`.
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A hash set with foldhash's randomly seeded hasher; make one with `default()`.
pub(crate) type HashSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;
