//! Who is talking to the registry: a client, or a peer server replicating a client's write.
//! Every write carries it, and the rules that treat the two differently read it.

/// Who sent a write: a client, or a peer server replicating one (Eureka's `isReplication`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Client,
    Peer,
}
