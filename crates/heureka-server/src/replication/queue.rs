//! One peer's pending replication tasks: Eureka's batching acceptor, as plain data with time
//! passed in (every rule here is tested without a runtime).
//!
//! Tasks are grouped by instance, in the order instances first became pending. Within an
//! instance there is at most one task per action, kept in order, and a newer task of the same
//! action replaces the older one in place (Eureka's "overridden" tasks: only the latest
//! heartbeat is sent). Unlike Eureka, a cancel drops the instance's earlier tasks and a
//! register drops an earlier cancel or heartbeat, so a peer never sees an instance's writes
//! out of order (Eureka's per-action ids can send `register, cancel` for `cancel, register`).
//!
//! What a task sends is looked up when its batch is built, so a task records only what to do.
//! The queue is bounded: when it is full the oldest instance's tasks are dropped and counted,
//! and anti-entropy repairs what they would have carried. Tasks expire, as in Eureka: a
//! heartbeat queued behind a dead peer for longer than a lease renewal is worthless.

use std::collections::{BTreeMap, HashMap};

use heureka_core::Millis;
use heureka_wire::ReplicationAction;

/// The instance a task is about.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct InstanceKey {
    pub(crate) app: String,
    pub(crate) id: String,
}

/// One thing to tell the peer about one instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Task {
    pub(crate) key: InstanceKey,
    pub(crate) action: ReplicationAction,
    /// When the task was (last) queued; expiry counts from here.
    pub(crate) queued_at: Millis,
}

/// The knobs of a queue, from `eureka.server.*` and `heureka.replication.*`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QueueLimits {
    /// `max-elements-in-peer-replication-pool`: most tasks held.
    pub(crate) capacity: usize,
    /// `max-time-for-replication`: a task older than this is dropped unsent.
    pub(crate) max_age_ms: Millis,
    /// `heureka.replication.batch-delay-ms`: how long a heartbeat waits for company.
    pub(crate) batch_delay_ms: Millis,
    /// `heureka.replication.batch-size`.
    pub(crate) batch_size: usize,
}

#[derive(Debug)]
struct Slot {
    key: InstanceKey,
    /// When the instance became pending: the batching delay counts from here, not from its
    /// latest task, so a heartbeat replaced in place (a client renewing as often as the delay
    /// or more) cannot put its batch off again and again.
    since: Millis,
    /// At most one per action, in the order they were queued.
    tasks: Vec<(ReplicationAction, Millis)>,
}

/// The pending tasks of one peer.
#[derive(Debug)]
pub(crate) struct ReplicationQueue {
    limits: QueueLimits,
    /// Instances with pending tasks, by position. Positions only grow, except that a batch
    /// put back after a failure goes before everything else (`front`).
    slots: BTreeMap<i64, Slot>,
    position_of: HashMap<InstanceKey, i64>,
    next_back: i64,
    next_front: i64,
    len: usize,
    /// How many pending tasks are not heartbeats: those are sent without waiting.
    urgent: usize,
    /// Tasks dropped because the queue was full or they expired, since the queue was made.
    dropped: u64,
}

impl ReplicationQueue {
    pub(crate) fn new(limits: QueueLimits) -> ReplicationQueue {
        ReplicationQueue {
            limits,
            slots: BTreeMap::new(),
            position_of: HashMap::new(),
            next_back: 0,
            next_front: -1,
            len: 0,
            urgent: 0,
            dropped: 0,
        }
    }

    /// Number of pending tasks.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Tasks dropped unsent (queue full or expired) so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Queues `action` for the instance, coalescing with what is already pending for it.
    pub(crate) fn push(&mut self, key: InstanceKey, action: ReplicationAction, now: Millis) {
        let position = match self.position_of.get(&key) {
            Some(position) => *position,
            None => {
                let position = self.next_back;
                self.next_back += 1;
                self.insert_slot(position, key.clone(), now);
                position
            }
        };
        let slot = self.slots.get_mut(&position).expect("indexed slot exists");
        let (len_before, urgent_before) = (slot.tasks.len(), urgent(&slot.tasks));
        merge(&mut slot.tasks, action, now);
        self.len = self.len + slot.tasks.len() - len_before;
        self.urgent = self.urgent + urgent(&slot.tasks) - urgent_before;
        self.enforce_capacity();
    }

    /// When the next batch is due: at once if a task other than a heartbeat is pending or a
    /// full batch is waiting, else when the oldest heartbeat has waited the batching delay.
    /// `None` when nothing is pending.
    pub(crate) fn due_at(&self) -> Option<Millis> {
        if self.is_empty() {
            return None;
        }
        if self.urgent > 0 || self.len >= self.limits.batch_size {
            return Some(Millis::MIN);
        }
        // The front instance became pending first.
        let (_, front) = self.slots.first_key_value()?;
        Some(front.since.saturating_add(self.limits.batch_delay_ms))
    }

    /// Takes up to a batch of tasks, oldest instance first, dropping expired ones.
    pub(crate) fn take_batch(&mut self, now: Millis) -> Vec<Task> {
        let mut batch = Vec::new();
        while batch.len() < self.limits.batch_size {
            let Some((_, slot)) = self.slots.pop_first() else {
                break;
            };
            self.forget(&slot);
            for (action, queued_at) in slot.tasks {
                if now - queued_at > self.limits.max_age_ms {
                    self.dropped += 1;
                    continue;
                }
                batch.push(Task {
                    key: slot.key.clone(),
                    action,
                    queued_at,
                });
            }
        }
        batch
    }

    /// Puts a batch that could not be delivered back at the front, in its order, without the
    /// tasks that expired. An instance's tasks are together in a batch (`take_batch`) and go
    /// back together; what was queued for the instance since came after them, and is merged
    /// over them as it was over what the peer had (a cancel since drops them, a heartbeat
    /// since replaces theirs, a status change since is added after a register).
    pub(crate) fn put_back(&mut self, batch: Vec<Task>, now: Millis) {
        let mut instances: Vec<(InstanceKey, Vec<(ReplicationAction, Millis)>)> = Vec::new();
        for task in batch {
            if now - task.queued_at > self.limits.max_age_ms {
                self.dropped += 1;
                continue;
            }
            match instances.last_mut() {
                Some((key, tasks)) if *key == task.key => tasks.push((task.action, task.queued_at)),
                _ => instances.push((task.key, vec![(task.action, task.queued_at)])),
            }
        }
        // The last instance first, so that the batch's first ends up in front.
        for (key, mut tasks) in instances.into_iter().rev() {
            let mut since = tasks
                .iter()
                .map(|(_, at)| *at)
                .min()
                .expect("one task or more");
            if let Some(position) = self.position_of.get(&key).copied() {
                let pending = self.slots.remove(&position).expect("indexed slot exists");
                self.forget(&pending);
                since = since.min(pending.since);
                for (action, at) in pending.tasks {
                    merge(&mut tasks, action, at);
                }
            }
            let position = self.next_front;
            self.next_front -= 1;
            self.insert_slot(position, key, since);
            let slot = self.slots.get_mut(&position).expect("slot just inserted");
            slot.tasks = tasks;
            self.len += slot.tasks.len();
            self.urgent += urgent(&slot.tasks);
            self.enforce_capacity();
        }
    }

    fn insert_slot(&mut self, position: i64, key: InstanceKey, since: Millis) {
        self.position_of.insert(key.clone(), position);
        self.slots.insert(
            position,
            Slot {
                key,
                since,
                tasks: Vec::with_capacity(1),
            },
        );
    }

    /// Drops the oldest instances' tasks until the queue fits its capacity.
    fn enforce_capacity(&mut self) {
        while self.len > self.limits.capacity {
            let Some((_, slot)) = self.slots.pop_first() else {
                break;
            };
            self.forget(&slot);
            self.dropped += slot.tasks.len() as u64;
        }
    }

    /// Unaccounts a slot that left the queue.
    fn forget(&mut self, slot: &Slot) {
        self.position_of.remove(&slot.key);
        self.len -= slot.tasks.len();
        self.urgent -= urgent(&slot.tasks);
    }
}

fn urgent(tasks: &[(ReplicationAction, Millis)]) -> usize {
    tasks
        .iter()
        .filter(|(action, _)| *action != ReplicationAction::Heartbeat)
        .count()
}

/// Adds `action` to an instance's pending tasks, keeping what is still worth sending.
fn merge(tasks: &mut Vec<(ReplicationAction, Millis)>, action: ReplicationAction, now: Millis) {
    use ReplicationAction::{Cancel, Heartbeat, Register};
    match action {
        // Whatever was pending for an instance that is gone is moot.
        Cancel => tasks.clear(),
        // A register carries the whole instance and renews its lease on the peer.
        Register => tasks.retain(|(pending, _)| !matches!(pending, Cancel | Heartbeat)),
        _ => {}
    }
    match tasks.iter_mut().find(|(pending, _)| *pending == action) {
        Some(pending) => pending.1 = now,
        None => tasks.push((action, now)),
    }
}

#[cfg(test)]
mod tests;
