//! Heureka's registry: Eureka's rules for leases, status overrides, deltas, eviction and
//! self-preservation, as pure functions over in-memory state.
//!
//! Architecture invariant: this crate does no I/O, spawns nothing, never reads the clock and
//! knows no wire format. Every time-dependent call takes `now` (milliseconds since the epoch),
//! and randomness (eviction order) is passed in as a seed. That makes every rule testable
//! without sleeping.

mod model;
mod registry;

pub use model::{
    ActionType, Application, Applications, DataCenterClass, DataCenterInfo, Instance, InstanceStatus,
    LeaseInfo, Millis, Port,
};
pub use registry::{
    apps_hashcode, EvictionReport, LeaseExpiry, Origin, Registry, RegistryPolicy, RenewOutcome,
    SelfPreservation,
};
