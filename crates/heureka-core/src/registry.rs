//! The registry: applications → instances → leases, and the writes clients and peers make to
//! it (register, renew, cancel, status overrides, metadata).
//!
//! Eureka's `AbstractInstanceRegistry` and `PeerAwareInstanceRegistryImpl`, minus replication,
//! caching and timers, which belong to the server. Reads live in `reads.rs`, eviction in
//! `eviction.rs`, self-preservation in `self_preservation.rs`; the public
//! policy and outcome types in `policy.rs` and `outcomes.rs`.

use std::borrow::Cow;

use crate::change::{Change, ChangeKind, Left};
use crate::delta::{RecentlyChanged, StatusCounts};
use crate::health::{with_health, Health};
use crate::hlc::Hlc;
use crate::lease::Lease;
use crate::limits::Limits;
use crate::maps::{HashMap, LeaseMap};
use crate::merge::status_of;
use crate::model::{ActionType, Instance, InstanceStatus, Millis};
pub use crate::outcomes::{EvictionReport, RenewOutcome, SelfPreservation};
use crate::peer_copies::{adopted_override, OverrideAdoption, PeerOverrideAbsence};
pub use crate::policy::{Origin, RegistryPolicy};
use crate::registration::InvalidRegistration;
use crate::self_preservation::RenewalCounters;
use crate::status_rules::{effective_status, OverrideMap, StatusInput};
use crate::stored::{Interner, Name, StoredInstance};
use crate::takeover::{takeover, Takeover};
use crate::tombstones::{Removal, Tombstone, Tombstones};
use crate::versions::Versions;

/// Leases by upper-cased app name, then by case-sensitive instance id.
pub(crate) type Leases = HashMap<String, LeaseMap>;

/// The registry: applications → instances → leases, plus the delta queue and the
/// self-preservation counters.
#[derive(Debug)]
pub struct Registry {
    pub(crate) policy: RegistryPolicy,
    /// Apps stay in the map when their last lease goes, as in Eureka; reads skip empty ones.
    pub(crate) apps: Leases,
    pub(crate) overrides: OverrideMap,
    pub(crate) recently_changed: RecentlyChanged,
    pub(crate) renewals: RenewalCounters,
    /// See [`Registry::version`] and [`Registry::application_versions`]; also counts each
    /// application's instances.
    pub(crate) versions: Versions,
    /// The answering server's own instance id, for `isCoordinatingDiscoveryServer`.
    pub(crate) own_instance_id: Option<String>,
    /// Changes recorded since the caller last took them ([`Registry::take_changes`]).
    pub(crate) outbox: Vec<Change>,
    /// The strings stored instances share; see `stored.rs`.
    pub(crate) names: Interner,
    /// Instances per status, for `apps__hashcode`; kept by [`Registry::record`].
    pub(crate) statuses: StatusCounts,
    /// Stamps every write made here (`hlc.rs`), and moves past every stamp a peer sends.
    pub(crate) clock: Hlc,
    /// What is kept of removed instances (`tombstones.rs`).
    pub(crate) tombstones: Tombstones,
    /// Peers' copies of new instances refused for want of room since the caller last took
    /// the count ([`Registry::take_copies_refused_for_room`]).
    pub(crate) copies_refused_for_room: u64,
}

/// Which parts of an instance a registration writes (`merge.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stamping {
    /// A client's registration, or a Java peer's copy of one: the document and the status.
    Registration,
    /// A metadata update: the document only.
    Document,
}

impl Registry {
    /// An empty registry with E = `expected_number_of_clients_sending_renews`, as Spring's
    /// `InstanceRegistry` starts. Nothing here depends on the creation time.
    pub fn new(policy: RegistryPolicy, now: Millis) -> Registry {
        let _ = now;
        Registry {
            renewals: RenewalCounters::new(&policy),
            policy,
            apps: HashMap::default(),
            overrides: OverrideMap::default(),
            recently_changed: RecentlyChanged::default(),
            versions: Versions::default(),
            own_instance_id: None,
            outbox: Vec::new(),
            names: Interner::default(),
            statuses: StatusCounts::default(),
            clock: Hlc::new(0),
            tombstones: Tombstones::default(),
            copies_refused_for_room: 0,
        }
    }

    /// Tags this server's writes, so that no other server's write carries an equal stamp
    /// (`hlc.rs`). Call before the first write; a random number per process will do.
    pub fn set_node_tag(&mut self, tag: u32) {
        self.clock = Hlc::new(tag);
    }

    /// Tells the registry which instance is the answering server itself, so reads mark it
    /// `isCoordinatingDiscoveryServer` (Eureka's `decorateInstanceInfo`).
    pub fn set_own_instance_id(&mut self, id: Option<String>) {
        self.own_instance_id = id;
    }

    /// The answering server's own instance id, when it registers itself.
    pub fn own_instance_id(&self) -> Option<&str> {
        self.own_instance_id.as_deref()
    }

    /// The limits in force (`limits.rs`), for the checks made before the lock.
    pub fn limits(&self) -> &Limits {
        &self.policy.limits
    }

    /// Whether registering `app/id` now would stay within `max-instances`: a re-register
    /// always does, a new instance only while the registry holds fewer. Call under the same
    /// write as the register it guards.
    pub fn check_room(&self, app: &str, id: &str) -> Result<(), InvalidRegistration> {
        let held = self
            .apps
            .get(app_key(app).as_ref())
            .is_some_and(|leases| leases.contains_key(id));
        let max = self.policy.limits.max_instances;
        if held || self.registry_size() < max {
            Ok(())
        } else {
            Err(InvalidRegistration::RegistryFull { max })
        }
    }

    /// Whether a peer's copy may add `app/id` here: the same room a client's registration
    /// needs ([`Registry::check_room`]), so that no path, anti-entropy's repairs and the
    /// start-up sync included, grows the registry beyond `max-instances`. An instance held
    /// already always has room: its updates, overrides and removals are never refused. A
    /// refusal is counted for the caller to report ([`Registry::take_copies_refused_for_room`]);
    /// the copy is taken by a later exchange once room is made.
    pub(crate) fn room_for_peer_copy(&mut self, app: &str, id: &str) -> bool {
        let room = self.check_room(app, id).is_ok();
        if !room {
            self.copies_refused_for_room += 1;
        }
        room
    }

    /// How many peers' copies of new instances were refused for want of room
    /// (`max-instances`) since the last call: the server logs them as it logs a client's
    /// refused registration.
    pub fn take_copies_refused_for_room(&mut self) -> u64 {
        std::mem::take(&mut self.copies_refused_for_room)
    }

    /// Register or re-register (§6.3). The instance has been validated by the caller.
    pub fn register(&mut self, instance: Instance, origin: Origin, now: Millis) {
        let stamping = Stamping::Registration;
        self.register_as(ChangeKind::Registered, instance, origin, stamping, now);
    }

    /// Register, recorded as `kind` (a metadata update is a register in Eureka), stamping the
    /// parts `stamping` says.
    fn register_as(
        &mut self,
        kind: ChangeKind,
        instance: Instance,
        origin: Origin,
        stamping: Stamping,
        now: Millis,
    ) {
        let mut incoming = instance;
        incoming.app = app_key(&incoming.app).into_owned();
        // Whatever path the instance came by, no longer lease is stored; the entry points
        // warn about a shortened one (`validate_registration`).
        let _ = self.policy.limits.lease_terms(&mut incoming.lease_info);
        let app = incoming.app.clone();
        let id = incoming.id().to_owned();

        let existing = self
            .apps
            .get_mut(&app)
            .and_then(|leases| leases.remove_entry(id.as_str()));
        let taken_over = match (&existing, origin, kind) {
            (Some((_, lease)), Origin::Client, ChangeKind::Registered) => {
                takeover(lease, &incoming, now)
            }
            _ => None,
        };
        // The id's shared copy survives a re-register, so its delta-queue item keeps sharing it.
        let (key, existing) = match existing {
            Some((key, lease)) => (key, Some(lease)),
            None => (Name::from(id.as_str()), None),
        };
        if existing.is_none() {
            self.renewals.client_registered(&self.policy);
        }
        let existing_status = existing.as_ref().map(|lease| lease.holder.status);
        let service_up = existing.as_ref().map(Lease::service_up_timestamp);
        let delta_seq = existing.as_ref().and_then(|lease| lease.delta_seq);
        // What is known of the instance's parts: its lease, or what its removal left.
        let removed = match existing {
            Some(_) => None,
            None => self.tombstones.remove(&app, &id),
        };
        let (prior_stamps, prior_own, prior_override, prior_health) = match (&existing, &removed) {
            (Some(lease), _) => (
                lease.holder.stamps,
                lease.holder.own_status,
                as_override(lease.holder.overridden_status),
                lease.holder.health,
            ),
            (None, Some(tombstone)) => (
                tombstone.parts.stamps,
                tombstone.parts.own_status,
                tombstone.parts.overridden,
                tombstone.parts.health,
            ),
            (None, None) => (
                Default::default(),
                InstanceStatus::Unknown,
                None,
                Health::Passing,
            ),
        };
        if let (Some(kept), None) = (prior_override, &existing) {
            // An evicted instance comes back with the override it had (`tombstones.rs`).
            if self.overrides.get(&id, now).is_none() {
                self.overrides.insert(&id, kept, now);
            }
        }
        // A register carrying older data than we hold keeps our instance: strictly newer
        // wins, so on equal timestamps the incoming copy replaces ours.
        let at = self.clock.tick(now);
        let mut holder = match existing {
            Some(lease) if lease.holder.last_dirty_timestamp > incoming.last_dirty_timestamp => {
                *lease.holder
            }
            _ => {
                let own = incoming.status;
                let mut holder = StoredInstance::new(incoming, &mut self.names);
                holder.stamps = prior_stamps;
                holder.stamps.registration = at;
                // A registration does not clear a verdict: only the checks do (`health.rs`).
                holder.health = prior_health;
                holder.own_status = prior_own;
                if stamping == Stamping::Registration {
                    holder.own_status = own;
                    holder.stamps.status = at;
                }
                holder
            }
        };

        // The override in force is the one held here; an override the instance carries (a
        // Java peer's register) seeds it when there is none, as in Eureka.
        let mut overridden = prior_override;
        if let (None, Some(carried)) = (overridden, as_override(holder.overridden_status)) {
            overridden = Some(carried);
            holder.stamps.overridden = at;
        }
        if let Some(status) = overridden {
            self.overrides.insert(&id, status, now);
        }
        holder.overridden_status = overridden.unwrap_or(InstanceStatus::Unknown);
        holder.status = status_of(holder.own_status, overridden, holder.health, &holder.stamps);
        holder.action_type = Some(ActionType::Added);
        holder.last_updated_timestamp = now;

        let mut lease = Lease::new(holder, self.policy.lease_expiry, now);
        lease.delta_seq = delta_seq;
        if let Some(service_up) = service_up {
            lease.inherit_service_up(service_up);
        }
        if lease.holder.status == InstanceStatus::Up {
            lease.service_up(now);
        }
        self.apps.entry(app.clone()).or_default().insert(key, lease);
        self.record(
            kind,
            &app,
            &id,
            origin,
            Left::Registered {
                before: existing_status,
            },
            now,
        );
        if let Some(taken_over) = taken_over {
            self.mark_takeover(taken_over);
        }
    }

    /// Whether a client registering `instance` now would take over a live instance at
    /// another endpoint (`takeover.rs`): what a server refusing takeovers asks before it
    /// registers.
    pub fn takeover_by(&self, instance: &Instance, now: Millis) -> Option<Takeover> {
        let lease = self
            .apps
            .get(app_key(&instance.app).as_ref())?
            .get(instance.id())?;
        takeover(lease, instance, now)
    }

    /// Heartbeat (§6.4 + the lastDirtyTimestamp rules of §3.9).
    ///
    /// The lease is renewed before the dirty-timestamp comparison, so it is renewed even when
    /// the outcome asks for a re-register or a conflict (Eureka's `InstanceResource.renewLease`).
    pub fn renew(
        &mut self,
        app: &str,
        id: &str,
        last_dirty_timestamp: Option<Millis>,
        overridden_status: Option<InstanceStatus>,
        origin: Origin,
        now: Millis,
    ) -> RenewOutcome {
        let app = app_key(app);
        let Some(lease) = self
            .apps
            .get_mut(app.as_ref())
            .and_then(|leases| leases.get_mut(id))
        else {
            return RenewOutcome::NotFound;
        };
        let stored_status = lease.holder.status;
        let input = StatusInput {
            own: stored_status,
            existing: Some(stored_status),
            origin,
        };
        let overrides = &mut self.overrides;
        let (status, _) = effective_status(input, || overrides.get(id, now));
        if status == InstanceStatus::Unknown {
            // A deleted override leaves UNKNOWN behind; 404 makes the client re-register.
            return RenewOutcome::NotFound;
        }
        if status != stored_status {
            // Eureka flips the status silently (no delta item, no cache invalidation), which
            // clients only notice through the hash. We record it as a MODIFIED change.
            lease.holder.status = status;
            lease.holder.action_type = Some(ActionType::Modified);
            lease.holder.last_updated_timestamp = now;
            if status == InstanceStatus::Up {
                lease.service_up(now);
            }
        }
        let mut kind = if status != stored_status {
            ChangeKind::StatusChanged
        } else {
            ChangeKind::Renewed
        };
        self.renewals.count_renew();
        lease.renew(now);

        let stored_dirty = lease.holder.last_dirty_timestamp;
        let outcome = match last_dirty_timestamp {
            Some(incoming) if incoming > stored_dirty => {
                let peer_override =
                    overridden_status.filter(|status| *status != InstanceStatus::Unknown);
                if let (Origin::Peer, Some(overridden)) = (origin, peer_override) {
                    // Eureka's `storeOverriddenStatusIfRequired`: the peer knows an override we
                    // do not; keep it so the re-register that follows honours it.
                    if self.overrides.get(id, now) != Some(overridden) {
                        self.overrides.insert(id, overridden, now);
                        lease.holder.overridden_status = overridden;
                        lease.holder.stamps.overridden = self.clock.tick(now);
                        kind = ChangeKind::StatusOverridden;
                    }
                }
                RenewOutcome::ClientNewer
            }
            Some(incoming) if incoming < stored_dirty && origin == Origin::Peer => {
                RenewOutcome::RegistryNewer(Box::new(decorate(
                    lease,
                    self.own_instance_id.as_deref(),
                )))
            }
            _ => RenewOutcome::Renewed,
        };
        let before = Some(stored_status);
        self.record(kind, &app, id, origin, Left::Registered { before }, now);
        outcome
    }

    /// Cancel (§6.5). False when there was no such lease.
    pub fn cancel(&mut self, app: &str, id: &str, origin: Origin, now: Millis) -> bool {
        // Cancels from clients and peers are applied alike; only replication differs.
        self.remove_lease(ChangeKind::Cancelled, &app_key(app), id, origin, now)
    }

    /// `statusUpdate` (§6.7). False when unknown (404) — including expired-not-evicted leases.
    pub fn set_status_override(
        &mut self,
        app: &str,
        id: &str,
        status: InstanceStatus,
        last_dirty_timestamp: Option<Millis>,
        origin: Origin,
        now: Millis,
    ) -> bool {
        let app = app_key(app);
        let expiration_enabled = self.lease_expiration_enabled();
        let Some(lease) = visible_lease_mut(&mut self.apps, &app, id, now, expiration_enabled)
        else {
            return false;
        };
        // Eureka renews here but does not count it towards renewsLastMin.
        lease.renew(now);
        if lease.holder.status == status {
            if as_override(lease.holder.overridden_status) == Some(status) {
                // In force already, but this write is the operator's latest: a removal made
                // elsewhere and not yet seen here must not outlive it (`merge.rs`).
                lease.holder.stamps.overridden = self.clock.tick(now);
                let (kind, before) = (ChangeKind::Restamped, Some(status));
                self.record(kind, &app, id, origin, Left::Registered { before }, now);
            }
            // Otherwise nothing is recorded, not even an override: setting UP on an UP
            // instance is a no-op, as in Eureka.
            return true;
        }
        let before = Some(lease.holder.status);
        if status == InstanceStatus::Up {
            lease.service_up(now);
        }
        self.overrides.insert(id, status, now);
        let holder = &mut lease.holder;
        holder.overridden_status = status;
        holder.status = status;
        holder.stamps.overridden = self.clock.tick(now);
        mark_modified(holder, last_dirty_timestamp, now);
        self.record(
            ChangeKind::StatusOverridden,
            &app,
            id,
            origin,
            Left::Registered { before },
            now,
        );
        true
    }

    /// `deleteStatusOverride` (§6.7). `new_status` None means UNKNOWN.
    ///
    /// With UNKNOWN (what real clients send) the next heartbeat gets 404 and the client
    /// re-registers with its real status.
    pub fn delete_status_override(
        &mut self,
        app: &str,
        id: &str,
        new_status: Option<InstanceStatus>,
        last_dirty_timestamp: Option<Millis>,
        origin: Origin,
        now: Millis,
    ) -> bool {
        let app = app_key(app);
        let expiration_enabled = self.lease_expiration_enabled();
        let Some(lease) = visible_lease_mut(&mut self.apps, &app, id, now, expiration_enabled)
        else {
            return false;
        };
        lease.renew(now);
        let held = self.overrides.remove(id, now).is_some();
        if !held && as_override(lease.holder.overridden_status).is_none() {
            // Nothing to remove here, which Eureka answers with a no-op. The removal is still
            // the operator's latest write: an override set elsewhere and not yet seen here must
            // not outlive it (`merge.rs`). The instance's own status is left as it is.
            lease.holder.stamps.overridden = self.clock.tick(now);
            let before = Some(lease.holder.status);
            let kind = ChangeKind::Restamped;
            self.record(kind, &app, id, origin, Left::Registered { before }, now);
            return true;
        }
        let holder = &mut lease.holder;
        let before = Some(holder.status);
        holder.overridden_status = InstanceStatus::Unknown;
        // The removal sets the instance's own status too (`Parts::remove_override`), which a
        // failing health check still reads as DOWN.
        holder.own_status = new_status.unwrap_or(InstanceStatus::Unknown);
        holder.status = with_health(holder.own_status, None, holder.health);
        let at = self.clock.tick(now);
        holder.stamps.overridden = at;
        holder.stamps.status = at;
        mark_modified(holder, last_dirty_timestamp, now);
        self.record(
            ChangeKind::StatusOverrideRemoved,
            &app,
            id,
            origin,
            Left::Registered { before },
            now,
        );
        true
    }

    /// Merge metadata in place, then re-register the stored instance (§3.13). False when
    /// unknown; refused, changing nothing, when the merged metadata is over the limits.
    ///
    /// The first value of a repeated key wins, as Eureka reads only `values[0]`.
    /// `lastDirtyTimestamp` is not bumped, so the client's next re-register overwrites this.
    pub fn update_metadata(
        &mut self,
        app: &str,
        id: &str,
        entries: Vec<(String, String)>,
        now: Millis,
    ) -> Result<bool, InvalidRegistration> {
        let app = app_key(app);
        let expiration_enabled = self.lease_expiration_enabled();
        let Some(lease) = visible_lease_mut(&mut self.apps, &app, id, now, expiration_enabled)
        else {
            return Ok(false);
        };
        let mut instance = lease.holder.to_instance();
        let mut seen: Vec<&str> = Vec::with_capacity(entries.len());
        for (key, value) in &entries {
            if !seen.contains(&key.as_str()) {
                seen.push(key);
                instance.metadata.insert(key.clone(), value.clone());
            }
        }
        self.policy.limits.check_metadata(&instance.metadata)?;
        let stamping = Stamping::Document;
        self.register_as(
            ChangeKind::MetadataUpdated,
            instance,
            Origin::Client,
            stamping,
            now,
        );
        Ok(true)
    }

    /// Takes a peer's copy of an instance as ours: Eureka's answer to a replicated heartbeat's
    /// 409 (`syncWhenTimestampDiffers`). The peer's override, when it has one, is stored
    /// first, so the register that follows honours it; ours stays when it has none
    /// (`PeerOverrideAbsence::KeepsOurs`). The write is a peer's, so it is never replicated
    /// back.
    pub fn adopt_peer_copy(&mut self, instance: Instance, now: Millis) {
        self.adopt(instance, PeerOverrideAbsence::KeepsOurs, now);
    }

    /// Anti-entropy's repair: takes a peer's newer copy as ours, its override or the absence of
    /// one included (`PeerOverrideAbsence::RemovesOurs`). A peer's write, never replicated back.
    pub fn repair_from_peer(&mut self, instance: Instance, now: Millis) {
        self.adopt(instance, PeerOverrideAbsence::RemovesOurs, now);
    }

    /// Adoption, with the override rule of `peer_copies.rs`.
    fn adopt(&mut self, instance: Instance, absence: PeerOverrideAbsence, now: Millis) {
        if self.policy.limits.check_instance(&instance).is_err() {
            // A copy no request could have registered here is not taken from a peer either.
            return;
        }
        if !self.room_for_peer_copy(&instance.app, instance.id()) {
            return;
        }
        // The stored copy carries the override in force (the map's entry), without a scan of
        // every override per adopted instance. Looked up only when a removal could follow.
        let ours = match (instance.overridden_status, absence) {
            (InstanceStatus::Unknown, PeerOverrideAbsence::RemovesOurs) => self
                .instance(&instance.app, instance.id(), now)
                .map_or(InstanceStatus::Unknown, |ours| ours.overridden_status),
            _ => InstanceStatus::Unknown,
        };
        match adopted_override(instance.overridden_status, ours, absence) {
            OverrideAdoption::Take(theirs) => {
                let (app, id) = (
                    app_key(&instance.app).into_owned(),
                    instance.id().to_owned(),
                );
                self.register(instance, Origin::Peer, now);
                self.take_override(&app, &id, theirs, now);
                return;
            }
            OverrideAdoption::Remove => {
                let (app, id) = (instance.app.to_uppercase(), instance.id().to_owned());
                self.delete_status_override(
                    &app,
                    &id,
                    Some(instance.status),
                    Some(instance.last_dirty_timestamp),
                    Origin::Peer,
                    now,
                );
            }
            OverrideAdoption::Keep => {}
        }
        self.register(instance, Origin::Peer, now);
    }

    /// Sets the override a Java peer's adopted copy carries, as a write arriving now.
    fn take_override(&mut self, app: &str, id: &str, status: InstanceStatus, now: Millis) {
        let Some(lease) = self.apps.get_mut(app).and_then(|l| l.get_mut(id)) else {
            return;
        };
        if as_override(lease.holder.overridden_status) == Some(status) {
            return;
        }
        self.overrides.insert(id, status, now);
        let holder = &mut lease.holder;
        let before = Some(holder.status);
        holder.overridden_status = status;
        holder.stamps.overridden = self.clock.tick(now);
        holder.status = status_of(
            holder.own_status,
            Some(status),
            holder.health,
            &holder.stamps,
        );
        mark_modified(holder, None, now);
        let kind = ChangeKind::StatusOverridden;
        self.record(
            kind,
            app,
            id,
            Origin::Peer,
            Left::Registered { before },
            now,
        );
    }

    /// Drops delta-queue items older than the retention window.
    ///
    /// Bumps [`Registry::version`] when items were dropped, because the delta document changed;
    /// also forgets status overrides that idled out (Eureka's map expires after an hour).
    pub fn purge_recently_changed(&mut self, now: Millis) {
        let purged = self
            .recently_changed
            .purge(now, self.policy.delta_retention_ms);
        if purged > 0 {
            self.versions.other_change();
        }
        self.overrides.purge_idle(now);
        self.tombstones
            .purge(now, self.policy.tombstone_retention_ms);
        // Run with the purge timer, so names nothing carries any more stay at most one round.
        self.names.purge_unused();
    }

    /// The live status overrides by instance id, for `/serverinfo/statusoverrides`.
    pub fn status_overrides(&self, now: Millis) -> Vec<(String, InstanceStatus)> {
        self.overrides.snapshot(now)
    }

    /// Eureka's `internalCancel`, shared by cancel and eviction. `app` is already upper-cased.
    pub(crate) fn remove_lease(
        &mut self,
        kind: ChangeKind,
        app: &str,
        id: &str,
        origin: Origin,
        now: Millis,
    ) -> bool {
        // The override goes even when there is no lease, as in Eureka.
        self.overrides.remove(id, now);
        let Some((key, mut lease)) = self
            .apps
            .get_mut(app)
            .and_then(|leases| leases.remove_entry(id))
        else {
            return false;
        };
        lease.cancel(now);
        lease.holder.action_type = Some(ActionType::Deleted);
        lease.holder.last_updated_timestamp = now;
        let tombstone = self.tombstone_of(kind, &lease, now);
        self.tombstones.insert(app, id, tombstone);
        self.renewals.client_cancelled(&self.policy);
        self.record(kind, app, id, origin, Left::Removed(key, lease), now);
        true
    }
}

impl Registry {
    /// What a removal leaves of `lease`: a cancel is a write, stamped now, after which the
    /// document no longer matters (dropped, so that tombstones stay small); an eviction
    /// stamps nothing and keeps everything, for the instance to come back as it was.
    fn tombstone_of(&mut self, kind: ChangeKind, lease: &Lease, now: Millis) -> Tombstone {
        let mut parts = parts_of(lease);
        let removal = if kind == ChangeKind::Evicted {
            let last_renewal = lease.lease_info().last_renewal_timestamp;
            Removal::Evicted { last_renewal }
        } else {
            parts.cancel(self.clock.tick(now));
            parts.registration = None;
            Removal::Cancelled
        };
        Tombstone {
            parts,
            removal,
            at: now,
        }
    }
}

/// A lease's parts, as `merge.rs` compares them.
pub(crate) fn parts_of(lease: &Lease) -> crate::merge::Parts {
    let holder = &lease.holder;
    crate::merge::Parts {
        registration: Some(holder.to_instance()),
        own_status: holder.own_status,
        overridden: as_override(holder.overridden_status),
        health: holder.health,
        stamps: holder.stamps,
    }
}

/// An `overriddenStatus` field as an override: UNKNOWN means none.
pub(crate) fn as_override(status: InstanceStatus) -> Option<InstanceStatus> {
    Some(status).filter(|status| *status != InstanceStatus::Unknown)
}

/// App names are case-insensitive on the way in and upper-case in the registry, as Eureka's
/// `InstanceInfo.Builder` upper-cases them. Borrows when the name already is upper-case, so
/// a heartbeat allocates nothing.
pub(crate) fn app_key(app: &str) -> Cow<'_, str> {
    // Not `is_lowercase`: title-case letters such as `ǅ` upper-case too (to `Ǆ`), and a test
    // that missed them stored `Ǆ` on register but looked up `ǅ` on renew.
    if app
        .chars()
        .any(|c| !c.is_uppercase() && c.to_uppercase().ne([c]))
    {
        Cow::Owned(app.to_uppercase())
    } else {
        Cow::Borrowed(app)
    }
}

/// A lease as reads see it: missing, or expired while lease expiration is enabled, reads as
/// absent (Eureka's `getInstanceByAppAndId`). Expired leases stay visible during
/// self-preservation, since they are not going to be evicted.
pub(crate) fn is_visible(lease: &Lease, now: Millis, expiration_enabled: bool) -> bool {
    !(expiration_enabled && lease.is_expired(now, 0))
}

fn visible_lease_mut<'a>(
    apps: &'a mut Leases,
    app: &str,
    id: &str,
    now: Millis,
    expiration_enabled: bool,
) -> Option<&'a mut Lease> {
    apps.get_mut(app)
        .and_then(|leases| leases.get_mut(id))
        .filter(|lease| is_visible(lease, now, expiration_enabled))
}

/// Eureka's `decorateInstanceInfo`.
pub(crate) fn decorate(lease: &Lease, own_instance_id: Option<&str>) -> Instance {
    let mut instance = lease.decorated();
    instance.is_coordinating_discovery_server = own_instance_id == Some(instance.id());
    instance
}

/// The bookkeeping of an effective status change: adopt a newer dirty timestamp, MODIFIED.
fn mark_modified(holder: &mut StoredInstance, last_dirty_timestamp: Option<Millis>, now: Millis) {
    if let Some(incoming) = last_dirty_timestamp {
        if incoming > holder.last_dirty_timestamp {
            holder.last_dirty_timestamp = incoming;
        }
    }
    holder.action_type = Some(ActionType::Modified);
    holder.last_updated_timestamp = now;
}

#[cfg(test)]
mod tests;
