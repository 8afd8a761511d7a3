//! The connection table's rules, without sockets: who is closed for room, and when.

use super::*;

const TIMEOUT: Duration = Duration::from_secs(20);

/// A new connection, examined (its task has read what it sent, and found no complete head).
fn admitted(table: &Arc<Table>) -> Arc<Slot> {
    let (slot, _) = table.admit(TIMEOUT).expect("room");
    slot.examined();
    slot
}

fn closes_now(slot: &Slot) -> bool {
    matches!(slot.deadline(Instant::now()), Deadline::CloseNow)
}

#[test]
fn under_the_limit_nobody_is_closed() {
    let table = Arc::new(Table::new(2));
    let first = admitted(&table);
    let second = admitted(&table);
    assert!(!closes_now(&first));
    assert!(!closes_now(&second));
}

#[test]
fn at_the_limit_the_longest_waiting_connection_is_closed() {
    let table = Arc::new(Table::new(2));
    let oldest = admitted(&table);
    let newer = admitted(&table);
    let (newest, evicted) = table.admit(TIMEOUT).expect("room");
    assert!(evicted);
    assert!(closes_now(&oldest));
    assert!(!closes_now(&newer));
    assert!(!closes_now(&newest));
}

#[test]
fn a_connection_with_a_request_in_progress_is_never_closed_for_room() {
    let table = Arc::new(Table::new(2));
    let busy = admitted(&table);
    busy.begin_request();
    let waiting = admitted(&table);
    let _newest = admitted(&table);
    assert!(!closes_now(&busy));
    assert!(closes_now(&waiting));
}

#[test]
fn when_every_connection_is_busy_there_is_no_room() {
    let table = Arc::new(Table::new(1));
    let busy = admitted(&table);
    busy.begin_request();
    assert!(table.admit(TIMEOUT).is_none());
}

#[test]
fn a_kept_alive_connection_waits_again_from_the_end_of_its_response() {
    let table = Arc::new(Table::new(2));
    let kept_alive = admitted(&table);
    let fresh = admitted(&table);
    kept_alive.begin_request();
    kept_alive.end_response(Duration::from_secs(60));
    // Its wait began after `fresh`'s, so `fresh` has waited longest.
    let _newest = admitted(&table);
    assert!(closes_now(&fresh));
    assert!(!closes_now(&kept_alive));
}

#[test]
fn a_wait_past_its_deadline_closes_the_connection() {
    let table = Arc::new(Table::new(1));
    let slot = admitted(&table);
    assert!(matches!(
        slot.deadline(Instant::now() + TIMEOUT),
        Deadline::CloseNow
    ));
    slot.begin_request();
    assert!(matches!(
        slot.deadline(Instant::now() + TIMEOUT),
        Deadline::Busy
    ));
}

#[test]
fn a_connection_closed_for_room_whose_request_arrived_first_is_served() {
    let table = Arc::new(Table::new(1));
    let evicted = admitted(&table);
    let _newest = admitted(&table);
    evicted.begin_request();
    assert!(!closes_now(&evicted));
}

#[test]
fn closed_connections_free_their_place() {
    let table = Arc::new(Table::new(1));
    let first = admitted(&table);
    first.begin_request();
    drop(first);
    let second = admitted(&table);
    second.begin_request();
    // Only `second` is open, and busy: there is no room, not a place taken by a ghost.
    assert!(table.admit(TIMEOUT).is_none());
    assert!(table.inner.lock().connections.len() == 1);
}

#[test]
fn a_connection_told_to_close_no_longer_counts_against_the_limit() {
    let table = Arc::new(Table::new(1));
    let _evicted = admitted(&table);
    let second = admitted(&table);
    second.begin_request();
    // `_evicted` has not closed yet, but its place is `second`'s: no one else is closed.
    assert!(table.admit(TIMEOUT).is_none());
}

#[test]
fn a_connection_not_yet_examined_is_not_closed_for_room() {
    let table = Arc::new(Table::new(1));
    let (unexamined, _) = table.admit(TIMEOUT).expect("room");
    assert!(table.admit(TIMEOUT).is_none());
    assert!(!closes_now(&unexamined));
}

#[test]
fn the_waits_that_ended_do_not_pile_up_under_kept_alive_requests() {
    let table = Arc::new(Table::new(4));
    let slots: Vec<_> = (0..3).map(|_| admitted(&table)).collect();
    for _ in 0..10_000 {
        for slot in &slots {
            slot.begin_request();
            slot.end_response(TIMEOUT);
        }
    }
    let waits = table.inner.lock().waiting.len();
    assert!(
        waits <= 2 * slots.len() + STALE_WAITS_KEPT + 1,
        "{waits} waits kept"
    );
}

#[test]
fn after_many_requests_the_connection_idle_longest_is_still_the_one_closed() {
    let table = Arc::new(Table::new(3));
    let idle = admitted(&table);
    let busy_then_idle = admitted(&table);
    let kept_alive = admitted(&table);
    for _ in 0..1_000 {
        kept_alive.begin_request();
        kept_alive.end_response(TIMEOUT);
    }
    busy_then_idle.begin_request();
    busy_then_idle.end_response(TIMEOUT);
    let _newest = admitted(&table);
    assert!(closes_now(&idle));
    assert!(!closes_now(&busy_then_idle));
    assert!(!closes_now(&kept_alive));
    let _next = admitted(&table);
    assert!(
        closes_now(&kept_alive),
        "its last wait began before the other's"
    );
    assert!(!closes_now(&busy_then_idle));
}

#[test]
fn a_connection_in_a_closed_ones_place_does_not_inherit_its_wait() {
    let table = Arc::new(Table::new(3));
    let first = admitted(&table);
    let second = admitted(&table);
    // Its place in the table is taken by the next connection; its wait, the oldest, is over.
    drop(first);
    let in_its_place = admitted(&table);
    let _third = admitted(&table);
    let (_fourth, evicted) = table.admit(TIMEOUT).expect("room");
    assert!(evicted);
    assert!(
        closes_now(&second),
        "the longest wait still going on is the second's"
    );
    assert!(!closes_now(&in_its_place));
}
