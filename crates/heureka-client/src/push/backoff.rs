//! How long the push waits before it connects again: 1 s after a stream that worked, doubling
//! with every attempt that fails in a row, up to 30 s (docs/push.md: "reconnect after a second
//! or so, backing off to at most 30 s while the node refuses").

use std::time::Duration;

/// The first wait, and the one after a stream that delivered something.
pub(crate) const FIRST: Duration = Duration::from_secs(1);
/// The longest wait while the servers refuse or cannot be reached.
pub(crate) const LONGEST: Duration = Duration::from_secs(30);

/// The wait before the next attempt.
#[derive(Debug)]
pub(crate) struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff { next: FIRST }
    }
}

impl Backoff {
    /// The wait before this attempt; the one after it is twice as long, up to [`LONGEST`].
    pub(crate) fn next(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(LONGEST);
        wait
    }

    /// A stream worked: the next wait is [`FIRST`] again.
    pub(crate) fn reset(&mut self) {
        self.next = FIRST;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(waits: &[Duration]) -> Vec<u64> {
        waits.iter().map(Duration::as_secs).collect()
    }

    #[test]
    fn each_failure_in_a_row_doubles_the_wait_up_to_thirty_seconds() {
        let mut backoff = Backoff::default();
        let waits: Vec<Duration> = (0..7).map(|_| backoff.next()).collect();
        assert_eq!(secs(&waits), [1, 2, 4, 8, 16, 30, 30]);
    }

    #[test]
    fn a_stream_that_worked_brings_the_wait_back_to_one_second() {
        let mut backoff = Backoff::default();
        for _ in 0..4 {
            backoff.next();
        }
        backoff.reset();
        assert_eq!(backoff.next(), FIRST);
    }
}
