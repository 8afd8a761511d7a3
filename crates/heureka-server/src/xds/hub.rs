//! What the xDS streams share: the registry version they follow (a change sink of the write
//! path moves it, waking every stream), the endpoints read for them (`cache.rs`), the budget
//! of streams, the last NACK and the numbers `status()` shows. Built by `AppState::new` whether or not the port is enabled, so that the
//! write path's list of sinks does not depend on configuration.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use heureka_core::{Change, Registry};
use parking_lot::{Mutex, MutexGuard};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};

use super::cache::EndpointCache;
use crate::clock;
use crate::config::XdsConfig;
use crate::log_budget::LogBudget;
use crate::metrics::Metrics;
use crate::store::ChangeSink;

/// NACK lines a minute: a client rejecting every answer would otherwise log each.
const NACKS_LOGGED_PER_MINUTE: u32 = 10;

/// The xDS side's shared state.
#[derive(Debug)]
pub(crate) struct Xds {
    pub(crate) settings: XdsConfig,
    /// `eureka.client.region`: every locality's region.
    pub(crate) region: String,
    version: watch::Sender<u64>,
    /// Taken only under the store's lock, after it: a stream's whole read is one hold.
    endpoints: Mutex<EndpointCache>,
    streams: Arc<Semaphore>,
    bound: OnceLock<SocketAddr>,
    last_nack: Mutex<Option<String>>,
    nack_log: Mutex<LogBudget>,
    pub(crate) metrics: Arc<Metrics>,
}

/// What the dashboard shows of the xDS server (`Xds::status`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct XdsStatus {
    /// `heureka.xds.enabled`.
    pub enabled: bool,
    /// The address the xDS port is bound to, once bound.
    pub address: Option<SocketAddr>,
    /// ADS streams open now.
    pub streams: i64,
    /// Discovery responses sent since start.
    pub responses: u64,
    /// Responses clients rejected (NACKs) since start.
    pub nacks: u64,
    /// The last NACK: the resource type, the version rejected and the client's message.
    pub last_nack: Option<String>,
}

impl Xds {
    pub(crate) fn new(settings: &XdsConfig, region: &str, metrics: Arc<Metrics>) -> Xds {
        Xds {
            streams: Arc::new(Semaphore::new(settings.max_streams)),
            settings: settings.clone(),
            region: region.to_owned(),
            version: watch::Sender::new(0),
            endpoints: Mutex::new(EndpointCache::default()),
            bound: OnceLock::new(),
            last_nack: Mutex::new(None),
            nack_log: Mutex::new(LogBudget::new(NACKS_LOGGED_PER_MINUTE)),
            metrics,
        }
    }

    /// A cheap summary for the dashboard: a few atomics and one short lock.
    pub fn status(&self) -> XdsStatus {
        let metrics = self.metrics.xds();
        XdsStatus {
            enabled: self.settings.enabled,
            address: self.bound.get().copied(),
            streams: metrics.streams.get(),
            responses: metrics.responses.get(),
            nacks: metrics.nacks.get(),
            last_nack: self.last_nack.lock().clone(),
        }
    }

    /// Follows the registry version: `changed()` wakes on every change a reader can see.
    pub(crate) fn versions(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    /// The endpoints the streams share; lock it under the store's lock, never the other way.
    pub(crate) fn endpoint_cache(&self) -> MutexGuard<'_, EndpointCache> {
        self.endpoints.lock()
    }

    /// A place for one more stream, or `None` at `heureka.xds.max-streams`.
    pub(crate) fn stream_permit(&self) -> Option<OwnedSemaphorePermit> {
        self.streams.clone().try_acquire_owned().ok()
    }

    pub(crate) fn bound_to(&self, address: SocketAddr) {
        let _ = self.bound.set(address);
    }

    /// Counts, keeps and (within a budget) logs a NACK; `peer` is the client's address.
    pub(crate) fn nacked(
        &self,
        peer: Option<SocketAddr>,
        type_url: &str,
        version: &str,
        message: &str,
    ) {
        self.metrics.xds().nacks.inc();
        *self.last_nack.lock() = Some(format!("{type_url} version {version:?}: {message}"));
        let budget = self.nack_log.lock().take(clock::instant());
        if let Some(suppressed) = budget {
            tracing::warn!(
                peer = ?peer,
                type_url,
                version,
                message,
                suppressed,
                "xDS client rejected a response (NACK)"
            );
        }
    }
}

impl ChangeSink for Xds {
    fn publish(&self, _change: &Change, _registry: &Registry) {}

    /// Once per write: streams re-read what they need, so one wake-up per write is enough.
    /// Renewals do not move the version and wake no one.
    fn written(&self, registry: &Registry) {
        let version = registry.version();
        self.version.send_if_modified(|current| {
            let moved = *current != version;
            *current = version;
            moved
        });
    }
}
