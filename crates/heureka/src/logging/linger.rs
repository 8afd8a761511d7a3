//! The log thread's output: lines linger a moment before they are written, so that a burst of
//! them leaves in one `write` and the log thread is not woken for every line.

use std::io::{self, Write};
use std::time::Duration;

/// Wraps the log thread's writer. The log thread (`tracing-appender`'s) writes every line it
/// finds queued, then flushes once the queue is empty, then waits for the next line. Under a
/// stream of registrations (Eureka logs each one at INFO) the queue empties after a line or
/// ten, so the thread wrote and slept about once per ten lines, and every request that found
/// it asleep paid a wake-up. A flush here first waits [`LINGER`]: the lines logged meanwhile
/// pile up in the queue, and the next round writes them all at once.
///
/// A line reaches stdout at most [`LINGER`] later than it would have; the last lines of a
/// shutdown still go out, since the log thread's final flush waits like any other.
pub(crate) struct Lingering<W> {
    inner: W,
    linger: Duration,
    /// Whether anything was written since the last flush: an idle flush does not wait.
    pending: bool,
}

/// How long a line may wait for others: imperceptible to a reader of the log, and at most a
/// hundred rounds of writing a second, however many lines are logged.
pub(crate) const LINGER: Duration = Duration::from_millis(10);

impl<W: Write> Lingering<W> {
    pub(crate) fn new(inner: W, linger: Duration) -> Lingering<W> {
        Lingering {
            inner,
            linger,
            pending: false,
        }
    }
}

impl<W: Write> Write for Lingering<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.pending = true;
        self.inner.write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.pending) {
            std::thread::sleep(self.linger);
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests;
