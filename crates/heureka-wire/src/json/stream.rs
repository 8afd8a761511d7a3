//! Reading a register body straight into an `Instance`, with no syntax tree in between; and,
//! in [`registry`], a whole registry document or one application into its model the same way.
//!
//! A registration is the server's most frequent write with a body, and building the
//! order-preserving [`Node`](super::tree::Node) tree for it (then a `String` per key and value,
//! a `Vec` per object) cost about a fifth of its CPU; for a full registry read on a peer's start-up
//! sync the tree took several times the registry's memory. This reader walks the same document with
//! serde's visitors and feeds each value to the same `InstanceBuilder` rules as it is read, so
//! it accepts exactly what the tree reader accepts and fails with the same message:
//!
//! * fields are applied in document order (the last of duplicate keys wins, two `metadata`
//!   objects merge), and the first field error is the one reported;
//! * a field error is held until the whole body has been read, so a syntax error anywhere still
//!   wins, as it does when the tree is parsed first;
//! * values nobody reads are skipped through `deserialize_any`, never serde's `IgnoredAny`,
//!   whose fast path neither checks UTF-8 in strings, number ranges nor the nesting limit that
//!   parsing a tree enforces.
//!
//! A register body in the shape every client sends is read first by [`plain`], without serde,
//! through the same rules; on anything else it gives up and this reader reads the body.
//!
//! `tests` in this module checks the readers against the tree reader, for all three documents.

mod instance;
mod plain;
mod registry;
#[cfg(test)]
mod tests;
mod visit;

pub(crate) use instance::instance;
pub(crate) use registry::{application, applications};
