//! The timers on paused Tokio time: the registry's clock follows Tokio's, so advancing time
//! ages leases and fires the tasks together, and nothing sleeps.

use std::time::Duration;

use heureka_core::{Instance, Origin};
use tokio::task::JoinSet;

use crate::clock::Clock;
use crate::config::Config;
use crate::state::{AppState, SharedState};

const EPOCH: i64 = 1_700_000_000_000;

fn state_without_self_preservation() -> (SharedState, Config) {
    let mut config = Config::default();
    config.eureka_server.enable_self_preservation = false;
    config.eureka_server.eviction_interval_timer_in_ms = 1_000;
    (
        AppState::new(&config, Clock::tokio(EPOCH), 8761).expect("no persistence here"),
        config,
    )
}

/// That server with its timers running (until the `JoinSet` is dropped).
fn running_without_self_preservation() -> (SharedState, JoinSet<()>) {
    let (state, config) = state_without_self_preservation();
    let tasks = super::spawn_all(&state.store, &state.events.feed, &config);
    (state, tasks)
}

/// Whether instance o1, registered on that running server and then not renewed for
/// `silence`, is still registered.
async fn registered_after_silence(silence: Duration) -> bool {
    let (state, _tasks) = running_without_self_preservation();
    register(&state, "o1");
    tokio::time::sleep(silence).await;
    is_registered(&state, "o1")
}

fn register(state: &SharedState, id: &str) {
    let instance = Instance::new("orders", id, "host", "10.0.0.1", state.store.now());
    state
        .store
        .write(|registry, now| registry.register(instance, Origin::Client, now));
}

fn is_registered(state: &SharedState, id: &str) -> bool {
    let now = state.store.now();
    state.store.read().instance("ORDERS", id, now).is_some()
}

#[tokio::test(start_paused = true)]
async fn eviction_task_keeps_a_lease_until_its_duration_has_passed() {
    assert!(registered_after_silence(Duration::from_secs(89)).await);
}

#[tokio::test(start_paused = true)]
async fn eviction_task_evicts_a_lease_that_stopped_renewing() {
    assert!(!registered_after_silence(Duration::from_secs(95)).await);
}

#[tokio::test(start_paused = true)]
async fn eviction_task_spares_a_lease_that_keeps_renewing() {
    let (state, _tasks) = running_without_self_preservation();
    register(&state, "o1");
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_secs(30)).await;
        state
            .store
            .write(|registry, now| registry.renew("ORDERS", "o1", None, None, Origin::Client, now));
    }
    assert!(is_registered(&state, "o1"));
}
