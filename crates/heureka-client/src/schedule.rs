//! The heartbeat's and the refresh's timer, as Java's `TimedSupervisorTask` runs them (§8.2):
//! each round gets its interval as a timeout, and only a round that times out backs the next
//! one off.

use std::future::Future;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::{sleep, timeout};

/// Runs `job` first after `interval`, then again `delay` after each round ends. A round that
/// has not finished within `interval` is abandoned and doubles the delay, up to
/// `interval × bound`; a round that finishes, failed or not, resets it to `interval`.
///
/// A request that fails fast (connection refused, 5xx on every URL) therefore does not slow the
/// heartbeat: the instance is back as soon as a server is. Only a server too slow to answer, the
/// one case where more requests make things worse, is given room.
pub(crate) fn supervise<F, Fut>(interval: Duration, bound: u32, job: F) -> JoinHandle<()>
where
    F: Fn() -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    tokio::spawn(async move {
        let mut backoff = Backoff::new(interval, bound);
        loop {
            sleep(backoff.delay).await;
            let finished = timeout(interval, job()).await.is_ok();
            if !finished {
                tracing::warn!(?interval, "a round outlived its interval; backing off");
            }
            backoff.after_round(finished);
        }
    })
}

/// The delay before the next round.
struct Backoff {
    interval: Duration,
    max: Duration,
    delay: Duration,
}

impl Backoff {
    fn new(interval: Duration, bound: u32) -> Backoff {
        Backoff {
            interval,
            max: interval.saturating_mul(bound.max(1)),
            delay: interval,
        }
    }

    fn after_round(&mut self, finished: bool) {
        self.delay = if finished {
            self.interval
        } else {
            self.delay.saturating_mul(2).min(self.max)
        };
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tokio::time::Instant;

    use super::*;

    const INTERVAL: Duration = Duration::from_secs(30);

    /// Runs `supervise` on paused time with a job whose `n`th round hangs when `hangs(n)`, and
    /// returns the delay that preceded each of the first `rounds` rounds after the first.
    async fn delays(rounds: usize, hangs: fn(usize) -> bool) -> Vec<Duration> {
        // Each round records when it started and when it ended (an abandoned one ends at its
        // timeout).
        let starts = Arc::new(Mutex::new(Vec::new()));
        let recorded = starts.clone();
        let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let task = supervise(INTERVAL, 10, move || {
            let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            recorded.lock().unwrap().push(Instant::now());
            async move {
                if hangs(n) {
                    std::future::pending::<()>().await;
                }
            }
        });
        while starts.lock().unwrap().len() <= rounds {
            sleep(INTERVAL).await;
        }
        task.abort();
        let starts = starts.lock().unwrap();
        (1..=rounds)
            .map(|n| {
                let took = if hangs(n - 1) {
                    INTERVAL
                } else {
                    Duration::ZERO
                };
                starts[n] - starts[n - 1] - took
            })
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn rounds_that_finish_keep_the_interval() {
        assert_eq!(delays(3, |_| false).await, [INTERVAL; 3]);
    }

    #[tokio::test(start_paused = true)]
    async fn each_round_that_times_out_doubles_the_delay_up_to_the_bound() {
        let secs = |s| Duration::from_secs(s);
        assert_eq!(
            delays(5, |_| true).await,
            [secs(60), secs(120), secs(240), secs(300), secs(300)]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_round_that_finishes_resets_the_delay() {
        let delays = delays(4, |n| n < 2).await;
        assert_eq!(
            delays[..2],
            [Duration::from_secs(60), Duration::from_secs(120)]
        );
        assert_eq!(delays[2..], [INTERVAL, INTERVAL]);
    }
}
