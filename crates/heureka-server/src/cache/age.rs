//! When cached bytes are too old to serve, and whether plain bodies are still wanted.

use std::time::Duration;

use crate::clock::Instant;

/// Whether plain bodies are kept: only while clients ask for them. A plain body is about 20
/// times its gzip, so a single `curl` must not pin a plain copy of a large registry for good;
/// one plain request in `max_age` keeps it.
pub(super) fn plain_wanted(
    plain_asked_at: Option<Instant>,
    now: Instant,
    max_age: Duration,
) -> bool {
    plain_asked_at.is_some_and(|at| younger(at, now, max_age))
}

/// Whether something made `at` is younger than `max_age` at `now`.
pub(super) fn younger(at: Instant, now: Instant, max_age: Duration) -> bool {
    now.saturating_duration_since(at) < max_age
}
