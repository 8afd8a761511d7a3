//! Time is read only through the clock: production code in the server, core and wire never
//! reads the wall clock or a monotonic clock itself, so that a test's paused clock governs
//! everything time-dependent.

use crate::workspace::{
    assert_rule, assert_still_pending, lines_matching, listed, rust_files_under, Site, Tests,
};

/// Where the rule looks: the crates whose behaviour depends on time.
const SCOPE: &[&str] = &[
    "crates/heureka-server/src",
    "crates/heureka-core/src",
    "crates/heureka-wire/src",
];

/// The only places allowed to read the time: the server's clock module (a directory, should it
/// grow one). Everything else is handed `now` or asks the clock.
const CLOCK: &[&str] = &[
    "crates/heureka-server/src/clock.rs",
    "crates/heureka-server/src/clock/",
];

/// Files that read the time themselves, tolerated while a change moves them behind the clock
/// (issue 17 emptied it). Remove a file once it no longer does;
/// `pending_time_offenders_still_offend` insists.
const PENDING_TIME_OFFENDERS: &[&str] = &[];

/// What reading the time looks like, std's or Tokio's.
const TIME_READS: &[&str] = &[
    "Instant::now(",
    "SystemTime::now(",
    ".elapsed()",
    "UNIX_EPOCH",
];

/// Lines outside the clock that read the time. Test code is exempt: a test is what sets the
/// clock (it pauses and advances Tokio time, or states a deadline relative to it), and a test
/// that waits in real time is counted by `sleeps.rs` instead.
fn time_reads() -> Vec<Site> {
    let files = rust_files_under(SCOPE);
    lines_matching(&files, Tests::Excluded, |file, line| {
        !listed(&file.path, CLOCK) && TIME_READS.iter().any(|read| line.text.contains(read))
    })
}

#[test]
fn time_is_read_only_through_the_clock() {
    assert_rule(
        time_reads(),
        PENDING_TIME_OFFENDERS,
        "time is read only through the clock (Instant::now, SystemTime::now, .elapsed(), \
         UNIX_EPOCH appear in server, core and wire code only in the server's clock module)",
        "a test pauses and advances the clock; code that reads the time itself escapes it, so \
         its behaviour can only be tested by waiting in real time. Take the time from the \
         clock and pass `now` down.",
    );
}

#[test]
fn pending_time_offenders_still_offend() {
    assert_still_pending(
        PENDING_TIME_OFFENDERS,
        &time_reads(),
        "PENDING_TIME_OFFENDERS",
    );
}
