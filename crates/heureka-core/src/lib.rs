//! Heureka's registry: Eureka's rules for leases, status overrides, deltas, eviction and
//! self-preservation, as pure functions over in-memory state.
//!
//! Architecture invariant: this crate does no I/O, spawns nothing, never reads the clock and
//! knows no wire format. Every time-dependent call takes `now` (milliseconds since the epoch),
//! and randomness (eviction order) is passed in as a seed. That makes every rule testable
//! without sleeping.
//!
//! Map of the crate: `registry.rs` holds the state and the writes, `reads.rs` the documents
//! readers get, `lease.rs` expiry, `status_rules.rs` the override rules, `delta.rs` the
//! recently-changed queue and `apps__hashcode`, `digest.rs` the digest peers compare for
//! anti-entropy, `peer_copies.rs` which of two servers' copies is newer and how a peer's is
//! adopted, `registration.rs` what a register body must contain, `limits.rs` Heureka's bounds on it, `outcomes.rs` what writes
//! report and Eureka's status code for each, `eviction.rs` and `self_preservation.rs` the two
//! timer-driven rules, `health.rs` how the server's health checks weigh on a status, `maps.rs` the hasher every map uses and the lease maps.

mod anti_entropy;
mod change;
mod delta;
mod digest;
mod element_outcome;
mod eviction;
mod health;
mod hlc;
mod lease;
mod limits;
mod maps;
mod merge;
mod model;
mod outcomes;
mod peer_copies;
mod persisted;
mod policy;
mod reads;
mod registration;
mod registry;
mod self_preservation;
mod stamped;
mod status_rules;
mod stored;
mod takeover;
#[cfg(test)]
mod test_util;
mod tombstones;
mod versions;

pub use anti_entropy::{
    compare_digests, PeerView, PeerWrite, Repairs, RENEWAL_LAG_MS, SETTLING_MS,
};
pub use change::{Change, ChangeKind};
pub use delta::apps_hashcode;
pub use digest::InstanceDigest;
pub use element_outcome::ElementOutcome;
pub use eviction::eviction_limit;
pub use health::{with_health, Health, HealthSubject, HealthWrite};
pub use hlc::{Hlc, Stamp, TooFarAhead, MAX_DRIFT_MS};
pub use lease::LeaseExpiry;
pub use limits::{longest_heartbeatable_name, ClampedLease, Limits, HEARTBEAT_HEAD_ALLOWANCE};
pub use merge::{PartStamps, Parts};
pub use model::{
    ActionType, Application, Applications, DataCenterClass, DataCenterInfo, Instance,
    InstanceStatus, LeaseInfo, Millis, Port,
};
pub use outcomes::instance_write_status_code;
pub use peer_copies::{
    adopted_override, is_newer, same_state, touched_since, OverrideAdoption, PeerOverrideAbsence,
};
pub use persisted::{Kept, KeptInstance, Restored, RESTORE_MARGIN_MS};
pub use reads::{ApplicationVersion, DeltaApplication, DeltaItems, StatusCount};
pub use registration::{validate_registration, InvalidRegistration};
pub use registry::{
    EvictionReport, Origin, Registry, RegistryPolicy, RenewOutcome, SelfPreservation,
};
pub use self_preservation::{lease_expiration_enabled, renews_threshold};
pub use stamped::{Merged, StampedCopy, StampedRenewal};
pub use takeover::{Endpoint, Takeover};
pub use tombstones::{Removal, Tombstone};
