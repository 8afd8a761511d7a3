//! The one place the server reads the time. The registry never does: it is handed `now`.
//!
//! Production reads the wall clock, as Eureka's timestamps are wall-clock milliseconds. Tests
//! use [`Clock::tokio`], which counts Tokio time from a fixed epoch: with the runtime paused,
//! leases, eviction and replication timers all move together when a test advances time, and
//! nothing sleeps. Monotonic time ([`Instant`]) is Tokio's, which is the operating system's
//! in a build without Tokio's test utilities and follows the paused clock in tests.

use std::time::{SystemTime, UNIX_EPOCH};

use heureka_core::Millis;

/// A monotonic instant: Tokio's, so that paused tests move it.
pub(crate) type Instant = tokio::time::Instant;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Clock {
    /// Milliseconds since the Unix epoch.
    System,
    /// `epoch_ms` plus the Tokio time elapsed since `started`.
    Tokio { epoch_ms: Millis, started: Instant },
}

impl Clock {
    /// A clock that follows Tokio time (paused in tests), starting at `epoch_ms`.
    pub(crate) fn tokio(epoch_ms: Millis) -> Clock {
        Clock::Tokio {
            epoch_ms,
            started: instant(),
        }
    }

    pub(crate) fn now_millis(&self) -> Millis {
        match self {
            // Whole seconds and the millisecond within: `as_millis` goes through 128 bits.
            Clock::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|elapsed| {
                    elapsed.as_secs() as Millis * 1000 + Millis::from(elapsed.subsec_millis())
                })
                .unwrap_or(0),
            Clock::Tokio { epoch_ms, started } => {
                epoch_ms + instant().saturating_duration_since(*started).as_millis() as Millis
            }
        }
    }

    /// The current monotonic time; the same for either clock, as only its differences count.
    pub(crate) fn instant(&self) -> Instant {
        instant()
    }
}

/// A timer whose first tick is one period from now, as Eureka's timers start; a late tick
/// delays the next rather than bunching.
pub(crate) fn every(period: std::time::Duration) -> tokio::time::Interval {
    let mut timer = tokio::time::interval_at(instant() + period, period);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    timer
}

/// The current monotonic time, for the parts of the server that keep deadlines but hold no
/// store (the listener, request timing, timers).
pub(crate) fn instant() -> Instant {
    Instant::now()
}

/// The wall-clock time, for what is dated in calendar time: a certificate's validity.
pub(crate) fn wall_time() -> SystemTime {
    SystemTime::now()
}
