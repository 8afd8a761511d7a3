//! A document cut into runs of applications at content-defined boundaries: which runs a build
//! keeps, and which it encodes again.

use std::hash::BuildHasher;

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
    kept: &dyn Fn(&[Member<'_>]) -> bool,
) -> Vec<StaleRun> {
    let mut start = 0;
    let mut stale = Vec::new();
    for run in group_runs(applications.iter().map(&member)) {
        let of_run = &applications[start..start + run.len()];
        start += run.len();
        if kept(&run) {
            continue;
        }
        stale.push(StaleRun {
            apps: run
                .iter()
                .zip(of_run)
                .map(|(member, application)| StaleApp {
                    name: member.name.to_owned(),
                    items: items(application),
                })
                .collect(),
            instances: run.iter().map(|member| member.key.1).sum(),
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

/// What a rebuild does with each run: keep the one it has, or take a new encoding.
pub(crate) enum Planned {
    Keep(String),
    Encode { members: RunMembers, plain: Vec<u8> },
}

/// Splits a document's applications into runs (see [`ends_run`]) and encodes those that are
/// not `kept`, one application at a time, so no copy of the whole registry is ever held.
pub(super) fn plan_runs<'a, E>(
    applications: &'a [E],
    member: impl Fn(&'a E) -> Member<'a>,
    kept: &dyn Fn(&[Member<'_>]) -> bool,
    render: impl Fn(&'a E) -> Option<Application>,
    pieces: ApplicationsPieces,
) -> Vec<Planned> {
    let mut start = 0;
    group_runs(applications.iter().map(member))
        .into_iter()
        .map(|run| {
            let of_run = &applications[start..start + run.len()];
            start += run.len();
            if kept(&run) {
                Planned::Keep(run[0].name.to_owned())
            } else {
                let rendered: Vec<Application> = of_run.iter().filter_map(&render).collect();
                Planned::Encode {
                    members: run
                        .iter()
                        .map(|member| (member.name.to_owned(), member.key))
                        .collect(),
                    plain: encode_entries(&rendered, pieces),
                }
            }
        })
        .collect()
}

/// A document's members, in order, cut into runs where [`ends_run`] says.
fn group_runs<'a>(members: impl Iterator<Item = Member<'a>>) -> Vec<Vec<Member<'a>>> {
    let mut runs = Vec::new();
    let mut run: Vec<Member<'a>> = Vec::new();
    let mut run_instances = 0;
    for member in members {
        run.push(member);
        run_instances += member.key.1;
        if ends_run(member.name, run_instances) {
            runs.push(std::mem::take(&mut run));
            run_instances = 0;
        }
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs
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
