//! A region's phases and kept changes, moved on by fetches and time.

use heureka_core::{ActionType, Application, Applications, Instance, InstanceStatus};

use super::*;

const STALE_AFTER: i64 = 600_000;
const RETENTION: i64 = 180_000;

fn document(ids: &[&str], hashcode: &str) -> Applications {
    Applications {
        versions_delta: 1,
        apps_hashcode: hashcode.to_owned(),
        applications: vec![Application {
            name: "A".to_owned(),
            instances: ids
                .iter()
                .map(|id| Instance::new("A", id, "h", "10.0.0.1", 1))
                .collect(),
        }],
    }
}

fn actions(published: &Published) -> Vec<(ActionType, String)> {
    published
        .changes
        .iter()
        .map(|i| (i.action_type.unwrap(), i.id().to_owned()))
        .collect()
}

#[test]
fn a_region_is_starting_until_its_first_success_and_serves_nothing_before() {
    let mut region = RegionState::new(STALE_AFTER, RETENTION);
    assert_eq!(region.failed(FetchKind::Full, "refused".into(), 1), None);
    let published = region.published();
    assert_eq!(published.phase, Phase::Starting);
    assert!(!published.ever_ready);
    assert_eq!(published.served.instance_count(), 0);
    assert_eq!(published.error.as_deref(), Some("refused"));
    assert_eq!(
        region.full_fetched(&document(&["a1"], ""), 2),
        Some(Phase::Starting)
    );
    assert_eq!(region.phase(), Phase::Ready);
    assert_eq!(
        actions(&region.published()),
        [(ActionType::Added, "a1".to_owned())]
    );
}

#[test]
fn a_failure_after_a_success_is_stale_and_keeps_serving_the_last_view() {
    let mut region = RegionState::new(STALE_AFTER, RETENTION);
    region.full_fetched(&document(&["a1"], ""), 0);
    assert_eq!(
        region.failed(FetchKind::Delta, "timed out".into(), 30_000),
        Some(Phase::Ready)
    );
    let published = region.published();
    assert_eq!(published.phase, Phase::Stale);
    assert_eq!(published.served.instance_count(), 1);
    assert_eq!(published.fetches.counts().failures, 1);
}

#[test]
fn a_view_older_than_stale_after_is_dropped_and_its_instances_deleted_in_deltas() {
    let mut region = RegionState::new(STALE_AFTER, RETENTION);
    region.full_fetched(&document(&["a1", "a2"], ""), 0);
    region.failed(FetchKind::Delta, "refused".into(), 1_000);
    assert_eq!(region.tick(STALE_AFTER), None);
    assert_eq!(region.tick(STALE_AFTER + 1), Some(Phase::Stale));
    let published = region.published();
    assert_eq!(published.phase, Phase::Dropped);
    assert_eq!(published.served.instance_count(), 0);
    assert_eq!(
        actions(&published),
        [
            (ActionType::Deleted, "a1".to_owned()),
            (ActionType::Deleted, "a2".to_owned())
        ]
    );
    assert!(region.needs_full());
}

#[test]
fn a_success_after_a_drop_serves_the_region_again() {
    let mut region = RegionState::new(STALE_AFTER, RETENTION);
    region.full_fetched(&document(&["a1"], ""), 0);
    region.tick(STALE_AFTER + 1);
    let at = STALE_AFTER + 2;
    assert_eq!(
        region.full_fetched(&document(&["a1"], ""), at),
        Some(Phase::Dropped)
    );
    let published = region.published();
    assert_eq!(published.phase, Phase::Ready);
    assert_eq!(published.served.instance_count(), 1);
    assert_eq!(actions(&published), [(ActionType::Added, "a1".to_owned())]);
}

#[test]
fn a_delta_with_a_wrong_hashcode_changes_nothing_and_is_counted() {
    let mut region = RegionState::new(STALE_AFTER, RETENTION);
    region.full_fetched(&document(&["a1"], "UP_1_"), 0);
    let mut delta = document(&["a2"], "UP_7_");
    delta.applications[0].instances[0].action_type = Some(ActionType::Added);
    assert_eq!(region.delta_fetched(&delta, 1), Err(()));
    let published = region.published();
    assert_eq!(published.served.instance_count(), 1);
    assert_eq!(published.fetches.counts().mismatches, 1);
    assert_eq!(
        published.fetches.get(FetchKind::Delta, Outcome::Mismatch),
        1
    );
    delta.apps_hashcode = "UP_2_".to_owned();
    assert_eq!(region.delta_fetched(&delta, 2), Ok(None));
    assert_eq!(region.published().served.instance_count(), 2);
}

#[test]
fn changes_are_forgotten_after_the_delta_retention() {
    let mut region = RegionState::new(STALE_AFTER, RETENTION);
    region.full_fetched(&document(&["a1"], ""), 0);
    region.tick(RETENTION);
    assert_eq!(region.published().changes.len(), 1);
    region.tick(RETENTION + 1);
    assert!(region.published().changes.is_empty());
}

#[test]
fn only_the_latest_change_of_an_instance_is_kept() {
    let mut region = RegionState::new(STALE_AFTER, RETENTION);
    region.full_fetched(&document(&["a1"], ""), 0);
    let mut down = document(&["a1"], "");
    down.applications[0].instances[0].status = InstanceStatus::Down;
    region.full_fetched(&down, 1);
    assert_eq!(
        actions(&region.published()),
        [(ActionType::Modified, "a1".to_owned())]
    );
}

#[test]
fn a_fetch_that_brings_nothing_new_leaves_the_revision_and_a_change_moves_it() {
    let mut region = RegionState::new(STALE_AFTER, RETENTION);
    region.full_fetched(&document(&["a1"], ""), 0);
    let first = region.published().revision;
    region.full_fetched(&document(&["a1"], ""), 30_000);
    assert_eq!(region.published().revision, first);
    region.full_fetched(&document(&["a1", "a2"], ""), 60_000);
    assert!(region.published().revision > first);
}

#[test]
fn changes_past_the_retention_move_the_revision_as_they_go() {
    let mut region = RegionState::new(STALE_AFTER, RETENTION);
    region.full_fetched(&document(&["a1"], ""), 0);
    let before = region.published().revision;
    region.tick(RETENTION + 1);
    assert!(region.published().changes.is_empty());
    assert!(region.published().revision > before);
}

#[test]
fn a_full_fetch_of_many_instances_keeps_one_change_each() {
    let ids: Vec<String> = (0..2_000).map(|i| format!("a{i}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut region = RegionState::new(STALE_AFTER, RETENTION);
    region.full_fetched(&document(&ids[..1_000], ""), 0);
    region.full_fetched(&document(&ids, ""), 1);
    assert_eq!(region.published().changes.len(), 2_000);
}
