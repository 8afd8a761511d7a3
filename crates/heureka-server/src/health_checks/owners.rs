//! Which Heureka node checks which instance: rendezvous hashing over the nodes that check and
//! answer, and the task that keeps that set by asking each peer every second.
//!
//! Every node computes the same owner for an instance from the same set of nodes, with no
//! coordination: the node whose hash of `(node, app, id)` is highest. When a node stops
//! answering, only its instances move, each to the node with the next-highest hash. Nodes are
//! named by the tag that stamps their writes (`hlc.rs`), which each reports when asked
//! (`GET {peer}peerreplication/health-checks`). Java peers do not answer and check nothing.
//! While two nodes disagree on the set (a partition, the seconds after a death), an instance
//! may be probed by two nodes; their verdicts merge like any write (the later stamp wins).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::Instant;
use tokio::sync::watch;

use crate::replication::Replication;

/// How often each peer is asked whether it checks.
pub(crate) const ASK_EVERY: Duration = Duration::from_secs(1);
/// A peer unanswered this long no longer counts: its instances move to the others.
pub(crate) const LIVE_FOR: Duration = Duration::from_secs(3);

/// The node among `nodes` that checks `app/id`; `None` when there is none.
pub(crate) fn owner(nodes: &[u32], app: &str, id: &str) -> Option<u32> {
    nodes
        .iter()
        .copied()
        .max_by_key(|node| (score(*node, app, id), *node))
}

/// A hash every node computes alike, whatever its process or Rust version: FNV-1a over the
/// node and the names, then SplitMix64's finaliser to spread it.
pub(crate) fn score(node: u32, app: &str, id: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for byte in bytes {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    feed(&node.to_le_bytes());
    feed(app.as_bytes());
    feed(&[0]);
    feed(id.as_bytes());
    let mut z = hash.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What one peer last said, and when.
#[derive(Clone, Copy, Debug)]
struct Answer {
    node: u32,
    checking: bool,
    at: Instant,
}

/// The nodes that check, this one included when it does: asks every peer every
/// [`ASK_EVERY`] and publishes the set (sorted) whenever it changes.
pub(crate) async fn keep_checkers(
    replication: Arc<Replication>,
    own: u32,
    checking: bool,
    checkers: watch::Sender<Vec<u32>>,
) {
    let mut answers: HashMap<String, Answer> = HashMap::new();
    let mut timer = tokio::time::interval(ASK_EVERY);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        timer.tick().await;
        let peers = replication.peers();
        let mut asking = tokio::task::JoinSet::new();
        for peer in &peers {
            let client = replication.client().clone();
            let url = peer.url.clone();
            asking.spawn(async move { (url.as_str().to_owned(), client.ask_checker(&url).await) });
        }
        while let Some(Ok((url, answer))) = asking.join_next().await {
            if let Ok(Some((node, peer_checking))) = answer {
                let at = crate::clock::instant();
                let answer = Answer {
                    node,
                    checking: peer_checking,
                    at,
                };
                answers.insert(url, answer);
            }
        }
        let now = crate::clock::instant();
        answers.retain(|url, answer| {
            peers.iter().any(|peer| peer.url.as_str() == url) && now - answer.at < LIVE_FOR
        });
        let mut live: Vec<u32> = answers
            .values()
            .filter(|answer| answer.checking)
            .map(|answer| answer.node)
            .collect();
        if checking {
            live.push(own);
        }
        live.sort_unstable();
        live.dedup();
        checkers.send_if_modified(|current| {
            let changed = *current != live;
            if changed {
                tracing::info!(
                    checkers = live.len(),
                    "health checks shared by {} node(s)",
                    live.len()
                );
                *current = live;
            }
            changed
        });
    }
}

#[cfg(test)]
mod tests;
