//! The one place the server reads the wall clock. The registry never does: it is handed `now`.

use std::time::{SystemTime, UNIX_EPOCH};

use heureka_core::Millis;

/// Milliseconds since the Unix epoch, as Eureka timestamps are.
pub(crate) fn now_millis() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as Millis)
        .unwrap_or(0)
}
