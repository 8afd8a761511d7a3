//! The fetcher tasks: one per region, owning its [`RegionState`]. Each fetches at once, then
//! every `remote-region-registry-fetch-interval`: a delta when it holds a view (a full fetch
//! when delta is off, the delta is refused or its hashcode disagrees), and publishes what
//! readers see. Each change of phase is one log line and an event.

use std::sync::Arc;

use heureka_core::Millis;
use heureka_wire::RegionEventKind;
use tokio::task::JoinSet;

use super::fetcher::RegionClient;
use super::region::{FetchKind, Phase, RegionState};
use super::shared::Regions;
use crate::clock;
use crate::events::Events;
use crate::store::Store;

/// What the fetcher tasks run on.
#[derive(Clone, Debug)]
pub(crate) struct RegionFetchers {
    pub(crate) regions: Arc<Regions>,
    pub(crate) client: RegionClient,
    pub(crate) store: Arc<Store>,
    pub(crate) events: Arc<Events>,
}

/// Starts one fetcher per configured region.
pub(crate) fn spawn_all(fetchers: &RegionFetchers, background: &mut JoinSet<()>) {
    for index in 0..fetchers.regions.settings().regions.len() {
        background.spawn(run(fetchers.clone(), index));
    }
}

async fn run(fetchers: RegionFetchers, index: usize) {
    let settings = fetchers.regions.settings();
    let mut state = RegionState::new(
        settings.stale_after.as_millis() as i64,
        settings.retention_ms,
    );
    let mut timer = clock::every(settings.fetch_interval);
    loop {
        let left = fetch_once(&fetchers, index, &mut state).await;
        let now = fetchers.store.now();
        let left = left.or_else(|| state.tick(now));
        if let Some(left) = left {
            announce(&fetchers, index, &state, left, now);
        }
        fetchers.regions.publish(index, state.published());
        timer.tick().await;
    }
}

/// One fetch, and a full one after a refused or mismatched delta. Returns the phase left,
/// when it changed.
async fn fetch_once(
    fetchers: &RegionFetchers,
    index: usize,
    state: &mut RegionState,
) -> Option<Phase> {
    let region = fetchers.regions.region(index);
    let client = &fetchers.client;
    if !state.needs_full() && !fetchers.regions.settings().disable_delta {
        let delta = client.delta(region).await;
        let now = fetchers.store.now();
        match delta {
            Ok(delta) => match state.delta_fetched(&delta, now) {
                Ok(left) => return left,
                Err(()) => tracing::info!(
                    region = %region.name,
                    "remote region: the delta's apps__hashcode disagrees with the view; fetching in full"
                ),
            },
            Err(error) => {
                tracing::debug!(region = %region.name, %error, "remote region: delta refused; fetching in full");
                state.delta_refused(now);
            }
        }
    }
    let full = client.full(region).await;
    let now = fetchers.store.now();
    match full {
        Ok(document) => state.full_fetched(&document, now),
        Err(error) => state.failed(FetchKind::Full, error, now),
    }
}

/// The phase changed from `left` to the state's: one line in the log and an event.
fn announce(
    fetchers: &RegionFetchers,
    index: usize,
    state: &RegionState,
    left: Phase,
    now: Millis,
) {
    let region = fetchers.regions.region(index);
    let published = state.published();
    let name = &region.name;
    let url = &region.url;
    let error = published.error.clone();
    let kind = match state.phase() {
        Phase::Ready => {
            tracing::info!(
                region = %name,
                %url,
                was = left.as_str(),
                applications = published.served.application_count(),
                instances = published.served.instance_count(),
                "remote region ready: its registry is served"
            );
            RegionEventKind::Ready
        }
        Phase::Stale => {
            tracing::warn!(
                region = %name,
                %url,
                error = error.as_deref().unwrap_or(""),
                "remote region stale: its fetch failed, its last registry is still served"
            );
            RegionEventKind::Stale
        }
        Phase::Dropped => {
            tracing::warn!(
                region = %name,
                %url,
                error = error.as_deref().unwrap_or(""),
                last_success = published.last_success.unwrap_or(0),
                "remote region dropped: no successful fetch within heureka.regions.stale-after, its registry is no longer served"
            );
            RegionEventKind::Dropped
        }
        Phase::Starting => return,
    };
    fetchers.events.region(kind, name, url, error, now);
}
