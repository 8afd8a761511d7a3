//! An in-memory peer for the dispatcher's paused-time tests: it records every batch and
//! answers from a script (every element 200 when the script is empty). It plays a Java peer
//! (a stamped batch gets 404, as from a server without Heureka's endpoints) unless told to
//! speak stamps ([`FakePeer::speak_stamps`]), then a Heureka peer with its own script.

use std::collections::VecDeque;

use heureka_wire::{ReplicationItem, ReplicationResult, StampedItem, StampedResult};
use parking_lot::Mutex;

use super::PeerError;

/// How the fake answers one batch.
#[derive(Debug, Clone)]
pub(crate) enum Answer {
    /// Per element, in order.
    Results(Vec<ReplicationResult>),
    Fail(PeerError),
}

#[derive(Debug, Default)]
pub(crate) struct FakePeer {
    pub(crate) batches: Mutex<Vec<Vec<ReplicationItem>>>,
    pub(crate) script: Mutex<VecDeque<Answer>>,
    /// Whether it answers stamped batches (a Heureka peer) rather than 404.
    stamps: std::sync::atomic::AtomicBool,
    pub(crate) stamped_batches: Mutex<Vec<Vec<StampedItem>>>,
    pub(crate) stamped_script: Mutex<VecDeque<Vec<StampedResult>>>,
}

impl FakePeer {
    pub(crate) fn then(&self, answer: Answer) {
        self.script.lock().push_back(answer);
    }

    pub(crate) fn batches(&self) -> Vec<Vec<ReplicationItem>> {
        self.batches.lock().clone()
    }

    /// From now on, answers stamped batches as a Heureka peer.
    pub(crate) fn speak_stamps(&self) {
        self.stamps.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub(crate) fn then_stamped(&self, results: Vec<StampedResult>) {
        self.stamped_script.lock().push_back(results);
    }

    pub(crate) async fn answer_stamped(
        &self,
        items: &[StampedItem],
    ) -> Result<Vec<StampedResult>, PeerError> {
        if !self.stamps.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(PeerError::NotHeureka(
                "404 on POST peerreplication/stamped".to_owned(),
            ));
        }
        self.stamped_batches.lock().push(items.to_vec());
        let next = self.stamped_script.lock().pop_front();
        Ok(next.unwrap_or_else(|| vec![StampedResult::status(200); items.len()]))
    }

    pub(crate) async fn answer(
        &self,
        items: &[ReplicationItem],
    ) -> Result<Vec<ReplicationResult>, PeerError> {
        self.batches.lock().push(items.to_vec());
        let next = self.script.lock().pop_front();
        let all_ok = || Ok(vec![ReplicationResult::status(200); items.len()]);
        match next {
            None => all_ok(),
            Some(Answer::Results(results)) => Ok(results),
            Some(Answer::Fail(error)) => Err(error),
        }
    }
}
