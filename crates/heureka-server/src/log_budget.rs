//! A budget of log lines a minute, for refusals a client can repeat at will (replication from
//! a stranger, a request beyond its roles): the first lines of a minute are logged, the rest
//! counted into the next line logged, so a flood cannot flood the log.

use std::time::Duration;

use crate::clock::Instant;

/// At most `per_minute` lines in a minute; the lines left out are counted and the next line
/// logged says how many.
#[derive(Debug)]
pub(crate) struct LogBudget {
    per_minute: u32,
    window_start: Option<Instant>,
    logged: u32,
    suppressed: u64,
}

impl LogBudget {
    pub(crate) fn new(per_minute: u32) -> LogBudget {
        LogBudget {
            per_minute,
            window_start: None,
            logged: 0,
            suppressed: 0,
        }
    }

    /// `Some(lines left out since the last one)` when this one may be logged.
    pub(crate) fn take(&mut self, now: Instant) -> Option<u64> {
        let window = Duration::from_secs(60);
        if self.window_start.is_none_or(|start| now - start >= window) {
            self.window_start = Some(now);
            self.logged = 0;
        }
        if self.logged < self.per_minute {
            self.logged += 1;
            Some(std::mem::take(&mut self.suppressed))
        } else {
            self.suppressed += 1;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock;

    #[test]
    fn a_flood_of_refusals_is_logged_ten_times_a_minute_and_counted() {
        let start = clock::instant();
        let mut budget = LogBudget::new(10);
        let logged: Vec<Option<u64>> = (0..25).map(|_| budget.take(start)).collect();
        assert_eq!(logged.iter().filter(|line| line.is_some()).count(), 10);
        assert!(logged[..10].iter().all(|line| *line == Some(0)));
        // A minute on, the next line says how many were left out.
        assert_eq!(budget.take(start + Duration::from_secs(60)), Some(15));
        assert_eq!(budget.take(start + Duration::from_secs(61)), Some(0));
    }
}
