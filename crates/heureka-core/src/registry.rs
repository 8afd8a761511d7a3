//! The registry's state: applications → instances → leases, and beside them everything the
//! rules keep (overrides, the delta queue, version counters, renew counters, tombstones, the
//! clock), with the key rules every operation shares.
//!
//! Eureka's `AbstractInstanceRegistry` and `PeerAwareInstanceRegistryImpl`, minus replication,
//! caching and timers, which belong to the server. Only the state is here; each operation's rules
//! are in a file of their own, which `impl`s [`Registry`] above this one: `register.rs`,
//! `renew.rs`, `cancel.rs`, `overrides.rs`, `metadata.rs`, `eviction.rs`, `self_preservation.rs`,
//! `health_checks.rs`, `retention.rs`, `record.rs` (what every write books), `reads.rs`,
//! `digest.rs`, `adopt.rs` (Java peers' copies), `stamped.rs` (Heureka peers' stamped copies) and
//! `persisted.rs` (restoring from disk).

use std::borrow::Cow;

use crate::change::Change;
use crate::delta::{RecentlyChanged, StatusCounts};
use crate::hlc::Hlc;
use crate::lease::{is_visible, Lease};
use crate::lease_map::LeaseMap;
use crate::limits::Limits;
use crate::maps::HashMap;
use crate::model::Millis;
use crate::policy::RegistryPolicy;
use crate::renewal_counters::RenewalCounters;
use crate::status_rules::OverrideMap;
use crate::stored::{Interner, Name};
use crate::tombstones::Tombstones;
use crate::versions::Versions;

/// Leases by upper-cased app name, then by case-sensitive instance id.
pub(crate) type Leases = HashMap<Name, LeaseMap>;

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

    /// Whether a lease exists for `app` (already upper-cased) and `id`, expired or not.
    pub(crate) fn is_registered(&self, app: &str, id: &str) -> bool {
        self.apps
            .get(app)
            .is_some_and(|leases| leases.contains_key(id))
    }

    /// The lease of `app` (already upper-cased) and `id`, expired or not.
    pub(crate) fn lease(&self, app: &str, id: &str) -> Option<&Lease> {
        self.apps.get(app)?.get(id)
    }

    /// The leases of `app`, a map made on its first lease. A new map's key is `holder_app`,
    /// the holder's shared copy of the name, when it is spelled the same (else the interned
    /// copy): a renewal that reads the name from both the key and its holder then finds it in
    /// one allocation, warm from the lookup, rather than in two.
    pub(crate) fn leases_of(&mut self, app: &str, holder_app: Name) -> &mut LeaseMap {
        let key = match self.apps.get_key_value(app) {
            Some((key, _)) => Name::clone(key),
            None if *holder_app == *app => holder_app,
            None => self.names.intern(app),
        };
        self.apps.entry(key).or_default()
    }

    /// Number of applications holding at least one lease.
    pub fn application_count(&self) -> usize {
        self.apps
            .values()
            .filter(|leases| !leases.is_empty())
            .count()
    }

    /// Number of leases, expired-not-evicted ones included (Eureka's `getLocalRegistrySize`).
    ///
    /// Read from the counts by status that every write keeps for `apps__hashcode`, not by
    /// walking the applications: every new registration asks (`check_room`), and the walk was
    /// over a quarter of a registration's CPU at 100,000 instances (10,000 applications).
    /// Debug builds check the two against each other on every call.
    pub fn registry_size(&self) -> usize {
        let counted = self.statuses.total();
        debug_assert_eq!(
            counted,
            self.apps.values().map(LeaseMap::len).sum::<usize>(),
            "the status counts disagree with the leases"
        );
        counted
    }
}

/// App names are case-insensitive on the way in and upper-case in the registry, as Eureka's
/// `InstanceInfo.Builder` upper-cases them. Borrows when the name already is upper-case, so
/// a heartbeat allocates nothing.
pub(crate) fn app_key(app: &str) -> Cow<'_, str> {
    // Names are ASCII and upper-case in practice: one test per byte, rather than a Unicode
    // case look-up per character (a tenth of a renewal's work in the registry).
    if app
        .bytes()
        .all(|byte| byte.is_ascii() && !byte.is_ascii_lowercase())
    {
        return Cow::Borrowed(app);
    }
    if app.is_ascii() {
        return Cow::Owned(app.to_ascii_uppercase());
    }
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

/// A lease a write addressed to one instance may touch: visible as reads see it
/// (`lease::is_visible`).
pub(crate) fn visible_lease_mut<'a>(
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

#[cfg(test)]
mod tests;
