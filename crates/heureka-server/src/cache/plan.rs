//! A document cut into runs of applications at content-defined boundaries: which runs a build
//! keeps, and which it encodes again.

use std::hash::BuildHasher;
use std::ops::Range;
use std::sync::Arc;

use heureka_core::Application;
use heureka_wire::ApplicationsPieces;

/// A run that a build must encode again, as found under one lock to be copied under another:
/// its applications and how many instances they held.
#[derive(Debug)]
pub(crate) struct StaleRun {
    pub(super) apps: Vec<StaleApp>,
    pub(super) instances: usize,
}

/// One application of a [`StaleRun`]: its name and, in the delta, its items' numbers.
#[derive(Debug)]
pub(super) struct StaleApp {
    pub(super) name: String,
    pub(super) items: Vec<u64>,
}

/// The stale runs among a document's members, each application with what `items` gives.
pub(super) fn stale_among<'a, E>(
    applications: &'a [E],
    member: impl Fn(&'a E) -> Member<'a>,
    items: impl Fn(&'a E) -> Vec<u64>,
    kept: Kept<'_>,
) -> Vec<StaleRun> {
    let members: Vec<Member<'a>> = applications.iter().map(member).collect();
    let mut stale = Vec::new();
    for (range, keep) in cut_runs(&members, kept) {
        if keep.is_some() {
            continue;
        }
        stale.push(StaleRun {
            apps: members[range.clone()]
                .iter()
                .zip(&applications[range.clone()])
                .map(|(member, application)| StaleApp {
                    name: member.name.to_owned(),
                    items: items(application),
                })
                .collect(),
            instances: members[range].iter().map(|member| member.key.1).sum(),
        });
    }
    stale
}

/// One application of a run: its name and what must move for its entry to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Member<'a> {
    pub(super) name: &'a str,
    pub(super) key: (u64, usize),
}

/// A run's applications by name, each with its key when the run was encoded.
pub(super) type RunMembers = Vec<(String, (u64, usize))>;

/// A run of the last plan that the next document can hold as it is: its first application's
/// name, as the runs' map holds it, and how many applications it has.
#[derive(Debug)]
pub(crate) struct KeptRun {
    pub(super) first: Arc<str>,
    pub(super) len: usize,
}

/// Given a document's members from a run's start to the document's end, the run of the last
/// plan that starts there and can stand as it is: its members are the first ones here, with
/// the same keys, and they end a run where it ended ([`Boundaries`]).
pub(crate) type Kept<'k> = &'k dyn Fn(&[Member<'_>]) -> Option<KeptRun>;

/// What a rebuild does with each run: keep the one it has, or take a new encoding.
pub(crate) enum Planned {
    Keep(Arc<str>),
    Encode { members: RunMembers, plain: Vec<u8> },
}

/// Splits a document's applications into runs (see [`ends_run`]) and encodes those that are
/// not `kept`, one application at a time, so no copy of the whole registry is ever held.
pub(super) fn plan_runs<'a, E>(
    applications: &'a [E],
    member: impl Fn(&'a E) -> Member<'a>,
    kept: Kept<'_>,
    render: impl Fn(&'a E) -> Option<Application>,
    pieces: ApplicationsPieces,
) -> Vec<Planned> {
    let members: Vec<Member<'a>> = applications.iter().map(member).collect();
    cut_runs(&members, kept)
        .into_iter()
        .map(|(range, keep)| match keep {
            Some(keep) => Planned::Keep(keep.first),
            None => {
                let rendered: Vec<Application> = applications[range.clone()]
                    .iter()
                    .filter_map(&render)
                    .collect();
                Planned::Encode {
                    members: members[range]
                        .iter()
                        .map(|member| (member.name.to_owned(), member.key))
                        .collect(),
                    plain: encode_entries(&rendered, pieces),
                }
            }
        })
        .collect()
}

/// A document's members cut into runs where [`ends_run`] says, each with the run of the last
/// plan it keeps. A kept run is taken whole: its members and keys are the old run's, so
/// [`ends_run`] would cut it where it was cut, and its names need not be hashed again (at
/// 1,000,000 instances, hashing every name was a third of a build after one change).
fn cut_runs(members: &[Member<'_>], kept: Kept<'_>) -> Vec<(Range<usize>, Option<KeptRun>)> {
    let mut runs = Vec::new();
    let mut start = 0;
    while start < members.len() {
        let keep = kept(&members[start..]);
        let end = match &keep {
            Some(keep) => start + keep.len,
            None => run_end(members, start),
        };
        runs.push((start..end, keep));
        start = end;
    }
    runs
}

/// Where the run that starts at `start` ends: after the first member [`ends_run`] ends it
/// at, or at the document's end.
fn run_end(members: &[Member<'_>], start: usize) -> usize {
    let mut run_instances = 0;
    for (n, member) in members[start..].iter().enumerate() {
        run_instances += member.key.1;
        if ends_run(member.name, run_instances) {
            return start + n + 1;
        }
    }
    members.len()
}

/// Where [`ends_run`] cuts a run's members, as they were when the run was encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Boundaries {
    /// It ends the run after its last member and nowhere before: wherever these members
    /// start a run, the run is exactly them.
    Whole,
    /// Nowhere: the run ended with the document, and is the same run again only where it
    /// still does.
    Open,
    /// Before the last member (a run copied out while its applications changed): it is not
    /// the run these members make, so it is never kept.
    Inside,
}

impl Boundaries {
    pub(super) fn of(members: &RunMembers) -> Boundaries {
        let mut run_instances = 0;
        for (n, (name, key)) in members.iter().enumerate() {
            run_instances += key.1;
            if ends_run(name, run_instances) {
                return if n + 1 == members.len() {
                    Boundaries::Whole
                } else {
                    Boundaries::Inside
                };
            }
        }
        Boundaries::Open
    }

    /// Whether a run of `members` with these boundaries is the run that starts at `rest`
    /// (the document's members from a run's start to its end): its members are the first of
    /// `rest`, with the same keys (compared first: they are in the run, the names behind
    /// pointers), and they end the run there as they did.
    pub(super) fn stands_at(self, members: &RunMembers, rest: &[Member<'_>]) -> bool {
        let ends_there = match self {
            Boundaries::Whole => members.len() <= rest.len(),
            Boundaries::Open => members.len() == rest.len(),
            Boundaries::Inside => false,
        };
        ends_there
            && members
                .iter()
                .zip(rest)
                .all(|((_, key), member)| *key == member.key)
            && members
                .iter()
                .zip(rest)
                .all(|((name, _), member)| name == member.name)
    }
}

/// Stale runs in batches of at least `instances` instances (the last one smaller).
pub(super) fn batches(runs: &[StaleRun], instances: usize) -> Vec<&[StaleRun]> {
    let mut out = Vec::new();
    let (mut start, mut held) = (0, 0);
    for (n, run) in runs.iter().enumerate() {
        held += run.instances;
        if held >= instances {
            out.push(&runs[start..=n]);
            (start, held) = (n + 1, 0);
        }
    }
    if start < runs.len() {
        out.push(&runs[start..]);
    }
    out
}

/// The entries of applications, with separators between them: a run's bytes.
pub(super) fn encode_entries(applications: &[Application], pieces: ApplicationsPieces) -> Vec<u8> {
    let mut plain = Vec::new();
    for application in applications {
        if !plain.is_empty() {
            plain.extend_from_slice(pieces.separator());
        }
        plain.extend_from_slice(&pieces.entry(application));
    }
    plain
}

/// The hash that picks run boundaries: fixed, so a name ends a run in every build of the
/// process, and fast, since every build hashes every application's name (SipHash was 8 % of
/// a build after one change at 1,000,000 instances).
static BOUNDARY_HASH: foldhash::fast::FixedState =
    foldhash::fast::FixedState::with_seed(0x0048_4555_5245_4b41);

/// Whether a run of applications ends after `name`, `run_instances` instances into it.
/// Boundaries come from application names, not positions, so they stay put when other
/// applications come, go or change size; the size limits keep every run big enough to
/// compress well (32 instances are about 30 KiB, deflate's window) and small enough to
/// re-encode in about a millisecond.
fn ends_run(name: &str, run_instances: usize) -> bool {
    const MIN_INSTANCES: usize = 32;
    const MAX_INSTANCES: usize = 256;
    run_instances >= MAX_INSTANCES
        || (run_instances >= MIN_INSTANCES && BOUNDARY_HASH.hash_one(name).is_multiple_of(8))
}

#[cfg(test)]
mod tests;
