//! One instance as a node keeps it on disk (`heureka.persistence.*`): Heureka's own record,
//! never sent over the wire. The copy inside is the stamped copy replication exchanges
//! (`stamped.rs`), so what is kept is exactly what a peer would be sent:
//!
//! ```json
//! {"kept":"lease","registrationTimestamp":1714550400000,"serviceUpTimestamp":1714550400000,
//!  "copy":{"appName":"ORDERS","id":"o1","leased":true,"ownStatus":"UP","stamps":{…},
//!          "instanceInfo":{…}}}
//! {"kept":"removed","removal":"cancelled","at":1714550500000,"copy":{…}}
//! {"kept":"removed","removal":"evicted","lastRenewalTimestamp":1714550300000,"at":…,"copy":{…}}
//! ```
//!
//! The reader is as strict as the stamped reader about what drives a merge: a record that does
//! not read is not restored, and the caller says so (a damaged store loses those records, not
//! the node's start).

use heureka_core::{Kept, KeptInstance, Millis, Removal};

use crate::error::DecodeError;
use crate::json::decode::parse;
use crate::json::tree::Node;
use crate::numbers::push_i64;
use crate::stamped::{copy_fields, copy_size, decode_copy};

/// The record of one kept instance.
pub fn encode_kept(kept: &KeptInstance) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 + copy_size(&kept.copy));
    match kept.kept {
        Kept::Lease {
            registration_timestamp,
            service_up_timestamp,
        } => {
            out.extend_from_slice(br#"{"kept":"lease","registrationTimestamp":"#);
            push_i64(&mut out, registration_timestamp);
            out.extend_from_slice(br#","serviceUpTimestamp":"#);
            push_i64(&mut out, service_up_timestamp);
        }
        Kept::Removed { removal, at } => {
            match removal {
                Removal::Cancelled => {
                    out.extend_from_slice(br#"{"kept":"removed","removal":"cancelled""#)
                }
                Removal::Evicted { last_renewal } => {
                    out.extend_from_slice(
                        br#"{"kept":"removed","removal":"evicted","lastRenewalTimestamp":"#,
                    );
                    push_i64(&mut out, last_renewal);
                }
            }
            out.extend_from_slice(br#","at":"#);
            push_i64(&mut out, at);
        }
    }
    out.extend_from_slice(br#","copy":{"#);
    copy_fields(&mut out, &kept.copy);
    out.extend_from_slice(b"}}");
    out
}

/// Reads a record [`encode_kept`] wrote.
pub fn decode_kept(record: &[u8]) -> Result<KeptInstance, DecodeError> {
    let root = parse(record)?;
    let copy_node = root
        .get("copy")
        .ok_or_else(|| DecodeError::field("copy", "is missing"))?;
    let copy = decode_copy(copy_node, 0).map_err(|e| e.within("copy"))?;
    let kept = match root.get("kept") {
        Some(Node::Str(kind)) if kind == "lease" => Kept::Lease {
            registration_timestamp: millis(&root, "registrationTimestamp")?,
            service_up_timestamp: millis(&root, "serviceUpTimestamp")?,
        },
        Some(Node::Str(kind)) if kind == "removed" => {
            let removal = match root.get("removal") {
                Some(Node::Str(name)) if name == "cancelled" => Removal::Cancelled,
                Some(Node::Str(name)) if name == "evicted" => Removal::Evicted {
                    last_renewal: millis(&root, "lastRenewalTimestamp")?,
                },
                _ => return Err(DecodeError::field("removal", "is not cancelled or evicted")),
            };
            Kept::Removed {
                removal,
                at: millis(&root, "at")?,
            }
        }
        _ => return Err(DecodeError::field("kept", "is not lease or removed")),
    };
    if matches!(kept, Kept::Lease { .. }) != copy.leased {
        return Err(DecodeError::field("copy.leased", "contradicts kept"));
    }
    Ok(KeptInstance { copy, kept })
}

/// A timestamp: a JSON integer, not negative.
fn millis(node: &Node<'_>, key: &'static str) -> Result<Millis, DecodeError> {
    match node.get(key) {
        Some(Node::Int(value)) if *value >= 0 => Ok(*value),
        Some(_) => Err(DecodeError::field(key, "is not a timestamp")),
        None => Err(DecodeError::field(key, "is missing")),
    }
}

#[cfg(test)]
mod tests;

/// Whether a node keeps its registry on disk, and how that goes: the `persistence` object of
/// `/actuator/health`'s component and of the dashboard's summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PersistenceView {
    pub enabled: bool,
    /// The store's file.
    pub path: String,
    /// When the latest batch reached the disk (server clock, ms); `None` before the first.
    pub last_write: Option<Millis>,
    /// Writes acknowledged and not yet on disk.
    pub pending: u64,
    /// Instances restored at start-up.
    pub restored: u64,
    /// Why the latest batch failed, while it has not succeeded since.
    pub last_error: Option<String>,
    /// For a node with peers that restored instances: whether what it restored has been
    /// compared with a peer's registry (`false`: it serves the restored view alone, as no
    /// peer has answered since the start). `None` otherwise.
    pub restore_checked: Option<bool>,
}

/// `{"enabled":true,"path":…,"lastWrite":…,"pendingRecords":…,"restoredInstances":…}`
/// (`lastWrite` `null` before the first write, `restoreCheckedWithPeers` only on a node with
/// peers that restored instances, `lastError` only after a failed one); just
/// `{"enabled":false}` when off.
pub fn push_persistence_view(out: &mut Vec<u8>, view: &PersistenceView) {
    if !view.enabled {
        out.extend_from_slice(br#"{"enabled":false}"#);
        return;
    }
    out.extend_from_slice(br#"{"enabled":true,"path":"#);
    crate::json::encode::string(out, &view.path);
    out.extend_from_slice(br#","lastWrite":"#);
    match view.last_write {
        Some(at) => push_i64(out, at),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","pendingRecords":"#);
    crate::numbers::push_u64(out, view.pending);
    out.extend_from_slice(br#","restoredInstances":"#);
    crate::numbers::push_u64(out, view.restored);
    if let Some(checked) = view.restore_checked {
        out.extend_from_slice(br#","restoreCheckedWithPeers":"#);
        out.extend_from_slice(if checked { b"true" } else { b"false" });
    }
    if let Some(error) = &view.last_error {
        out.extend_from_slice(br#","lastError":"#);
        crate::json::encode::string(out, error);
    }
    out.push(b'}');
}
