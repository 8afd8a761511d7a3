//! The ring and the summary of refusals, with time passed in.

use heureka_wire::{AuditAction, AuditEntry};

use super::*;

fn act(at: Millis) -> AuditEntry {
    AuditEntry {
        app: Some("ORDERS".into()),
        id: Some(format!("o{at}")),
        ..AuditEntry::new(AuditAction::StatusOverrideSet, at, "admin", 200)
    }
}

fn wrong_password(address: &str, user: &str, at: Millis) -> AuditEntry {
    AuditEntry {
        address: Some(address.into()),
        user: Some(user.into()),
        ..AuditEntry::new(AuditAction::CredentialsRefused, at, "anonymous", 401)
    }
}

fn ids(ring: &AuditRing) -> Vec<String> {
    ring.newest_first()
        .map(|entry| entry.id.clone().unwrap_or_default())
        .collect()
}

#[test]
fn an_act_is_complete_when_recorded() {
    let mut ring = AuditRing::new(10);
    assert_eq!(ring.record(act(1)), [act(1)]);
}

#[test]
fn entries_are_listed_newest_first() {
    let mut ring = AuditRing::new(10);
    for at in 1..=3 {
        ring.record(act(at));
    }
    assert_eq!(ids(&ring), ["o3", "o2", "o1"]);
}

#[test]
fn the_ring_keeps_only_the_newest_entries() {
    let mut ring = AuditRing::new(2);
    for at in 1..=5 {
        ring.record(act(at));
    }
    assert_eq!(ids(&ring), ["o5", "o4"]);
}

#[test]
fn refusals_from_one_address_and_user_within_a_minute_are_one_entry_with_their_count() {
    let mut ring = AuditRing::new(10);
    for n in 0..20 {
        assert!(ring
            .refuse(wrong_password("10.0.0.9", "bob", 1_000), 1_000 + n)
            .is_empty());
    }
    let kept: Vec<&AuditEntry> = ring.newest_first().collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].count, 20);
    assert_eq!(kept[0].at, 1_000, "the first refusal's time");
}

#[test]
fn refusals_in_two_namespaces_are_two_summaries() {
    let mut ring = AuditRing::new(10);
    ring.refuse(wrong_password("10.0.0.9", "bob", 0), 0);
    let in_team_a = AuditEntry {
        namespace: "team-a".into(),
        ..wrong_password("10.0.0.9", "bob", 1)
    };
    ring.refuse(in_team_a, 1);
    let namespaces: Vec<&str> = ring.newest_first().map(|e| e.namespace.as_str()).collect();
    assert_eq!(namespaces, ["team-a", "default"]);
}

#[test]
fn a_summary_is_complete_once_its_minute_is_over() {
    let mut ring = AuditRing::new(10);
    ring.refuse(wrong_password("10.0.0.9", "bob", 0), 0);
    ring.refuse(wrong_password("10.0.0.9", "bob", 5), 5);
    assert!(ring.close_due(SUMMARY_WINDOW_MS - 1).is_empty());
    let complete = ring.close_due(SUMMARY_WINDOW_MS);
    assert_eq!(complete.len(), 1);
    assert_eq!(complete[0].count, 2);
    assert!(
        ring.close_due(10 * SUMMARY_WINDOW_MS).is_empty(),
        "once only"
    );
}

#[test]
fn a_refusal_after_the_minute_completes_the_summary_and_starts_another() {
    let mut ring = AuditRing::new(10);
    ring.refuse(wrong_password("10.0.0.9", "bob", 0), 0);
    let later = SUMMARY_WINDOW_MS + 1;
    let complete = ring.refuse(wrong_password("10.0.0.9", "bob", later), later);
    assert_eq!(complete.len(), 1);
    assert_eq!(complete[0].count, 1);
    assert_eq!(ring.newest_first().count(), 2);
}

#[test]
fn each_address_and_user_has_its_own_summary() {
    let mut ring = AuditRing::new(10);
    ring.refuse(wrong_password("10.0.0.9", "bob", 0), 0);
    ring.refuse(wrong_password("10.0.0.9", "eve", 0), 0);
    ring.refuse(wrong_password("10.0.0.8", "bob", 0), 0);
    ring.refuse(wrong_password("10.0.0.9", "bob", 1), 1);
    let counts: Vec<u64> = ring.newest_first().map(|entry| entry.count).collect();
    assert_eq!(counts, [1, 1, 2]);
}

#[test]
fn a_summary_pushed_out_of_the_ring_is_complete_with_its_count_so_far() {
    let mut ring = AuditRing::new(1);
    ring.refuse(wrong_password("10.0.0.9", "bob", 0), 0);
    ring.refuse(wrong_password("10.0.0.9", "bob", 1), 1);
    let complete = ring.record(act(2));
    assert_eq!(complete.len(), 2);
    assert_eq!(complete[0].count, 2, "the summary pushed out");
    assert_eq!(complete[1], act(2));
    assert!(ring.close_all().is_empty(), "nothing left counting");
}

#[test]
fn at_shutdown_every_summary_still_counting_is_complete() {
    let mut ring = AuditRing::new(10);
    ring.refuse(wrong_password("10.0.0.9", "bob", 0), 0);
    ring.refuse(wrong_password("10.0.0.8", "bob", 0), 0);
    assert_eq!(ring.close_all().len(), 2);
}
