//! The push feed: one `delta` per write, made on the write path under the registry lock (so
//! deltas are in registry order and each one's `apps__hashcode` is the registry's right after
//! it), fanned out on a `tokio::sync::broadcast` channel, the last `heureka.push.replay` kept
//! so that a stream that broke can resume where it stopped.
//!
//! Sending never waits: a subscriber more than [`CHANNEL_CAPACITY`] deltas behind loses its
//! place and its stream ends (`subscriber.rs`); it resumes from the kept deltas when it
//! reconnects. Deltas are only made while someone may want them: while a stream is open and
//! for [`RESUME_WINDOW`] after the last one ended. Each visible write still takes a number
//! when none are made, so that a stream that asks to resume across that gap is told it cannot
//! (it gets a snapshot) rather than silently missing changes.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use heureka_core::{Application, Change, Instance, Registry};
use parking_lot::Mutex;
use tokio::sync::broadcast;

use super::message::{snapshot_frame, Delta, Follows, StreamPosition};
use crate::clock::{self, Instant};
use crate::config::PushConfig;
use crate::store::{ChangeSink, ReadGuard};

/// How many deltas a subscriber may fall behind before its stream ends.
pub(crate) const CHANNEL_CAPACITY: usize = 1024;
/// How long deltas are still made and kept after the last stream ended: long enough for a
/// client to notice a broken stream and reconnect (it backs off to at most 30 s).
const RESUME_WINDOW: Duration = Duration::from_secs(300);

#[derive(Debug)]
pub(crate) struct PushFeed {
    /// Names this process in stream ids: a stream of an earlier process, or of another node,
    /// cannot resume here.
    stream: u64,
    sender: broadcast::Sender<Arc<Delta>>,
    replay: usize,
    /// A blocking mutex taken under the registry lock (never the other way round), never
    /// across an `.await`.
    state: Mutex<FeedState>,
}

#[derive(Debug, Default)]
struct FeedState {
    /// The number of the last visible write.
    seq: u64,
    /// The last deltas made, oldest first, at most `replay`; numbers without gaps.
    kept: VecDeque<Arc<Delta>>,
    /// The instances the write in progress changed, in order, while deltas are made.
    changed: Vec<(String, String)>,
    /// Whether the write in progress changed anything a reader sees.
    visible: bool,
    /// When a stream was last open; deltas are made until [`RESUME_WINDOW`] after it.
    last_open: Option<Instant>,
    /// The snapshots taken since the last write, by what they follow, for the streams that
    /// start before the next; at most [`SHARED_SNAPSHOTS`].
    snapshots: HashMap<Follows, Arc<SharedSnapshot>>,
}

/// How many different snapshots (by the applications they follow) are kept between two writes.
const SHARED_SNAPSHOTS: usize = 256;

/// A snapshot at one write's number, shared by the streams following the same applications
/// that start before the next write: a fleet reconnecting at once (a node restarted, a rolling deploy)
/// copies and encodes the registry once per write instead of once per stream. Heartbeats in
/// between only move lease timestamps, which documents show lagging anyway. Kept until the next
/// write, as the full-fetch cache keeps its document.
#[derive(Debug)]
struct SharedSnapshot {
    version: u64,
    /// Taken by the first stream to encode it.
    applications: Mutex<Option<Vec<Application>>>,
    frame: OnceLock<Bytes>,
}

impl SharedSnapshot {
    /// Encoded once, with no lock held; streams asking meanwhile wait for that encoding.
    fn frame(&self, id: &StreamPosition) -> Bytes {
        let encode = || {
            let applications = self.applications.lock().take().unwrap_or_default();
            snapshot_frame(id, self.version, applications)
        };
        self.frame.get_or_init(encode).clone()
    }
}

/// How a new stream starts: the frames to send first, and the number of the last delta they
/// cover; live deltas up to it are already among them.
pub(crate) struct Start {
    pub(crate) receiver: broadcast::Receiver<Arc<Delta>>,
    pub(crate) first: Vec<Bytes>,
    pub(crate) covered: u64,
    /// The registry version a snapshot showed; `None` for a resumed stream.
    pub(crate) snapshot_version: Option<u64>,
}

impl PushFeed {
    pub(crate) fn new(config: &PushConfig) -> PushFeed {
        PushFeed {
            stream: process_stream_number(),
            sender: broadcast::channel(CHANNEL_CAPACITY).0,
            replay: config.replay.max(1),
            state: Mutex::new(FeedState::default()),
        }
    }

    /// Starts a stream following `follows`: the deltas after `resume` when they are all kept
    /// (and `resume` names this process), else a snapshot. Subscribes before reading, under the
    /// registry lock, so nothing falls between what it is sent first and the live deltas.
    pub(crate) fn start(
        &self,
        registry: ReadGuard<'_>,
        follows: &Follows,
        resume: Option<StreamPosition>,
    ) -> Start {
        let receiver = self.sender.subscribe();
        let mut state = self.state.lock();
        state.last_open = Some(clock::instant());
        let covered = state.seq;
        let missed: Option<Vec<Arc<Delta>>> = resume
            .filter(|position| position.stream == self.stream)
            .and_then(|position| state.after(position.seq))
            .map(|missed| missed.cloned().collect());
        if let Some(missed) = missed {
            // Encoded with no lock held.
            drop(state);
            drop(registry);
            return Start {
                receiver,
                first: missed
                    .iter()
                    .filter_map(|delta| delta.frame_for(follows))
                    .collect(),
                covered,
                snapshot_version: None,
            };
        }
        let id = self.position(covered);
        let shared = match state.snapshots.get(follows) {
            Some(shared) => shared.clone(),
            None => {
                let shared = Arc::new(SharedSnapshot {
                    version: registry.version(),
                    applications: Mutex::new(Some(followed(&registry, follows))),
                    frame: OnceLock::new(),
                });
                if state.snapshots.len() < SHARED_SNAPSHOTS {
                    state.snapshots.insert(follows.clone(), shared.clone());
                }
                shared
            }
        };
        drop(state);
        drop(registry);
        Start {
            receiver,
            first: vec![shared.frame(&id)],
            covered,
            snapshot_version: Some(shared.version),
        }
    }

    /// A stream ended: deltas go on being made for [`RESUME_WINDOW`], for it to resume.
    pub(crate) fn ended(&self) {
        self.state.lock().last_open = Some(clock::instant());
    }

    fn position(&self, seq: u64) -> StreamPosition {
        StreamPosition {
            stream: self.stream,
            seq,
        }
    }

    /// Whether deltas are made now: a stream is open, or one ended within the window.
    fn making(&self, state: &FeedState) -> bool {
        self.sender.receiver_count() > 0
            || state
                .last_open
                .is_some_and(|at| clock::instant().duration_since(at) < RESUME_WINDOW)
    }
}

impl FeedState {
    /// The kept deltas after `seq`, if every one after it is kept (`seq` is not ahead).
    fn after(&self, seq: u64) -> Option<impl Iterator<Item = &Arc<Delta>>> {
        if seq > self.seq {
            return None;
        }
        let first_kept = self.kept.front().map_or(self.seq + 1, |delta| delta.id.seq);
        (seq + 1 >= first_kept).then(|| self.kept.iter().filter(move |delta| delta.id.seq > seq))
    }
}

/// The followed applications as the full document shows them.
fn followed(registry: &Registry, follows: &Follows) -> Vec<Application> {
    match follows {
        Follows::Every => registry.applications().applications,
        Follows::Only(apps) => apps
            .iter()
            .filter_map(|app| registry.application(app))
            .collect(),
    }
}

impl ChangeSink for PushFeed {
    /// Notes the changed instance, if deltas are being made; the delta is made once the
    /// write's changes are all in (`written`).
    fn publish(&self, change: &Change, _registry: &Registry) {
        if !change.kind.is_visible() {
            return;
        }
        let mut state = self.state.lock();
        state.visible = true;
        if self.making(&state) {
            state
                .changed
                .push((change.app.to_string(), change.id.to_string()));
        }
    }

    /// Numbers the write, and makes, keeps and sends its delta while deltas are made.
    fn written(&self, registry: &Registry) {
        let mut state = self.state.lock();
        if !std::mem::take(&mut state.visible) {
            return;
        }
        state.seq += 1;
        // The shared snapshots are of the registry before this write: no stream may start on one.
        state.snapshots.clear();
        let changed = std::mem::take(&mut state.changed);
        if changed.is_empty() {
            // Nothing was noted (no stream wants deltas): no kept delta may sit before a gap.
            state.kept.clear();
            return;
        }
        let delta = Arc::new(Delta::new(
            self.position(state.seq),
            registry.version(),
            registry.full_hashcode(),
            changed_applications(registry, changed),
        ));
        if state.kept.len() == self.replay {
            state.kept.pop_front();
        }
        state.kept.push_back(delta.clone());
        // An error only means no stream is open right now.
        let _ = self.sender.send(delta);
    }
}

/// Each changed instance once (its latest state), grouped by application, sorted by name; in
/// the order of their last changes within an application.
fn changed_applications(registry: &Registry, changed: Vec<(String, String)>) -> Vec<Application> {
    let mut seen = HashSet::new();
    let mut latest_first = Vec::new();
    for (app, id) in changed.into_iter().rev() {
        if seen.insert((app.clone(), id.clone())) {
            latest_first.push((app, id));
        }
    }
    let mut by_app: BTreeMap<String, Vec<Instance>> = BTreeMap::new();
    for (app, id) in latest_first.into_iter().rev() {
        if let Some(instance) = registry.changed_instance(&app, &id) {
            by_app.entry(app).or_default().push(instance);
        }
    }
    by_app
        .into_iter()
        .map(|(name, instances)| Application { name, instances })
        .collect()
}

/// A number for this process: random, so that a restarted node or another node never takes a
/// stream id for one of its own.
fn process_stream_number() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    // The standard library seeds each `RandomState` from the operating system's randomness.
    hasher.write_u32(std::process::id());
    hasher.finish()
}

#[cfg(test)]
mod tests;
