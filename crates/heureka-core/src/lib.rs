//! Heureka's registry: Eureka's rules for leases, status overrides, deltas, eviction and
//! self-preservation, as pure functions over in-memory state.
//!
//! Architecture invariant: this crate does no I/O, spawns nothing, never reads the clock and
//! knows no wire format. Every time-dependent call takes `now` (milliseconds since the epoch),
//! and randomness (eviction order) is passed in as a seed. That makes every rule testable
//! without sleeping.
//!
//! Map of the crate, from the bottom up. The data the rules work on: `model.rs` (Eureka's types),
//! `origin.rs`, `policy.rs` and `limits.rs` (who writes, the knobs, the bounds, with
//! `invalid_registration.rs` and `registration.rs`), `hlc.rs` and `merge.rs` (stamps and an
//! instance's parts), `health.rs` and `status_rules.rs` (how a verdict and an override weigh),
//! `stored.rs`, `lease.rs`, `lease_map.rs` and `maps.rs` (how instances and leases are kept),
//! `delta.rs`, `versions.rs`, `tombstones.rs`, `renewal_counters.rs`, `change.rs`, `takeover.rs`,
//! `stamped_copy.rs` and `instance_digest.rs` (what servers exchange), `peer_copies.rs` and
//! `anti_entropy.rs` (how two servers' copies compare), `outcomes.rs` and `element_outcome.rs`.
//! Then `registry.rs`, the state, and above it one file per operation, each `impl Registry`:
//! `register.rs`, `renew.rs`, `cancel.rs`, `overrides.rs`, `metadata.rs`, `eviction.rs` and
//! `self_preservation.rs` (the two timer-driven rules), `retention.rs`, `health_checks.rs`,
//! `record.rs` (what every write books), `reads.rs`, `digest.rs`, `adopt.rs` (Java peers' copies),
//! `stamped.rs` (Heureka peers' stamped copies) and `persisted.rs` (restoring from disk). This file
//! only declares the modules and re-exports the public names from where each is defined.

mod adopt;
mod anti_entropy;
mod cancel;
mod change;
mod delta;
mod digest;
mod element_outcome;
mod eviction;
mod health;
mod health_checks;
mod hlc;
mod instance_digest;
mod invalid_registration;
mod lease;
mod lease_map;
mod limits;
mod maps;
mod merge;
mod metadata;
mod model;
mod origin;
mod outcomes;
mod overrides;
mod peer_copies;
mod persisted;
mod policy;
mod reads;
mod record;
mod register;
mod registration;
mod registry;
mod renew;
mod renewal_counters;
mod retention;
mod self_preservation;
mod stamped;
mod stamped_copy;
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
pub use element_outcome::ElementOutcome;
pub use eviction::eviction_limit;
pub use health::{with_health, Health, HealthSubject, HealthWrite};
pub use hlc::{Hlc, Stamp, TooFarAhead, MAX_DRIFT_MS};
pub use instance_digest::InstanceDigest;
pub use invalid_registration::InvalidRegistration;
pub use lease::{LeaseExpiry, RESTORE_MARGIN_MS};
pub use limits::{longest_heartbeatable_name, ClampedLease, Limits, HEARTBEAT_HEAD_ALLOWANCE};
pub use merge::{PartStamps, Parts};
pub use model::{
    ActionType, Application, Applications, DataCenterClass, DataCenterInfo, Instance,
    InstanceStatus, LeaseInfo, Millis, Port,
};
pub use origin::Origin;
pub use outcomes::{instance_write_status_code, EvictionReport, RenewOutcome, SelfPreservation};
pub use peer_copies::{
    adopted_override, is_newer, same_state, touched_since, OverrideAdoption, PeerOverrideAbsence,
};
pub use persisted::{Kept, KeptInstance, Restored};
pub use policy::RegistryPolicy;
pub use reads::{DeltaApplication, DeltaItems, StatusCount};
pub use registration::validate_registration;
pub use registry::Registry;
pub use renewal_counters::{lease_expiration_enabled, renews_threshold};
pub use stamped_copy::{Merged, StampedCopy, StampedRenewal};
pub use takeover::{Endpoint, Takeover};
pub use tombstones::{Removal, Tombstone};
pub use versions::ApplicationVersion;
