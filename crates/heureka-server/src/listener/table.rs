//! The table of open connections: which wait for a request head, since when and until when,
//! and which to close when a new connection needs room. Pure bookkeeping under one lock; the
//! tasks in `listener.rs` act on what it says.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{self, Instant};
use parking_lot::Mutex;
use slab::Slab;
use tokio::sync::Notify;

/// The open connections and which of them wait for a request head, oldest wait first.
#[derive(Debug)]
pub(super) struct Table {
    max_connections: usize,
    /// Signalled when a place may have become free or a connection may be closed for room:
    /// the accept loop waits on it when the table is full.
    pub(super) room: Notify,
    /// A blocking mutex: every critical section is a few map operations, never an `.await`.
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Source of wait tickets. It only grows, so a smaller ticket is an older wait.
    next_ticket: u64,
    /// By id, the connection's key in the slab: looked up a few times per request, by index
    /// rather than by hash. A closed connection's key is reused by a later one, which is
    /// sound because no wait outlives its connection: a stale `waiting` entry names a ticket
    /// the new connection never held.
    connections: Slab<Entry>,
    /// `(ticket, id)` of each wait as it began, oldest first: the first still current is the
    /// one to close for room. A wait that ends (a request head arrives, the connection goes)
    /// is not looked for here: its entry goes stale, since the connection's phase no longer
    /// holds its ticket, and is dropped when met or when stale entries outnumber the
    /// connections. Two map operations per request were a twentieth of a heartbeat's
    /// instructions; a push at the back is next to nothing.
    waiting: VecDeque<(u64, usize)>,
    /// Connections told to close that have not closed yet; they no longer count against the
    /// limit.
    closing: usize,
}

#[derive(Debug)]
struct Entry {
    phase: Phase,
    /// Whether its task has read what the client sent so far. Until then a head may be sitting
    /// unread in the socket, so the connection is not closed for room: under a flood of new
    /// connections, a real client would otherwise be closed before it was ever looked at.
    examined: bool,
    wake: Arc<Notify>,
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for a complete request head until `deadline`; `ticket` orders the waits.
    Waiting { ticket: u64, deadline: Instant },
    /// A request is being read, handled or answered.
    Busy,
    /// An event stream is being answered; its client has stopped reading unless hyper takes
    /// from it again before `stalled_at`.
    Streaming { stalled_at: Instant },
    /// Told to close to make room.
    Closing,
}

impl Table {
    pub(super) fn new(max_connections: usize) -> Table {
        Table {
            max_connections,
            room: Notify::new(),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Takes a new connection, closing the longest-waiting examined one when at the limit
    /// (and saying so). `None` when the limit is reached and no connection can be closed.
    pub(super) fn admit(
        self: &Arc<Self>,
        connection_timeout: Duration,
    ) -> Option<(Arc<Slot>, bool)> {
        let mut inner = self.inner.lock();
        let mut evicted = false;
        if inner.connections.len() - inner.closing >= self.max_connections {
            if !inner.close_longest_waiting() {
                return None;
            }
            evicted = true;
        }
        let wake = Arc::new(Notify::new());
        let id = inner.connections.insert(Entry {
            phase: Phase::Busy,
            examined: false,
            wake: Arc::clone(&wake),
        });
        inner.wait(id, clock::instant() + connection_timeout);
        let slot = Slot {
            table: Arc::clone(self),
            id,
            wake,
        };
        Some((Arc::new(slot), evicted))
    }

    pub(super) fn close_longest_waiting(&self) -> bool {
        self.inner.lock().close_longest_waiting()
    }
}

impl Inner {
    fn next(&mut self) -> u64 {
        self.next_ticket += 1;
        self.next_ticket
    }

    /// The busy connection `id` begins to wait for a head until `deadline`; false (and nothing
    /// changes) if it is not busy. One look-up: this runs for every response.
    fn wait(&mut self, id: usize, deadline: Instant) -> bool {
        // Taken first, while nothing is borrowed; a ticket left unused only leaves a gap.
        let ticket = self.next();
        let Some(entry) = self.connections.get_mut(id) else {
            return false;
        };
        if !matches!(entry.phase, Phase::Busy | Phase::Streaming { .. }) {
            return false;
        }
        entry.phase = Phase::Waiting { ticket, deadline };
        self.waiting.push_back((ticket, id));
        if self.waiting.len() > 2 * self.connections.len() + STALE_WAITS_KEPT {
            let connections = &self.connections;
            self.waiting
                .retain(|&(ticket, id)| is_current(connections, ticket, id));
        }
        true
    }

    /// Closes the examined connection that has waited longest. The unexamined are the newest,
    /// at the end of the list, and stale entries are at most about twice the connections, so
    /// the search is short.
    fn close_longest_waiting(&mut self) -> bool {
        let connections = &self.connections;
        while let Some(&(ticket, id)) = self.waiting.front() {
            if is_current(connections, ticket, id) {
                break;
            }
            self.waiting.pop_front();
        }
        let found = self.waiting.iter().position(|&(ticket, id)| {
            is_current(connections, ticket, id) && connections[id].examined
        });
        let Some((_, id)) = found.and_then(|at| self.waiting.remove(at)) else {
            return false;
        };
        let entry = self
            .connections
            .get_mut(id)
            .expect("waiting connections are open");
        entry.phase = Phase::Closing;
        entry.wake.notify_one();
        self.closing += 1;
        true
    }

    /// Takes the connection out of the closing count if it is in it. (Its entry in the
    /// waiting list, if it was waiting, has gone stale with the phase.)
    fn leave(&mut self, phase: Phase) {
        if let Phase::Closing = phase {
            self.closing -= 1;
        }
    }
}

/// Stale waits tolerated beyond two per connection before they are swept: a handful, so a
/// table of few connections is not swept at every response.
const STALE_WAITS_KEPT: usize = 64;

/// Whether the wait `ticket` of connection `id` is still going on.
fn is_current(connections: &Slab<Entry>, ticket: u64, id: usize) -> bool {
    connections.get(id).is_some_and(
        |entry| matches!(entry.phase, Phase::Waiting { ticket: current, .. } if current == ticket),
    )
}

/// One connection's place in the table, shared by its task, its service and its response
/// bodies; it leaves the table when the last of them is gone.
#[derive(Debug)]
pub(super) struct Slot {
    table: Arc<Table>,
    id: usize,
    /// Wakes the connection's task to look at its phase: on eviction. (A wait that begins
    /// needs no wake: see `serve_connection`.)
    pub(super) wake: Arc<Notify>,
}

/// What a connection's task should do about its phase.
pub(super) enum Deadline {
    /// Its wait is over, or it was told to close for room.
    CloseNow,
    /// It waits for a request head until then (idle, or with part of a head).
    Waiting(Instant),
    /// It answers an event stream, whose client is taken to have stopped reading unless it
    /// takes more before then.
    Streaming(Instant),
    /// Its event stream's client stopped reading.
    Stalled,
    /// A request is in progress: no deadline until its response is handed over.
    Busy,
}

impl Slot {
    /// A request head arrived. A connection told to close whose head arrived before it could
    /// is served all the same: eviction is for the idle, and the limit is exceeded by one
    /// for a moment.
    pub(super) fn begin_request(&self) {
        let mut inner = self.table.inner.lock();
        let inner = &mut *inner;
        // One look-up: this runs for every request.
        let Some(entry) = inner.connections.get_mut(self.id) else {
            return;
        };
        let phase = std::mem::replace(&mut entry.phase, Phase::Busy);
        inner.leave(phase);
    }

    /// Its task has read what the client sent so far.
    pub(super) fn examined(&self) {
        if let Some(entry) = self.table.inner.lock().connections.get_mut(self.id) {
            entry.examined = true;
        }
        self.table.room.notify_one();
    }

    /// The response is an event stream, which hyper must take from within `stall_after` of
    /// each time it did. Wakes the task, whose timer was set as for any busy connection.
    pub(super) fn begin_stream(&self, stall_after: Duration) {
        self.stream_polled(stall_after);
        self.wake.notify_one();
    }

    /// Hyper asked the event stream for more: its client is reading.
    pub(super) fn stream_polled(&self, stall_after: Duration) {
        let mut inner = self.table.inner.lock();
        if let Some(entry) = inner.connections.get_mut(self.id) {
            if matches!(entry.phase, Phase::Busy | Phase::Streaming { .. }) {
                entry.phase = Phase::Streaming {
                    stalled_at: clock::instant() + stall_after,
                };
            }
        }
    }

    /// The response was handed to hyper: the wait for the next head begins. The accept loop
    /// is told only when the table is full, the one time it waits for room: under the limit,
    /// the word would be a lock and a permit at every response for nobody.
    pub(super) fn end_response(&self, keep_alive: Duration) {
        let mut inner = self.table.inner.lock();
        if inner.wait(self.id, clock::instant() + keep_alive)
            && inner.connections.len() - inner.closing >= self.table.max_connections
        {
            drop(inner);
            self.table.room.notify_one();
        }
    }

    pub(super) fn deadline(&self, now: Instant) -> Deadline {
        let inner = self.table.inner.lock();
        match inner.connections.get(self.id).map(|entry| entry.phase) {
            Some(Phase::Waiting { deadline, .. }) if deadline > now => Deadline::Waiting(deadline),
            Some(Phase::Streaming { stalled_at }) if stalled_at > now => {
                Deadline::Streaming(stalled_at)
            }
            Some(Phase::Streaming { .. }) => Deadline::Stalled,
            Some(Phase::Busy) => Deadline::Busy,
            _ => Deadline::CloseNow,
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut inner = self.table.inner.lock();
        if let Some(entry) = inner.connections.try_remove(self.id) {
            inner.leave(entry.phase);
        }
        drop(inner);
        self.table.room.notify_one();
    }
}

#[cfg(test)]
mod tests;
