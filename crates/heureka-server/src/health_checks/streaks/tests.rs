//! Streaks, verdict flips and the guard.

use super::*;

const DEFAULTS: Thresholds = Thresholds {
    failures_before_down: 2,
    successes_before_up: 1,
    self_suspicion_percent: 50,
};

fn after(results: &[bool]) -> Streak {
    let mut streak = Streak::default();
    for (n, passed) in results.iter().enumerate() {
        streak.record(*passed, n as Millis * 1_000);
    }
    streak
}

#[test]
fn one_failed_probe_is_not_enough_by_default() {
    assert_eq!(
        after(&[false]).flip(Health::Passing, &DEFAULTS, false),
        None
    );
}

#[test]
fn two_failed_probes_in_a_row_make_a_passing_instance_fail() {
    assert_eq!(
        after(&[false, false]).flip(Health::Passing, &DEFAULTS, false),
        Some(Health::Failing)
    );
}

#[test]
fn a_pass_between_failures_starts_the_count_again() {
    assert_eq!(
        after(&[false, true, false]).flip(Health::Passing, &DEFAULTS, false),
        None
    );
}

#[test]
fn one_pass_brings_a_failing_instance_back_by_default() {
    assert_eq!(
        after(&[false, false, true]).flip(Health::Failing, &DEFAULTS, false),
        Some(Health::Passing)
    );
}

#[test]
fn no_instance_is_marked_failing_while_the_server_suspects_itself() {
    assert_eq!(
        after(&[false, false, false]).flip(Health::Passing, &DEFAULTS, true),
        None
    );
}

#[test]
fn recovery_is_written_even_while_the_server_suspects_itself() {
    assert_eq!(
        after(&[true]).flip(Health::Failing, &DEFAULTS, true),
        Some(Health::Passing)
    );
}

#[test]
fn a_verdict_already_held_is_not_written_again() {
    assert_eq!(
        after(&[false, false]).flip(Health::Failing, &DEFAULTS, false),
        None
    );
    assert_eq!(after(&[true]).flip(Health::Passing, &DEFAULTS, false), None);
}

#[test]
fn failing_since_is_the_first_failure_of_the_run() {
    assert_eq!(after(&[true, false, false]).failing_since, Some(1_000));
    assert_eq!(after(&[false, true]).failing_since, None);
}

#[test]
fn most_passing_instances_failing_at_once_is_suspicious() {
    assert!(suspects_itself(6, 10, 50));
}

#[test]
fn half_failing_is_not_more_than_half() {
    assert!(!suspects_itself(5, 10, 50));
}

#[test]
fn two_failures_are_never_suspicious_however_few_were_probed() {
    assert!(!suspects_itself(2, 2, 50));
    assert!(suspects_itself(3, 3, 50));
}
