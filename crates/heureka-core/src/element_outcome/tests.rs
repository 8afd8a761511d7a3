//! The status codes of a replication batch's per-element answers, one rule each; the codes are
//! the wire's, so a change here breaks every peer.

use super::ElementOutcome::{self, Done, Failed, Full, Refused, SendYours, TakeOurs};
use crate::stamped_copy::StampedRenewal;

const ALL: [ElementOutcome; 6] = [Done, SendYours, TakeOurs, Refused, Full, Failed];

#[test]
fn each_outcome_has_the_code_peers_answer_it_with() {
    let codes: Vec<u16> = ALL.iter().map(|outcome| outcome.status()).collect();
    assert_eq!(codes, vec![200, 404, 409, 400, 403, 500]);
}

#[test]
fn every_code_answered_reads_back_as_its_outcome() {
    for outcome in ALL {
        assert_eq!(ElementOutcome::from_status(outcome.status()), Some(outcome));
    }
}

#[test]
fn any_2xx_read_back_is_done() {
    assert_eq!(ElementOutcome::from_status(204), Some(Done));
}

#[test]
fn a_code_no_receiver_answers_an_element_with_reads_as_none() {
    assert_eq!(ElementOutcome::from_status(302), None);
    assert_eq!(ElementOutcome::from_status(503), None);
}

#[test]
fn a_stamped_heartbeat_renewed_is_done_without_a_copy() {
    assert_eq!(StampedRenewal::Renewed.into_answer(), (Done, None));
}

#[test]
fn a_stamped_heartbeat_we_are_behind_on_asks_for_the_senders_copy() {
    assert_eq!(StampedRenewal::SendYours.into_answer(), (SendYours, None));
}
