//! Anti-entropy: every `heureka.replication.anti-entropy-interval-ms`, each node compares its
//! registry with each peer's and repairs what differs, so a node that missed writes (down,
//! cut off, its queue overflowed, a batch dropped) converges without waiting for heartbeats,
//! and a chain of peers (A lists B, B lists C) converges although replication is one hop.
//!
//! A Heureka peer is compared through its digest (`GET peerreplication/digest`: one small
//! record per instance, tombstones of recent removals included, lease renewals as of now); a
//! Java peer, which has no digest, through its full registry. Repairs go both ways: what is
//! newer here is queued for the peer like any replication task, what is newer there is
//! fetched and adopted here as a peer's write (never replicated on).
//!
//! Who is newer, and what adopting the peer's copy does to an override, are core's rules
//! (`heureka_core::is_newer`, `adopted_override`…, in `peer_copies.rs`): the greater
//! `lastDirtyTimestamp`, then the later change. A removal beats a copy unless the copy was
//! renewed or changed after it: an instance a partitioned peer evicted is still renewed here,
//! while one that was cancelled is not. This file pairs the two views and turns the rules'
//! answers into repairs.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use heureka_core::{
    adopted_override, is_newer, same_state, touched_since, Applications, InstanceDigest, Millis,
    Origin, OverrideAdoption, PartStamps, PeerOverrideAbsence,
};
use heureka_wire::ReplicationAction;

use super::transport::PeerError;
use super::Replicator;
use super::{Peer, PeerProtocol};

/// What one comparison decided.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Repairs {
    /// Tasks to queue for the peer: `(app, id, action)`.
    pub(crate) push: Vec<(String, String, ReplicationAction)>,
    /// Instances to fetch from the peer and adopt here.
    pub(crate) pull: Vec<(String, String)>,
    /// Instances the peer removed after our last news of them: removed here too.
    pub(crate) remove_here: Vec<(String, String)>,
    /// Instances the peer saw renewed later than we did, with its renewal: our copies of
    /// their heartbeats are late or lost, and our leases count from its renewals.
    pub(crate) renew_here: Vec<(String, String, Millis)>,
}

impl Repairs {
    pub(crate) fn is_empty(&self) -> bool {
        self.push.is_empty()
            && self.pull.is_empty()
            && self.remove_here.is_empty()
            && self.renew_here.is_empty()
    }
}

/// How a peer's view was obtained, which decides what can be trusted in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PeerView {
    /// A Heureka digest: fresh renewals and tombstones.
    Digest,
    /// A full registry read: renewals may be as stale as the peer's response cache, and
    /// removals are invisible.
    FullRegistry,
}

/// A renewal here this much later than the peer's means the peer hears of this instance's
/// heartbeats from no one (a chain): send it one; the other way round, that our copies of its
/// heartbeats are late or lost: our lease counts from the peer's renewal. In a full mesh
/// renewals agree within the batching delay, so neither fires. Never more than one
/// anti-entropy interval (`renewal_lag` of [`compare`]), so short leases are kept too.
pub(crate) const RENEWAL_LAG_MS: Millis = 30_000;

/// Compares our digest with a peer's; both sorted or not, any order. Renewals further apart
/// than `renewal_lag` are repaired ([`RENEWAL_LAG_MS`]).
pub(crate) fn compare(
    ours: &[InstanceDigest],
    theirs: &[InstanceDigest],
    view: PeerView,
    settled_before: Millis,
    renewal_lag: Millis,
) -> Repairs {
    let key = |entry: &InstanceDigest| (entry.app.clone(), entry.id.clone());
    let mut paired: BTreeMap<(String, String), Pair<'_>> = BTreeMap::new();
    for entry in ours {
        paired.entry(key(entry)).or_default().0 = Some(entry);
    }
    for entry in theirs {
        paired.entry(key(entry)).or_default().1 = Some(entry);
    }
    // A peer that keeps stamps sends them for every entry; an empty digest tells nothing.
    let peer_stamped = view == PeerView::Digest && theirs.iter().any(|e| e.stamps.is_some());
    let mut repairs = Repairs::default();
    for ((app, id), pair) in paired {
        if in_flight(pair, settled_before) {
            continue;
        }
        let decisions = match stamps_of(pair).filter(|_| peer_stamped) {
            Some((ours, theirs)) => decide_stamped(pair, ours, theirs, renewal_lag),
            None => decide(pair, view, renewal_lag),
        };
        for decision in decisions {
            match decision {
                Decision::Push(action) => repairs.push.push((app.clone(), id.clone(), action)),
                Decision::Pull => repairs.pull.push((app.clone(), id.clone())),
                Decision::RemoveHere => repairs.remove_here.push((app.clone(), id.clone())),
                Decision::RenewHere(at) => repairs.renew_here.push((app.clone(), id.clone(), at)),
            }
        }
    }
    repairs
}

/// Changes this recent may still be on their way through replication (queued here, or in a
/// batch to or from the peer), so a difference in them is not yet a divergence.
pub(crate) const SETTLING_MS: Millis = 2_000;

/// Whether either side changed the instance at or after `settled_before`: replication, not
/// anti-entropy, is still carrying that change.
fn in_flight(pair: Pair<'_>, settled_before: Millis) -> bool {
    [pair.0, pair.1]
        .into_iter()
        .flatten()
        .any(|entry| entry.last_updated_timestamp >= settled_before)
}

/// Our entry and the peer's for one instance.
type Pair<'a> = (Option<&'a InstanceDigest>, Option<&'a InstanceDigest>);

#[derive(Debug, PartialEq, Eq)]
enum Decision {
    Push(ReplicationAction),
    Pull,
    RemoveHere,
    /// Our lease counts from the peer's later renewal.
    RenewHere(Millis),
}

/// One side of a comparison.
enum Side<'a> {
    Absent,
    Live(&'a InstanceDigest),
    Removed(&'a InstanceDigest),
}

fn side(entry: Option<&InstanceDigest>) -> Side<'_> {
    match entry {
        None => Side::Absent,
        Some(entry) if entry.removed => Side::Removed(entry),
        Some(entry) => Side::Live(entry),
    }
}

fn decide(
    pair: (Option<&InstanceDigest>, Option<&InstanceDigest>),
    view: PeerView,
    renewal_lag: Millis,
) -> Vec<Decision> {
    use ReplicationAction::{Cancel, Heartbeat, Register};
    match (side(pair.0), side(pair.1)) {
        (Side::Live(_), Side::Absent) => vec![Decision::Push(Register)],
        (Side::Absent, Side::Live(_)) => vec![Decision::Pull],
        (Side::Live(ours), Side::Removed(removal)) => {
            if touched_since(ours, removal.last_updated_timestamp, true) {
                vec![Decision::Push(Register)]
            } else {
                vec![Decision::RemoveHere]
            }
        }
        (Side::Removed(removal), Side::Live(theirs)) => {
            let renewals_count = view == PeerView::Digest;
            if touched_since(theirs, removal.last_updated_timestamp, renewals_count) {
                vec![Decision::Pull]
            } else {
                vec![Decision::Push(Cancel)]
            }
        }
        (Side::Live(ours), Side::Live(theirs)) if same_state(ours, theirs) => {
            let lagging = view == PeerView::Digest
                && ours.last_renewal_timestamp - theirs.last_renewal_timestamp > renewal_lag;
            if lagging {
                vec![Decision::Push(Heartbeat)]
            } else {
                Vec::new()
            }
        }
        (Side::Live(ours), Side::Live(theirs)) if is_newer(theirs, ours) => vec![Decision::Pull],
        (Side::Live(ours), Side::Live(theirs)) => push_ours(ours, theirs),
        // Removed on both sides, or on one side and unknown on the other: nothing to do.
        _ => Vec::new(),
    }
}

/// Both sides' stamps, when both servers keep them: a digest from a Heureka peer, an
/// instance either holds. Absent on one side counts as nothing known (every stamp ZERO).
fn stamps_of(pair: Pair<'_>) -> Option<(PartStamps, PartStamps)> {
    let stamps = |entry: Option<&InstanceDigest>| match entry {
        None => Some(PartStamps::default()),
        Some(entry) => entry.stamps,
    };
    Some((stamps(pair.0)?, stamps(pair.1)?))
}

/// Between Heureka servers: whoever holds a write the other lacks sends its whole copy, and
/// the receiver merges part by part (`heureka_core::Parts::merge`), so both end with the
/// latest of every part. A cancel travels as a copy too; an eviction does not (each server
/// judges its own leases) unless the other side renewed the instance after it, which brings
/// it back there.
fn decide_stamped(
    pair: Pair<'_>,
    ours: PartStamps,
    theirs: PartStamps,
    renewal_lag: Millis,
) -> Vec<Decision> {
    use ReplicationAction::{Cancel, Heartbeat, Register};
    let mut decisions = Vec::new();
    let known = |entry: Option<&InstanceDigest>| entry.is_some_and(|e| !is_eviction(e));
    if theirs.has_newer_part_than(&ours) && known(pair.1) {
        decisions.push(Decision::Pull);
    }
    if ours.has_newer_part_than(&theirs) && known(pair.0) {
        let removed = pair.0.is_some_and(|entry| entry.removed);
        decisions.push(Decision::Push(if removed { Cancel } else { Register }));
    }
    if !decisions.is_empty() {
        return decisions;
    }
    let (Some(o), Some(t)) = pair else {
        return decisions;
    };
    let (our_renewal, their_renewal) = (o.last_renewal_timestamp, t.last_renewal_timestamp);
    match (o.removed, t.removed) {
        (false, true) if our_renewal > their_renewal => decisions.push(Decision::Push(Register)),
        (true, false) if their_renewal > our_renewal => decisions.push(Decision::Pull),
        (false, false) if our_renewal - their_renewal > renewal_lag => {
            decisions.push(Decision::Push(Heartbeat))
        }
        (false, false) if their_renewal - our_renewal > renewal_lag => {
            decisions.push(Decision::RenewHere(their_renewal))
        }
        _ => {}
    }
    decisions
}

/// Whether a digest entry is an eviction's tombstone: removed here, but never cancelled.
fn is_eviction(entry: &InstanceDigest) -> bool {
    entry.removed
        && entry
            .stamps
            .is_some_and(|stamps| stamps.removed < stamps.registration)
}

/// Our newer copy, and the override change a register alone does not carry: what the peer's
/// own repair would do to its override on adopting our copy, sent as the write that does it.
fn push_ours(ours: &InstanceDigest, theirs: &InstanceDigest) -> Vec<Decision> {
    use ReplicationAction::{DeleteStatusOverride, Register, StatusUpdate};
    let mut decisions = vec![Decision::Push(Register)];
    if ours.overridden_status != theirs.overridden_status {
        let absence = PeerOverrideAbsence::RemovesOurs;
        match adopted_override(ours.overridden_status, theirs.overridden_status, absence) {
            OverrideAdoption::Take(_) => decisions.push(Decision::Push(StatusUpdate)),
            OverrideAdoption::Remove => decisions.push(Decision::Push(DeleteStatusOverride)),
            OverrideAdoption::Keep => {}
        }
    }
    decisions
}

/// A Java peer's full registry as digest entries (no tombstones, renewals possibly stale).
fn digest_of(applications: &Applications) -> Vec<InstanceDigest> {
    applications
        .applications
        .iter()
        .flat_map(|application| &application.instances)
        .map(|instance| InstanceDigest {
            app: instance.app.to_uppercase(),
            id: instance.id().to_owned(),
            status: instance.status,
            overridden_status: instance.overridden_status,
            last_dirty_timestamp: instance.last_dirty_timestamp,
            last_updated_timestamp: instance.last_updated_timestamp,
            last_renewal_timestamp: instance.lease_info.last_renewal_timestamp,
            removed: false,
            // Java servers stamp nothing.
            stamps: None,
        })
        .collect()
}

/// The anti-entropy task: one comparison per peer per interval.
pub(crate) async fn run(state: Replicator, interval: Duration) {
    let mut timer = tokio::time::interval_at(crate::clock::instant() + interval, interval);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        timer.tick().await;
        if !state.replication.is_synced() {
            continue;
        }
        // Peers are compared side by side, and a round lasts at most one interval: a peer that
        // hangs delays no other's repair, and its comparison is abandoned (dropping the set
        // aborts it) to be tried again next round.
        let mut rounds = tokio::task::JoinSet::new();
        for peer in state.replication.peers() {
            let state = state.clone();
            rounds.spawn(async move {
                let outcome = repair_with(&state, &peer).await;
                log_round(&peer, outcome);
            });
        }
        let all_done = async { while rounds.join_next().await.is_some() {} };
        let _ = tokio::time::timeout(interval.max(Duration::from_secs(1)), all_done).await;
    }
}

fn log_round(peer: &Peer, outcome: Result<Repairs, PeerError>) {
    match outcome {
        Ok(repairs) if !repairs.is_empty() => tracing::info!(
            peer = %peer.url.as_str(),
            pushed = repairs.push.len(),
            pulled = repairs.pull.len(),
            removed_here = repairs.remove_here.len(),
            "anti-entropy repaired differences with peer"
        ),
        Ok(_) => {}
        Err(error) => {
            tracing::debug!(peer = %peer.url.as_str(), %error, "anti-entropy skipped a peer")
        }
    }
}

/// Compares with one peer and applies the repairs.
async fn repair_with(state: &Replicator, peer: &Arc<Peer>) -> Result<Repairs, PeerError> {
    let client = state.replication.client().clone();
    // Our view is taken first: whatever reaches us while the peer's view travels is newer
    // than it, and is left out with everything else still settling.
    let ours = state.store.read().digest();
    let settled_before = state.store.now() - SETTLING_MS;
    let (theirs, view, full) = match client.fetch_digest(&peer.url).await? {
        Some(digest) => (digest, PeerView::Digest, None),
        None => {
            let applications = client.fetch_applications(&peer.url).await?;
            (
                digest_of(&applications),
                PeerView::FullRegistry,
                Some(applications),
            )
        }
    };
    let repairs = compare(&ours, &theirs, view, settled_before, renewal_lag(state));
    let repairs = apply(state, peer, repairs, &theirs, full.as_ref()).await?;
    // Whatever this node restored has now been compared with a peer's registry: by stamps with
    // a Heureka peer, by Eureka's rules (all a Java peer allows) otherwise.
    state.replication.restore_checked_with(peer);
    Ok(repairs)
}

/// A node restored from its store, before its first read: the peer's copies and tombstones
/// of the instances `restored` names are merged by their stamps, so that what a peer wrote
/// while this node was down (a cancel above all) wins over the restored copy before anyone
/// reads it. Nothing is settling yet (the node has served nothing), so every difference
/// counts. Other instances come with the start-up sync's full fetch. `None`: the peer keeps
/// no stamps (a Java server), so there is nothing to compare by.
pub(crate) async fn reconcile_restored(
    state: &Replicator,
    peer: &Arc<Peer>,
    restored: &HashSet<(String, String)>,
) -> Result<Option<Repairs>, PeerError> {
    let client = state.replication.client().clone();
    let Some(theirs) = client.fetch_digest(&peer.url).await? else {
        return Ok(None);
    };
    let among_restored =
        |entry: &InstanceDigest| restored.contains(&(entry.app.clone(), entry.id.clone()));
    let theirs: Vec<_> = theirs.into_iter().filter(among_restored).collect();
    let ours: Vec<_> = state
        .store
        .read()
        .digest()
        .into_iter()
        .filter(among_restored)
        .collect();
    let repairs = compare(
        &ours,
        &theirs,
        PeerView::Digest,
        Millis::MAX,
        renewal_lag(state),
    );
    apply(state, peer, repairs, &theirs, None).await.map(Some)
}

/// Renewals further apart than this are repaired: [`RENEWAL_LAG_MS`], or one interval.
fn renewal_lag(state: &Replicator) -> Millis {
    let interval = state.replication.settings().anti_entropy_interval;
    let interval_ms = interval.map_or(RENEWAL_LAG_MS, |i| i.as_millis() as Millis);
    RENEWAL_LAG_MS.min(interval_ms)
}

/// Carries out what a comparison decided: pushes queued for the peer, renewals and removals
/// applied here, and the peer's copies fetched (from `full`, a Java peer's registry already
/// read, or asked for) and adopted here as a peer's writes.
async fn apply(
    state: &Replicator,
    peer: &Arc<Peer>,
    repairs: Repairs,
    theirs: &[InstanceDigest],
    full: Option<&Applications>,
) -> Result<Repairs, PeerError> {
    let client = state.replication.client().clone();
    let stamped = stamped_keys(theirs);
    if !stamped.is_empty() && peer.protocol() == PeerProtocol::Eureka {
        // A peer that once answered like a Java server now keeps stamps (upgraded in place):
        // the dispatcher asks it again.
        peer.set_protocol(PeerProtocol::Unknown);
    }
    let now = state.store.now();
    for (app, id, action) in &repairs.push {
        peer.enqueue(app, id, *action, now);
    }
    if !repairs.renew_here.is_empty() {
        state.store.write(|registry, now| {
            for (app, id, at) in &repairs.renew_here {
                registry.adopt_renewal(app, id, *at, now);
            }
        });
    }
    for (app, id) in &repairs.remove_here {
        state
            .store
            .write(|registry, now| registry.cancel(app, id, Origin::Peer, now));
    }
    let (stamped_pulls, pulls): (Vec<_>, Vec<_>) = repairs
        .pull
        .iter()
        .cloned()
        .partition(|key| stamped.contains(key));
    for (app, id) in &pulls {
        let instance = match full {
            Some(applications) => find(applications, app, id),
            None => client.fetch_instance(&peer.url, app, id).await.ok(),
        };
        if let Some(instance) = instance {
            adopt(state, instance);
        }
    }
    // In requests of bounded size: after a restart, every synced copy is older than the peer's.
    for keys in stamped_pulls.chunks(COPIES_PER_REQUEST) {
        merge_copies(state, peer, &client.fetch_copies(&peer.url, keys).await?);
    }
    Ok(repairs)
}

fn find(applications: &Applications, app: &str, id: &str) -> Option<heureka_core::Instance> {
    applications
        .applications
        .iter()
        .flat_map(|application| &application.instances)
        .find(|instance| instance.app.eq_ignore_ascii_case(app) && instance.id() == id)
        .cloned()
}

/// The instances a peer's digest carries stamps for, whose copies are fetched stamped.
fn stamped_keys(theirs: &[InstanceDigest]) -> HashSet<(String, String)> {
    if theirs.iter().all(|entry| entry.stamps.is_none()) {
        return Default::default();
    }
    theirs
        .iter()
        .map(|entry| (entry.app.clone(), entry.id.clone()))
        .collect()
}

/// How many copies anti-entropy asks a peer for at once.
const COPIES_PER_REQUEST: usize = 500;

/// Merges a Heureka peer's stamped copies, in one write.
fn merge_copies(state: &Replicator, peer: &Peer, answers: &[heureka_wire::StampedResult]) {
    let copies: Vec<_> = answers.iter().filter_map(|a| a.copy.clone()).collect();
    let refused = state.store.write(|registry, now| {
        copies
            .into_iter()
            .filter_map(|copy| registry.merge_copy(copy, now).err())
            .collect::<Vec<_>>()
    });
    if let Some(first) = refused.first() {
        let count = refused.len();
        tracing::warn!(peer = %peer.url.as_str(), count, %first, "peer's copies refused");
    }
}

/// Takes the peer's copy, its override (or the absence of one) included.
fn adopt(state: &Replicator, instance: heureka_core::Instance) {
    state
        .store
        .write(|registry, now| registry.repair_from_peer(instance, now));
}

#[cfg(test)]
mod tests;
