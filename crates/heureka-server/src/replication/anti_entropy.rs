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
//! What differs and which way each difference is repaired are core's rules
//! (`heureka_core::compare_digests`, in its `anti_entropy.rs`, over the rules of
//! `peer_copies.rs`): the greater `lastDirtyTimestamp`, then the later change, or between
//! Heureka servers the part stamps. This file fetches the peer's view, asks core, and carries
//! the repairs out.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use heureka_core::{
    compare_digests, Applications, InstanceDigest, Millis, Origin, PeerView, Repairs,
    RENEWAL_LAG_MS, SETTLING_MS,
};

use super::discovery;
use super::peer::{Peer, PeerProtocol};
use super::replicator::Replicator;
use super::transport::PeerError;

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
            if state.replication.skips(&peer) {
                continue;
            }
            let state = state.clone();
            rounds.spawn(async move {
                let outcome = repair_with(&state, &peer).await;
                log_round(&state, &peer, outcome);
            });
        }
        if state.replication.is_default_namespace() {
            // A namespace created on a peer while this node could not hear of it (down, cut
            // off) is opened here; its own anti-entropy then fills it.
            let state = state.clone();
            rounds.spawn(async move { discovery::discover(&state).await });
        }
        let all_done = async { while rounds.join_next().await.is_some() {} };
        let _ = tokio::time::timeout(interval.max(Duration::from_secs(1)), all_done).await;
    }
}

fn log_round(state: &Replicator, peer: &Peer, outcome: Result<Repairs, PeerError>) {
    match outcome {
        // Under a namespace's path: the peer holds no namespaces (its digest was not there
        // either).
        Err(PeerError::Refused(why))
            if why.starts_with("404") && !state.replication.is_default_namespace() =>
        {
            state.replication.lacks_namespaces(peer, &why)
        }
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
    let repairs = compare_digests(&ours, &theirs, view, settled_before, renewal_lag(state));
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
    let repairs = compare_digests(
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
        // the dispatcher asks it again, and the namespaces try it.
        peer.set_protocol(PeerProtocol::Unknown);
        state.replication.may_hold_namespaces(peer);
    }
    let now = state.store.now();
    for (app, id, write) in &repairs.push {
        peer.enqueue(app, id, (*write).into(), now);
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
