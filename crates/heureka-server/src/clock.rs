//! The one place the server reads the time. The registry never does: it is handed `now`.
//!
//! Production reads the wall clock, as Eureka's timestamps are wall-clock milliseconds. Tests
//! use [`Clock::tokio`], which counts Tokio time from a fixed epoch: with the runtime paused,
//! leases, eviction and replication timers all move together when a test advances time, and
//! nothing sleeps.

use std::time::{SystemTime, UNIX_EPOCH};

use heureka_core::Millis;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Clock {
    /// Milliseconds since the Unix epoch.
    System,
    /// `epoch_ms` plus the Tokio time elapsed since `started`.
    #[cfg_attr(not(test), allow(dead_code))]
    Tokio {
        epoch_ms: Millis,
        started: tokio::time::Instant,
    },
}

impl Clock {
    /// A clock that follows Tokio time (paused in tests), starting at `epoch_ms`.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn tokio(epoch_ms: Millis) -> Clock {
        Clock::Tokio {
            epoch_ms,
            started: tokio::time::Instant::now(),
        }
    }

    pub(crate) fn now_millis(&self) -> Millis {
        match self {
            Clock::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|elapsed| elapsed.as_millis() as Millis)
                .unwrap_or(0),
            Clock::Tokio { epoch_ms, started } => {
                epoch_ms + started.elapsed().as_millis() as Millis
            }
        }
    }
}
