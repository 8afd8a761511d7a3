//! Batching, coalescing, expiry and overflow of one peer's queue, with time passed in.

use heureka_wire::ReplicationAction::{
    self, Cancel, DeleteStatusOverride, Heartbeat, Register, StatusUpdate,
};

use super::{InstanceKey, QueueLimits, ReplicationQueue};

const LIMITS: QueueLimits = QueueLimits {
    capacity: 100,
    max_age_ms: 30_000,
    batch_delay_ms: 500,
    batch_size: 250,
};

fn key(id: &str) -> InstanceKey {
    InstanceKey {
        app: "ORDERS".to_owned(),
        id: id.to_owned(),
    }
}

fn queue() -> ReplicationQueue {
    ReplicationQueue::new(LIMITS)
}

/// A queue with the default limits after each `(id, action, at)` was pushed, in order.
fn pushed(pushes: &[(&str, ReplicationAction, i64)]) -> ReplicationQueue {
    pushed_within(LIMITS, pushes)
}

/// A queue with `limits` after each `(id, action, at)` was pushed, in order.
fn pushed_within(
    limits: QueueLimits,
    pushes: &[(&str, ReplicationAction, i64)],
) -> ReplicationQueue {
    let mut queue = ReplicationQueue::new(limits);
    for (id, action, at) in pushes {
        queue.push(key(id), *action, *at);
    }
    queue
}

/// The default limits with another batch size.
fn batch_size(batch_size: usize) -> QueueLimits {
    QueueLimits {
        batch_size,
        ..LIMITS
    }
}

/// The default limits with another capacity.
fn capacity(capacity: usize) -> QueueLimits {
    QueueLimits { capacity, ..LIMITS }
}

fn actions(queue: &mut ReplicationQueue, now: i64) -> Vec<(String, ReplicationAction)> {
    queue
        .take_batch(now)
        .into_iter()
        .map(|task| (task.key.id, task.action))
        .collect()
}

fn pairs(items: &[(&str, ReplicationAction)]) -> Vec<(String, ReplicationAction)> {
    items
        .iter()
        .map(|(id, action)| ((*id).to_owned(), *action))
        .collect()
}

#[test]
fn an_empty_queue_is_never_due() {
    assert_eq!(queue().due_at(), None);
}

#[test]
fn heartbeats_wait_the_batching_delay() {
    let queue = pushed(&[("o1", Heartbeat, 1_000), ("o2", Heartbeat, 1_200)]);
    assert_eq!(queue.due_at(), Some(1_500));
}

#[test]
fn a_heartbeat_replaced_in_place_does_not_put_its_batch_off() {
    // A client renewing every 400 ms, faster than the 500 ms delay: still sent 500 ms after
    // the instance became pending, not never.
    let queue = pushed(&[
        ("o1", Heartbeat, 1_000),
        ("o1", Heartbeat, 1_400),
        ("o1", Heartbeat, 1_800),
    ]);
    assert_eq!(queue.due_at(), Some(1_500));
}

#[test]
fn any_other_change_is_due_at_once() {
    let queue = pushed(&[("o1", Heartbeat, 1_000), ("o2", Register, 1_100)]);
    assert_eq!(queue.due_at(), Some(i64::MIN));
}

#[test]
fn a_full_batch_of_heartbeats_is_due_at_once() {
    let queue = pushed_within(
        batch_size(2),
        &[("o1", Heartbeat, 1_000), ("o2", Heartbeat, 1_000)],
    );
    assert_eq!(queue.due_at(), Some(i64::MIN));
}

#[test]
fn repeated_heartbeats_of_an_instance_are_sent_once() {
    let mut queue = queue();
    for at in 0..10 {
        queue.push(key("o1"), Heartbeat, at);
    }
    assert_eq!(queue.len(), 1);
    assert_eq!(actions(&mut queue, 10), pairs(&[("o1", Heartbeat)]));
}

#[test]
fn instances_are_sent_in_the_order_they_became_pending() {
    let mut queue = pushed(&[
        ("o1", Heartbeat, 0),
        ("o2", Register, 1),
        ("o1", StatusUpdate, 2),
    ]);
    assert_eq!(
        actions(&mut queue, 3),
        pairs(&[("o1", Heartbeat), ("o1", StatusUpdate), ("o2", Register)])
    );
}

#[test]
fn a_cancel_drops_what_was_pending_for_the_instance() {
    let mut queue = pushed(&[
        ("o1", Register, 0),
        ("o1", StatusUpdate, 1),
        ("o1", Cancel, 2),
    ]);
    assert_eq!(actions(&mut queue, 3), pairs(&[("o1", Cancel)]));
}

#[test]
fn a_register_after_a_cancel_replaces_it() {
    // Eureka's per-action task ids would send register (merged) before cancel: a peer would
    // end up without an instance the sender holds.
    let mut queue = pushed(&[("o1", Register, 0), ("o1", Cancel, 1), ("o1", Register, 2)]);
    assert_eq!(actions(&mut queue, 3), pairs(&[("o1", Register)]));
}

#[test]
fn status_changes_survive_a_later_register() {
    let mut queue = pushed(&[("o1", DeleteStatusOverride, 0), ("o1", Register, 1)]);
    assert_eq!(
        actions(&mut queue, 2),
        pairs(&[("o1", DeleteStatusOverride), ("o1", Register)])
    );
}

#[test]
fn a_batch_holds_at_most_batch_size_tasks() {
    let mut queue = ReplicationQueue::new(batch_size(2));
    for id in ["o1", "o2", "o3"] {
        queue.push(key(id), Register, 0);
    }
    assert_eq!(queue.take_batch(0).len(), 2);
    assert_eq!(queue.len(), 1);
}

#[test]
fn expired_tasks_are_dropped_and_counted() {
    let mut queue = pushed(&[("o1", Heartbeat, 0), ("o2", Heartbeat, 20_000)]);
    assert_eq!(actions(&mut queue, 30_001), pairs(&[("o2", Heartbeat)]));
    assert_eq!(queue.dropped(), 1);
}

#[test]
fn a_full_queue_drops_its_oldest_instances_and_counts_them() {
    let mut queue = pushed_within(
        capacity(2),
        &[
            ("o1", Heartbeat, 0),
            ("o2", Heartbeat, 0),
            ("o3", Heartbeat, 0),
        ],
    );
    assert_eq!(queue.len(), 2);
    assert_eq!(queue.dropped(), 1);
    assert_eq!(
        actions(&mut queue, 0),
        pairs(&[("o2", Heartbeat), ("o3", Heartbeat)])
    );
}

#[test]
fn a_batch_put_back_goes_first_in_its_order() {
    let mut queue = pushed(&[("o1", Register, 0), ("o2", Register, 0)]);
    let batch = queue.take_batch(0);
    queue.push(key("o3"), Register, 1);
    queue.put_back(batch, 2);
    assert_eq!(
        actions(&mut queue, 3),
        pairs(&[("o1", Register), ("o2", Register), ("o3", Register)])
    );
}

#[test]
fn a_put_back_task_yields_to_a_newer_one_for_the_instance() {
    let mut queue = queue();
    queue.push(key("o1"), Register, 0);
    let batch = queue.take_batch(0);
    queue.push(key("o1"), Cancel, 1);
    queue.put_back(batch, 2);
    assert_eq!(actions(&mut queue, 3), pairs(&[("o1", Cancel)]));
}

#[test]
fn every_task_of_an_instance_goes_back() {
    let mut queue = pushed(&[("o1", Register, 0), ("o1", StatusUpdate, 1)]);
    let batch = queue.take_batch(1);
    queue.put_back(batch, 2);
    assert_eq!(
        actions(&mut queue, 3),
        pairs(&[("o1", Register), ("o1", StatusUpdate)])
    );
}

#[test]
fn a_put_back_register_keeps_a_status_change_queued_since_after_it() {
    let mut queue = queue();
    queue.push(key("o1"), Register, 0);
    let batch = queue.take_batch(0);
    queue.push(key("o1"), StatusUpdate, 1);
    queue.put_back(batch, 2);
    assert_eq!(
        actions(&mut queue, 3),
        pairs(&[("o1", Register), ("o1", StatusUpdate)])
    );
}

#[test]
fn a_put_back_heartbeat_is_replaced_by_one_queued_since() {
    let mut queue = queue();
    queue.push(key("o1"), Heartbeat, 1_000);
    let batch = queue.take_batch(1_600);
    queue.push(key("o1"), Heartbeat, 1_700);
    queue.put_back(batch, 1_800);
    assert_eq!(queue.len(), 1);
    // Due when the first of them had waited the delay: it is late already.
    assert_eq!(queue.due_at(), Some(1_500));
}

#[test]
fn a_put_back_task_that_expired_is_dropped() {
    let mut queue = queue();
    queue.push(key("o1"), Register, 0);
    let batch = queue.take_batch(0);
    queue.put_back(batch, 40_000);
    assert!(queue.is_empty());
    assert_eq!(queue.dropped(), 1);
}
