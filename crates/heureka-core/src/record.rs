//! Recording a write: the one place every write (register, renew, cancel, status override set
//! or removed, metadata, eviction, a health verdict, a peer's copy) books its effect, as a
//! [`Change`] in the outbox, an item in the delta queue, the version counters and the status
//! counts. Nothing else in the registry touches the delta queue or the versions, so none of
//! them can disagree. The server empties the outbox after every write, under the same lock
//! ([`Registry::changes`], then [`Registry::take_changes`] or [`Registry::discard_changes`]),
//! and fans the changes out to replication and whatever else listens.

use crate::change::{Change, ChangeKind, Left, Read};
use crate::model::Millis;
use crate::origin::Origin;
use crate::registry::Registry;
use crate::stored::Name;
use crate::takeover::Takeover;

impl Registry {
    /// Marks the change just recorded (a client's registration) as a takeover.
    pub(crate) fn mark_takeover(&mut self, taken_over: Takeover) {
        if let Some(change) = self.outbox.last_mut() {
            change.takeover = Some(Box::new(taken_over));
        }
    }

    /// The one place a write's effect is recorded: the outbox, the delta queue (for visible
    /// changes), the version counters (which also count each application's instances) and
    /// the status counts.
    pub(crate) fn record(
        &mut self,
        kind: ChangeKind,
        app: &str,
        id: &str,
        origin: Origin,
        left: Left,
        now: Millis,
    ) {
        // What the change records of the instance, with the lease's own shared copies of the
        // names, when it is (or was) there; and the lease a removal took out.
        let (before, read, removed) = match left {
            Left::Registered { before } => (before, self.read(app, id), None),
            Left::Read { before, read } => (before, Some(read), None),
            Left::Removed(id_name, lease) => {
                let read = Read::of(&id_name, &lease);
                (Some(read.status), Some(read), Some((id_name, lease)))
            }
        };
        let after = match removed {
            Some(_) => None,
            None => read.as_ref().map(|read| read.status),
        };
        // The change names the application as the registry keys it, sharing the lease's copy
        // when they are spelled the same.
        let read = match read {
            Some(read) if *read.app == *app => read,
            Some(read) => Read {
                app: Name::from(app),
                ..read
            },
            None => Read::absent(app, id),
        };
        self.statuses.changed(before, after);
        self.outbox.push(Change {
            kind,
            app: read.app,
            id: read.id,
            origin,
            at: now,
            status: read.status,
            overridden_status: read.overridden_status,
            last_dirty_timestamp: read.last_dirty_timestamp,
            health: read.health,
            takeover: None,
        });
        if !kind.is_visible() {
            return;
        }
        match removed {
            Some((id_name, mut lease)) => {
                // The lease's own shared copies of app and id, for the delta queue to share.
                let app_name = Name::clone(&lease.holder.app);
                let earlier = lease.delta_seq.take();
                self.recently_changed
                    .push_deleted(app_name, id_name, earlier, lease, now);
            }
            None => self.queue_live(app, id, now),
        }
        let names = &mut self.names;
        self.versions
            .app_changed(app, before.is_some(), after.is_some(), || names.intern(app));
    }

    /// What a change records of `app`'s registered instance `id`; `None` if it is not held.
    fn read(&self, app: &str, id: &str) -> Option<Read> {
        let leases = self.apps.get(app)?;
        let (id_name, lease) = leases.get_key_value(id)?;
        Some(Read::of(id_name, lease))
    }

    /// Queues the live item of a visible change and tells the lease its number.
    fn queue_live(&mut self, app: &str, id: &str, now: Millis) {
        let stored = self
            .apps
            .get_mut(app)
            .and_then(|leases| leases.get_key_value_mut(id));
        let Some((id_name, lease)) = stored else {
            // Every visible change is to an instance the registry holds or has just removed.
            let (app, id) = (Name::from(app), Name::from(id));
            self.recently_changed.push_live(app, id, None, now);
            return;
        };
        // The lease's own shared copies of app and id, for the delta queue to share.
        let (app_name, id_name) = (Name::clone(&lease.holder.app), Name::clone(id_name));
        let seq = self
            .recently_changed
            .push_live(app_name, id_name, lease.delta_seq, now);
        lease.delta_seq = Some(seq);
    }

    /// Every change recorded since the outbox was last emptied, oldest first; the outbox is
    /// empty afterwards.
    pub fn take_changes(&mut self) -> Vec<Change> {
        std::mem::take(&mut self.outbox)
    }

    /// The changes recorded since the last take, oldest first, left in the outbox.
    pub fn changes(&self) -> &[Change] {
        &self.outbox
    }

    /// Empties the outbox, keeping its room: for a writer that needs none of the changes
    /// after [`Registry::changes`] (a heartbeat's, logged at debug level only), so that the
    /// next write's change needs no allocation.
    pub fn discard_changes(&mut self) {
        self.outbox.clear();
    }
}

#[cfg(test)]
mod tests;
