//! `Streak`: whether an operation's last attempt failed, so that a server that is down for an
//! hour is one warning per task (and one line when it works again), not one every round.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::ClientError;

/// Whether an operation's last attempt failed. A failure is a WARN when a streak begins and
/// DEBUG while it lasts, and the recovery is an INFO: a server that is down (or refuses the
/// client's certificate) for an hour is one warning per task, not one every round.
#[derive(Default)]
pub(crate) struct Streak(AtomicBool);

impl Streak {
    pub(crate) fn failed(&self, what: &str, error: &ClientError) {
        if self.0.swap(true, Ordering::Relaxed) {
            tracing::debug!(%error, "{what} failed again");
        } else {
            tracing::warn!(%error, "{what} failed");
        }
    }

    pub(crate) fn succeeded(&self, what: &str) {
        if self.0.swap(false, Ordering::Relaxed) {
            tracing::info!("{what} succeeded again");
        }
    }
}
