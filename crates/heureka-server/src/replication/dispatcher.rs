//! One task per peer: sends the peer's queue in batches and acts on the answers.
//!
//! Eureka's `TaskDispatcher` with one worker. The loop waits until the queue says a batch is
//! due, builds the batch's items from the registry as it is now (so a batch never carries
//! stale copies), sends it, and then:
//! * per element: a heartbeat's 404 queues a register of our copy (the peer lost or never had
//!   the instance); a heartbeat's 409 adopts the peer's newer copy locally;
//! * on congestion (503, no answer in time) or an unreachable peer, puts the batch back at the
//!   front and backs off, doubling up to 30 s (congestion) or 5 s (unreachable), and never
//!   longer than half the anti-entropy interval (`backoff` says why);
//! * on any other failure drops the batch (repeating it cannot help) and lets anti-entropy
//!   repair what it carried.
//!
//! Nothing here runs under the registry lock except building the items and applying answers.

use std::sync::Arc;
use std::time::Duration;

use heureka_core::{ElementOutcome, Instance, InstanceStatus, Millis, Registry};
use heureka_wire::{
    ReplicationAction, ReplicationItem, ReplicationResult, StampedItem, StampedResult,
};

use super::peer::{Peer, PeerProtocol};
use super::queue::Task;
use super::replicator::Replicator;
use super::transport::PeerError;

/// The longest pause after congestion, as in Eureka (`backoff` may shorten it).
const MAX_CONGESTION_BACKOFF: Duration = Duration::from_secs(30);
/// The longest pause after an unreachable peer. Eureka retries every 100 ms; doubling up to
/// a few seconds costs a dead peer little and brings a restarted one back within seconds.
const MAX_UNREACHABLE_BACKOFF: Duration = Duration::from_secs(5);
/// First pause after a congested answer (Eureka's 1000 ms).
const CONGESTION_BACKOFF: Duration = Duration::from_millis(1_000);
/// First pause after an unreachable peer (Eureka's 100 ms).
const UNREACHABLE_BACKOFF: Duration = Duration::from_millis(100);

/// The dispatcher of one peer; returns when the peer leaves the configuration.
pub(crate) async fn run(state: Replicator, peer: Arc<Peer>) {
    let mut failures_in_a_row: u32 = 0;
    loop {
        if !state.replication.is_peer(&peer) {
            return;
        }
        wait_until_due(&state, &peer).await;
        let now = state.store.now();
        let batch = peer.queue.lock().take_batch(now);
        if batch.is_empty() {
            continue;
        }
        if state.replication.skips(&peer) {
            // The peer holds no namespace but default: what was queued before that was
            // known is dropped, and is no failure.
            continue;
        }
        let sent = if state.replication.is_default_namespace() {
            send(&state, &peer, batch).await
        } else {
            send_in_namespace(&state, &peer, batch).await
        };
        match sent {
            Ok(()) => failures_in_a_row = 0,
            Err((error, tasks)) => {
                if matches!(error, PeerError::Unreachable(_))
                    && state.replication.is_default_namespace()
                {
                    // A peer that comes back may be another server (an upgrade, a
                    // migration): ask it again which protocol it speaks, and whether it
                    // holds namespaces.
                    peer.set_protocol(PeerProtocol::Unknown);
                    state.replication.may_hold_namespaces(&peer);
                }
                failures_in_a_row = failures_in_a_row.saturating_add(1);
                let pause = match &error {
                    // A starting peer's mark is on reads only, never on a batch's answer;
                    // were it there, the peer would serve soon: keep the batch.
                    PeerError::Congestion(_) | PeerError::TimedOut(_) | PeerError::Starting(_) => {
                        Some((CONGESTION_BACKOFF, MAX_CONGESTION_BACKOFF))
                    }
                    PeerError::Unreachable(_) => {
                        Some((UNREACHABLE_BACKOFF, MAX_UNREACHABLE_BACKOFF))
                    }
                    PeerError::Refused(_) | PeerError::NotHeureka(_) => None,
                };
                failed(&state, &peer, &error, state.store.now());
                let anti_entropy = state.replication.settings().anti_entropy_interval;
                match pause {
                    Some((first, max)) => {
                        peer.queue.lock().put_back(tasks, state.store.now());
                        let pause = backoff(first, max, anti_entropy, failures_in_a_row);
                        tokio::time::sleep(pause).await;
                    }
                    None => {
                        tracing::warn!(peer = %peer.url.as_str(), dropped = tasks.len(), %error, "replication batch dropped");
                        let pause = backoff(
                            CONGESTION_BACKOFF,
                            MAX_CONGESTION_BACKOFF,
                            anti_entropy,
                            failures_in_a_row,
                        );
                        tokio::time::sleep(pause).await;
                    }
                }
            }
        }
    }
}

/// Sends a batch of the default namespace: stamped copies to a Heureka peer, Eureka's own
/// batches to a Java one (which holds no other namespace either).
async fn send(state: &Replicator, peer: &Peer, batch: Vec<Task>) -> Sent {
    if peer.protocol() == PeerProtocol::Eureka {
        return send_eureka(state, peer, batch).await;
    }
    match send_stamped(state, peer, batch).await {
        Err((PeerError::NotHeureka(why), tasks)) => {
            tracing::info!(peer = %peer.url.as_str(), %why, "peer is not a Heureka server: sending it Eureka's batches");
            peer.set_protocol(PeerProtocol::Eureka);
            state
                .replication
                .lacks_namespaces(peer, "it speaks Eureka's protocol");
            send_eureka(state, peer, tasks).await
        }
        sent => sent,
    }
}

/// Sends a batch of a namespace other than default, stamped: only Heureka peers hold one. A
/// 404 under the namespace's path is a peer that holds none (a Java server, a Heureka
/// without namespaces): the batch is dropped, and the namespace sends it nothing more (the
/// run loop drops what is still queued).
async fn send_in_namespace(state: &Replicator, peer: &Peer, batch: Vec<Task>) -> Sent {
    match send_stamped(state, peer, batch).await {
        Err((PeerError::NotHeureka(why), _)) => {
            state.replication.lacks_namespaces(peer, &why);
            Ok(())
        }
        sent => sent,
    }
}

/// `first`, doubled for every further failure in a row, at most `max`, and at most half of
/// `anti_entropy_interval` when anti-entropy runs (but never less than `first`).
///
/// Why the second limit: the pause is how long replication stays silent after a fault has
/// ended. A peer that missed our heartbeats meanwhile evicts their instances, and its
/// anti-entropy pulls them back every interval; a sender still backing off for 30 s keeps
/// that churn going long after the network healed, and past leases shorter than the pause.
/// Half the interval leaves the other half for the attempt in flight when the fault ends (a
/// connect plus a read time-out), so replication resumes within one anti-entropy interval
/// whatever back-off was reached. The cost is one probe per peer every few seconds, no more
/// than anti-entropy itself sends. `first` stays the floor: a very short interval must not
/// make a congested peer be asked more often than Eureka's first pause.
pub(crate) fn backoff(
    first: Duration,
    max: Duration,
    anti_entropy_interval: Option<Duration>,
    failures_in_a_row: u32,
) -> Duration {
    let limit = anti_entropy_interval
        .map_or(max, |interval| max.min(interval / 2))
        .max(first);
    let doublings = failures_in_a_row.saturating_sub(1).min(16);
    first.saturating_mul(1 << doublings).min(limit)
}

async fn wait_until_due(state: &Replicator, peer: &Peer) {
    loop {
        let due = peer.queue.lock().due_at();
        let Some(due) = due else {
            peer.wake.notified().await;
            continue;
        };
        let wait = due.saturating_sub(state.store.now());
        if wait <= 0 {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(wait as u64)) => {}
            () = peer.wake.notified() => {}
        }
    }
}

/// What a send left to do: on failure, the error and the tasks to put back or drop.
type Sent = Result<(), (PeerError, Vec<Task>)>;

/// Sends a batch as Eureka's `peerreplication/batch`, to a Java peer.
async fn send_eureka(state: &Replicator, peer: &Peer, batch: Vec<Task>) -> Sent {
    let Some((tasks, items)) = build_items(state, batch) else {
        return Ok(());
    };
    let sending = state.replication.client().send_batch(&peer.url, &items);
    let answer = sending.await;
    settle(state, peer, tasks, &items, answer, on_result)
}

/// Sends a batch of stamped copies to a Heureka peer (`handlers/stamped.rs` answers it).
async fn send_stamped(state: &Replicator, peer: &Peer, batch: Vec<Task>) -> Sent {
    let Some((tasks, items)) = build_stamped(state, batch) else {
        return Ok(());
    };
    let sending = state
        .replication
        .client()
        .send_stamped_batch(&peer.url, &items);
    let answer = sending.await;
    if answer.is_ok() {
        peer.set_protocol(PeerProtocol::Heureka);
    }
    settle(state, peer, tasks, &items, answer, on_stamped_result)
}

/// A batch's answer, either kind: a delivered batch is booked and each element's result acted
/// on; a failed one hands the error and its tasks back.
fn settle<Item, Outcome>(
    state: &Replicator,
    peer: &Peer,
    tasks: Vec<Task>,
    items: &[Item],
    answer: Result<Vec<Outcome>, PeerError>,
    on_result: impl Fn(&Replicator, &Peer, &Item, Outcome),
) -> Sent {
    match answer {
        Ok(results) => {
            if delivered(state, peer, &tasks, results.len()) {
                for (item, result) in items.iter().zip(results) {
                    on_result(state, peer, item, result);
                }
            }
            Ok(())
        }
        Err(error) => Err((error, tasks)),
    }
}

/// The stamped items of a batch: our copy of each instance as it is now (a heartbeat's
/// without its document). A heartbeat for an instance no longer leased here is dropped.
fn build_stamped(state: &Replicator, batch: Vec<Task>) -> Option<(Vec<Task>, Vec<StampedItem>)> {
    build(state, batch, |registry, task, now| {
        let (app, id) = (&task.key.app, &task.key.id);
        let copy = match task.action {
            ReplicationAction::Heartbeat => registry.stamped_heartbeat(app, id),
            _ => registry.stamped_copy(app, id, now),
        }?;
        Some(StampedItem {
            action: task.action,
            copy,
        })
    })
}

/// Acts on a Heureka peer's answer to one stamped item (`handlers/stamped.rs`).
fn on_stamped_result(state: &Replicator, peer: &Peer, item: &StampedItem, result: StampedResult) {
    let (app, id) = (&item.copy.app, &item.copy.id);
    let status = result.status_code;
    match (ElementOutcome::from_status(status), result.copy) {
        (Some(ElementOutcome::Done), _) => {}
        (Some(ElementOutcome::SendYours), _) => {
            // The peer lacks the instance or writes we hold: send it our whole copy.
            let now = state.store.now();
            let leased = state.store.read().instance(app, id, now).is_some();
            if leased {
                peer.enqueue(app, id, ReplicationAction::Register, state.store.now());
            }
        }
        (Some(ElementOutcome::TakeOurs), Some(theirs)) => {
            // The peer holds writes we do not: merge them; if we still hold some it lacks,
            // send it our copy.
            let theirs_stamps = theirs.parts.stamps;
            let ours = state.store.write(|registry, now| {
                if let Err(refused) = registry.merge_copy(theirs, now) {
                    tracing::warn!(peer = %peer.url.as_str(), %app, %id, %refused, "peer's copy refused");
                }
                registry.stamps_of(app, id)
            });
            if ours.is_some_and(|ours| ours.has_newer_part_than(&theirs_stamps)) {
                peer.enqueue(app, id, ReplicationAction::Register, state.store.now());
            }
        }
        _ => {
            let action = item.action.as_str();
            tracing::warn!(peer = %peer.url.as_str(), %app, %id, action, status, "peer refused a stamped replicated write");
        }
    }
}

/// The items of a batch, from the registry as it is now. A task whose instance is gone (a
/// register or heartbeat behind a cancel or an eviction) is dropped; the tasks returned are
/// the ones that became items, in the same order.
fn build_items(state: &Replicator, batch: Vec<Task>) -> Option<(Vec<Task>, Vec<ReplicationItem>)> {
    build(state, batch, |registry, task, now| {
        let (app, id) = (&task.key.app, &task.key.id);
        if task.action == ReplicationAction::Cancel {
            Some(ReplicationItem::cancel(app, id))
        } else {
            registry
                .instance(app, id, now)
                .map(|instance| item_for(task.action, instance))
        }
    })
}

/// A batch's items, either kind, under one read of the registry: `item` makes each task's,
/// or `None` to drop the task. The tasks returned are the ones that became items, in order;
/// nothing is returned for a batch whose every task was dropped.
fn build<Item>(
    state: &Replicator,
    batch: Vec<Task>,
    item: impl Fn(&Registry, &Task, Millis) -> Option<Item>,
) -> Option<(Vec<Task>, Vec<Item>)> {
    let now = state.store.now();
    let registry = state.store.read();
    let mut tasks = Vec::with_capacity(batch.len());
    let mut items = Vec::with_capacity(batch.len());
    for task in batch {
        if let Some(item) = item(&registry, &task, now) {
            tasks.push(task);
            items.push(item);
        }
    }
    (!items.is_empty()).then_some((tasks, items))
}

fn item_for(action: ReplicationAction, instance: Instance) -> ReplicationItem {
    match action {
        ReplicationAction::Register => ReplicationItem::register(instance),
        ReplicationAction::Heartbeat => {
            let overridden = Some(instance.overridden_status)
                .filter(|status| *status != InstanceStatus::Unknown);
            ReplicationItem::heartbeat(&instance, overridden)
        }
        ReplicationAction::StatusUpdate => ReplicationItem::status_update(&instance),
        ReplicationAction::DeleteStatusOverride => {
            ReplicationItem::delete_status_override(&instance)
        }
        ReplicationAction::Cancel => ReplicationItem::cancel(&instance.app, instance.id()),
    }
}

/// A batch the peer answered: books it; returns whether the answer has one result per item
/// (spec §7.6), the caller then acting on each.
fn delivered(state: &Replicator, peer: &Peer, tasks: &[Task], answered: usize) -> bool {
    let now = state.store.now();
    let oldest = tasks.iter().map(|task| task.queued_at).min().unwrap_or(now);
    let came_back = {
        let mut peer_state = peer.state.lock();
        let came_back = !peer_state.up;
        peer_state.up = true;
        peer_state.batches_sent += 1;
        peer_state.tasks_sent += tasks.len() as u64;
        peer_state.consecutive_failures = 0;
        peer_state.last_success_at = Some(now);
        peer_state.replication_lag_ms = Some(now - oldest);
        came_back
    };
    if came_back {
        tracing::info!(peer = %peer.url.as_str(), "peer is replicating again");
        state.events.peer(peer.url.as_str(), true, None, now);
    }
    if answered != tasks.len() {
        // Eureka ignores such an answer altogether; so do we, and anti-entropy repairs.
        tracing::error!(peer = %peer.url.as_str(), sent = tasks.len(), answered, "replication answer has the wrong number of elements");
        return false;
    }
    true
}

fn on_result(state: &Replicator, peer: &Peer, item: &ReplicationItem, result: ReplicationResult) {
    let (app, id) = (&item.app_name, &item.id);
    let status = result.status_code;
    let outcome = ElementOutcome::from_status(status);
    match (item.action, outcome, result.entity) {
        (_, Some(ElementOutcome::Done), _) => {}
        (ReplicationAction::Heartbeat, Some(ElementOutcome::SendYours), _) => {
            // The peer lost the instance, or holds an older copy: send it ours.
            tracing::debug!(peer = %peer.url.as_str(), %app, %id, "peer is missing the instance: registering it there");
            peer.enqueue(app, id, ReplicationAction::Register, state.store.now());
        }
        (ReplicationAction::Heartbeat, _, Some(theirs))
            if state.replication.settings().adopt_newer_copies =>
        {
            tracing::info!(peer = %peer.url.as_str(), %app, %id, status, "peer holds a newer copy: adopting it");
            state
                .store
                .write(|registry, now| registry.adopt_peer_copy(theirs, now));
        }
        (ReplicationAction::Cancel, Some(ElementOutcome::SendYours), _) => {
            tracing::debug!(peer = %peer.url.as_str(), %app, %id, "peer had no instance to cancel");
        }
        (action, _, _) => {
            tracing::warn!(peer = %peer.url.as_str(), %app, %id, action = action.as_str(), status, "peer refused a replicated write");
        }
    }
}

fn failed(state: &Replicator, peer: &Peer, error: &PeerError, now: Millis) {
    let went_down = {
        let mut peer_state = peer.state.lock();
        let went_down = peer_state.up;
        peer_state.up = false;
        peer_state.failures += 1;
        peer_state.consecutive_failures = peer_state.consecutive_failures.saturating_add(1);
        peer_state.last_error = Some(format!("{error} (at {now})"));
        went_down
    };
    if went_down {
        tracing::warn!(peer = %peer.url.as_str(), %error, "peer is not replicating");
        state
            .events
            .peer(peer.url.as_str(), false, Some(error.to_string()), now);
    }
}

#[cfg(test)]
mod tests;
