//! Anti-entropy's decisions: what differs between our digest and a peer's, and which way each
//! difference is repaired. Pure rules over two lists of [`InstanceDigest`]s; the server fetches
//! the peer's view, calls [`compare_digests`] and carries the [`Repairs`] out.
//!
//! Who is newer, and what adopting the peer's copy does to an override, are the rules of
//! `peer_copies.rs` (the greater `lastDirtyTimestamp`, then the later change). A removal beats
//! a copy unless the copy was renewed or changed after it: an instance a partitioned peer
//! evicted is still renewed here, while one that was cancelled is not. Between Heureka servers
//! the part stamps decide instead (`merge.rs`): whoever holds a write the other lacks sends
//! its whole copy.

use std::collections::BTreeMap;

use crate::instance_digest::InstanceDigest;
use crate::merge::PartStamps;
use crate::model::Millis;
use crate::peer_copies::{
    adopted_override, is_newer, same_state, touched_since, OverrideAdoption, PeerOverrideAbsence,
};

/// A write queued for the peer to repair it: Eureka's replication actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerWrite {
    Register,
    Heartbeat,
    Cancel,
    StatusUpdate,
    DeleteStatusOverride,
}

/// What one comparison decided.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Repairs {
    /// Writes to queue for the peer: `(app, id, write)`.
    pub push: Vec<(String, String, PeerWrite)>,
    /// Instances to fetch from the peer and adopt here.
    pub pull: Vec<(String, String)>,
    /// Instances the peer removed after our last news of them: removed here too.
    pub remove_here: Vec<(String, String)>,
    /// Instances the peer saw renewed later than we did, with its renewal: our copies of
    /// their heartbeats are late or lost, and our leases count from its renewals.
    pub renew_here: Vec<(String, String, Millis)>,
}

impl Repairs {
    pub fn is_empty(&self) -> bool {
        self.push.is_empty()
            && self.pull.is_empty()
            && self.remove_here.is_empty()
            && self.renew_here.is_empty()
    }
}

/// How a peer's view was obtained, which decides what can be trusted in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerView {
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
/// anti-entropy interval (`renewal_lag` of [`compare_digests`]), so short leases are kept too.
pub const RENEWAL_LAG_MS: Millis = 30_000;

/// Changes this recent may still be on their way through replication (queued here, or in a
/// batch to or from the peer), so a difference in them is not yet a divergence.
pub const SETTLING_MS: Millis = 2_000;

/// Compares our digest with a peer's; both sorted or not, any order. Changes at or after
/// `settled_before` are left to replication ([`SETTLING_MS`]); renewals further apart than
/// `renewal_lag` are repaired ([`RENEWAL_LAG_MS`]).
pub fn compare_digests(
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
                Decision::Push(write) => repairs.push.push((app.clone(), id.clone(), write)),
                Decision::Pull => repairs.pull.push((app.clone(), id.clone())),
                Decision::RemoveHere => repairs.remove_here.push((app.clone(), id.clone())),
                Decision::RenewHere(at) => repairs.renew_here.push((app.clone(), id.clone(), at)),
            }
        }
    }
    repairs
}

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
    Push(PeerWrite),
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

/// Eureka's rules, for a peer without stamps (a Java server, or a Heureka digest entry
/// without them): the newer copy by timestamps wins, a removal unless renewed or changed
/// after it.
fn decide(pair: Pair<'_>, view: PeerView, renewal_lag: Millis) -> Vec<Decision> {
    use PeerWrite::{Cancel, Heartbeat, Register};
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
/// the receiver merges part by part (`Parts::merge`), so both end with the latest of every
/// part. A cancel travels as a copy too; an eviction does not (each server judges its own
/// leases) unless the other side renewed the instance after it, which brings it back there.
fn decide_stamped(
    pair: Pair<'_>,
    ours: PartStamps,
    theirs: PartStamps,
    renewal_lag: Millis,
) -> Vec<Decision> {
    use PeerWrite::{Cancel, Heartbeat, Register};
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
    use PeerWrite::{DeleteStatusOverride, Register, StatusUpdate};
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

#[cfg(test)]
mod tests;
