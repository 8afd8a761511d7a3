//! The background jobs of a Eureka server: eviction, the renews-per-minute bucket, the
//! renewal-threshold update and delta-queue retention. Each is a Tokio task on its own timer;
//! each writes through the one write path (`Store::write`) and logs what it decided, with the numbers behind it.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;

use crate::clock::{self, every};

use crate::config::Config;
use crate::events::Events;
use crate::store::Store;

/// Starts every background job; they stop when the returned set is dropped or aborted.
pub(crate) fn spawn_all(store: &Arc<Store>, events: &Arc<Events>, config: &Config) -> JoinSet<()> {
    let server = &config.eureka_server;
    let mut tasks = JoinSet::new();
    tasks.spawn(evict_expired_leases(
        store.clone(),
        millis(server.eviction_interval_timer_in_ms),
    ));
    tasks.spawn(roll_renews_bucket(
        store.clone(),
        events.clone(),
        server.enable_self_preservation,
    ));
    tasks.spawn(update_renewal_threshold(
        store.clone(),
        millis(server.renewal_threshold_update_interval_ms),
    ));
    tasks.spawn(crate::events::flush_renewals_every_second(
        store.clone(),
        events.clone(),
    ));
    tasks.spawn(purge_delta_queue(
        store.clone(),
        millis(server.delta_retention_timer_interval_in_ms),
    ));
    tasks
}

fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms.max(1))
}

/// Eureka's `EvictionTask`: evicts expired leases, capped, unless self-preservation holds.
async fn evict_expired_leases(store: Arc<Store>, period: Duration) {
    let mut timer = every(period);
    let mut previous = clock::instant();
    loop {
        timer.tick().await;
        // Time beyond the period since the previous run (a stalled process, a suspended VM)
        // counts towards expiry, so a late run does not evict less than it should.
        let now = clock::instant();
        let compensation = now
            .saturating_duration_since(previous)
            .saturating_sub(period);
        previous = now;
        let (report, numbers) = store.write(|registry, now| {
            let report = registry.evict(now, compensation.as_millis() as i64, now as u64);
            (report, registry.self_preservation())
        });
        if !report.lease_expiration_enabled {
            if report.expired > 0 {
                tracing::warn!(
                    expired = report.expired,
                    renews_last_min = numbers.renews_last_min,
                    renews_threshold = numbers.renews_threshold,
                    "self-preservation: not evicting expired leases"
                );
            }
            continue;
        }
        if !report.evicted.is_empty() {
            tracing::info!(
                evicted = report.evicted.len(),
                expired = report.expired,
                eviction_limit = report.eviction_limit,
                registry_size = report.registry_size,
                "eviction run"
            );
        }
    }
}

/// Rolls the renews-per-minute counter and reports entering or leaving self-preservation.
async fn roll_renews_bucket(
    store: Arc<Store>,
    events: Arc<Events>,
    self_preservation_enabled: bool,
) {
    let mut timer = every(Duration::from_secs(60));
    loop {
        timer.tick().await;
        let (before, after, status) = store.write(|registry, now| {
            let before = registry.self_preservation();
            registry.roll_renews_bucket();
            let status = events.status_of(registry, now);
            (before, registry.self_preservation(), status)
        });
        // The event goes out with the numbers of this roll, as the log line below does.
        events.observe_self_preservation(status, store.now());
        if !self_preservation_enabled
            || before.lease_expiration_enabled == after.lease_expiration_enabled
        {
            continue;
        }
        // One line with the roll's numbers; a macro because tracing takes a level spelled out.
        macro_rules! report {
            ($level:ident, $message:literal) => {
                tracing::$level!(
                    renews_last_min = after.renews_last_min,
                    renews_threshold = after.renews_threshold,
                    expected_clients = after.expected_clients,
                    $message
                )
            };
        }
        if after.lease_expiration_enabled {
            report!(info, "left self-preservation: renews are above the threshold, expired leases will be evicted");
        } else {
            report!(warn, "entered self-preservation: renews are at or below the threshold, expired leases are kept");
        }
    }
}

/// Eureka's renewal-threshold task: re-derives the expected number of clients from the registry.
async fn update_renewal_threshold(store: Arc<Store>, period: Duration) {
    let mut timer = every(period);
    loop {
        timer.tick().await;
        let numbers = store.write(|registry, _| {
            registry.update_renewal_threshold();
            registry.self_preservation()
        });
        tracing::debug!(
            expected_clients = numbers.expected_clients,
            renews_threshold = numbers.renews_threshold,
            "renewal threshold updated"
        );
    }
}

/// Drops delta-queue entries older than the retention window.
async fn purge_delta_queue(store: Arc<Store>, period: Duration) {
    let mut timer = every(period);
    loop {
        timer.tick().await;
        // Dropping items changes the delta document, so this bumps the registry version too.
        store.write(|registry, now| registry.purge_recently_changed(now));
    }
}

#[cfg(test)]
mod tests;
