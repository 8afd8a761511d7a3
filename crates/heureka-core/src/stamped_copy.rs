//! What Heureka servers exchange to replicate an instance: its stamped copy (the parts and
//! their stamps, `merge.rs`), what merging one did, and the answer to a stamped heartbeat.
//! What receiving them does here is `stamped.rs`.

use crate::merge::Parts;

/// One server's copy of one instance, as Heureka peers exchange it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StampedCopy {
    /// Upper-cased, as the registry keys it.
    pub app: String,
    pub id: String,
    pub parts: Parts,
    /// Whether the sender holds a lease for it (an instance it evicted has parts but none).
    pub leased: bool,
}

/// What merging a peer's copy did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Merged {
    /// Whether anything here changed.
    pub changed: bool,
    /// Whether this server holds a lease for the instance afterwards.
    pub leased: bool,
}

/// The answer to a peer's stamped heartbeat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StampedRenewal {
    /// Renewed; both copies hold the same writes.
    Renewed,
    /// Unknown here, or the sender holds writes we do not: it should send its copy (404).
    SendYours,
    /// We hold writes the sender does not (a removal among them): here is our copy (409).
    TakeOurs(Box<StampedCopy>),
}
