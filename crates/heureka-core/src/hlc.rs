//! Hybrid logical clocks: the times that order replicated writes across a cluster.
//!
//! Wall clocks of different servers disagree, and a server's own can step back; Eureka's
//! `lastDirtyTimestamp` (the client's clock) and `lastUpdatedTimestamp` (each server's) are
//! therefore no order at all between two servers' writes. A hybrid logical clock is: each
//! time is the wall-clock millisecond, a counter for writes within (or behind) it, and the
//! writing server's tag, and a server moves its clock past every time it receives. So a
//! write made after another was seen always carries the greater time, whatever the wall
//! clocks say, and two distinct writes never carry equal times.

use crate::model::Millis;

/// One hybrid logical time. Ordered by millisecond, then counter, then the writer's tag;
/// [`Stamp::ZERO`] is older than every write ("no write known").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp {
    /// Wall-clock milliseconds since the epoch (or the greatest seen, if later).
    pub ms: Millis,
    /// Orders writes within one millisecond, and writes made while the wall clock lags.
    pub counter: u32,
    /// The writing server's tag: distinct servers never make equal stamps.
    pub node: u32,
}

impl Stamp {
    /// No write: what a copy with unknown history (a start-up sync, a Java peer's) carries.
    pub const ZERO: Stamp = Stamp {
        ms: 0,
        counter: 0,
        node: 0,
    };

    /// A copy from the start-up sync: written, but before any write stamped since, so that
    /// every real write wins over it while it is still a registration (later than no cancel).
    pub const SYNCED: Stamp = Stamp {
        ms: 0,
        counter: 1,
        node: 0,
    };

    /// Whether this is [`Stamp::ZERO`].
    pub fn is_zero(self) -> bool {
        self == Stamp::ZERO
    }
}

/// How far ahead of our wall clock a received time may be. A peer whose clock runs further
/// ahead (or a forged time) would otherwise drag every later write here into its future.
pub const MAX_DRIFT_MS: Millis = 5 * 60 * 1000;

/// A received time further ahead of our clock than [`MAX_DRIFT_MS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooFarAhead {
    pub stamp: Stamp,
    pub now: Millis,
}

impl std::fmt::Display for TooFarAhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a replicated time {} ms ahead of this server's clock (at most {MAX_DRIFT_MS} accepted)",
            self.stamp.ms - self.now
        )
    }
}

/// One server's hybrid logical clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hlc {
    node: u32,
    last: Stamp,
}

impl Hlc {
    /// A clock for the server tagged `node` (any number other servers are unlikely to share:
    /// a random one per process is fine, since a tie needs the same millisecond and counter
    /// too).
    pub fn new(node: u32) -> Hlc {
        Hlc {
            node,
            last: Stamp::ZERO,
        }
    }

    /// The time of a write made here at wall-clock `now`: later than every time this clock
    /// made or received before.
    pub fn tick(&mut self, now: Millis) -> Stamp {
        let stamp = if now > self.last.ms {
            Stamp {
                ms: now,
                counter: 0,
                node: self.node,
            }
        } else {
            // A counter at its end (a peer's forged time can put it there) moves on to the
            // next millisecond, so two writes here never share a stamp.
            let (ms, counter) = match self.last.counter.checked_add(1) {
                Some(counter) => (self.last.ms, counter),
                None => (self.last.ms + 1, 0),
            };
            Stamp {
                ms,
                counter,
                node: self.node,
            }
        };
        self.last = stamp;
        stamp
    }

    /// Moves the clock past a time received from a peer, so our next write is later than it.
    /// Refuses a time too far ahead of `now`, leaving the clock as it was.
    pub fn observe(&mut self, stamp: Stamp, now: Millis) -> Result<(), TooFarAhead> {
        if stamp.ms > now.saturating_add(MAX_DRIFT_MS) {
            return Err(TooFarAhead { stamp, now });
        }
        if (stamp.ms, stamp.counter) > (self.last.ms, self.last.counter) {
            self.last = Stamp {
                node: self.node,
                ..stamp
            };
        }
        Ok(())
    }

    /// The latest time this clock made or received.
    pub fn last(&self) -> Stamp {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_increase_even_when_the_wall_clock_steps_back() {
        let mut clock = Hlc::new(1);
        let first = clock.tick(1_000);
        let second = clock.tick(900);
        let third = clock.tick(900);
        assert!(
            first < second && second < third,
            "{first:?} {second:?} {third:?}"
        );
    }

    #[test]
    fn a_write_after_a_received_time_is_later_than_it() {
        let mut ours = Hlc::new(1);
        let theirs = Stamp {
            ms: 5_000,
            counter: 7,
            node: 2,
        };
        ours.observe(theirs, 1_000).unwrap();
        assert!(ours.tick(1_000) > theirs);
    }

    #[test]
    fn a_time_far_in_the_future_is_refused_and_changes_nothing() {
        let mut clock = Hlc::new(1);
        let forged = Stamp {
            ms: 1_000 + MAX_DRIFT_MS + 1,
            counter: 0,
            node: 9,
        };
        assert!(clock.observe(forged, 1_000).is_err());
        assert_eq!(clock.tick(1_000).ms, 1_000);
    }

    #[test]
    fn a_counter_at_its_end_moves_on_to_the_next_millisecond() {
        let mut clock = Hlc::new(1);
        let worn = Stamp {
            ms: 1_000,
            counter: u32::MAX,
            node: 2,
        };
        clock.observe(worn, 1_000).unwrap();
        let (first, second) = (clock.tick(1_000), clock.tick(1_000));
        assert!(worn < first && first < second, "{first:?} {second:?}");
    }

    #[test]
    fn two_servers_never_make_equal_times() {
        let (mut a, mut b) = (Hlc::new(1), Hlc::new(2));
        assert_ne!(a.tick(1_000), b.tick(1_000));
    }

    #[test]
    fn zero_is_older_than_any_write() {
        assert!(Stamp::ZERO < Hlc::new(0).tick(0));
    }
}
