//! An in-memory peer for the dispatcher's paused-time tests: it records every batch and
//! answers from a script (every element 200 when the script is empty). It plays a Java peer:
//! a stamped batch gets 404, as from a server without Heureka's endpoints.

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
}

impl FakePeer {
    pub(crate) fn then(&self, answer: Answer) {
        self.script.lock().push_back(answer);
    }

    pub(crate) fn batches(&self) -> Vec<Vec<ReplicationItem>> {
        self.batches.lock().clone()
    }

    pub(crate) async fn answer_stamped(
        &self,
        _items: &[StampedItem],
    ) -> Result<Vec<StampedResult>, PeerError> {
        Err(PeerError::NotHeureka(
            "404 on POST peerreplication/stamped".to_owned(),
        ))
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
