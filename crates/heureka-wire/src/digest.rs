//! The registry digest of `GET {peer}/peerreplication/digest`: Heureka's own format, exchanged
//! only between Heureka peers for anti-entropy (Java peers are compared through `GET /apps`).
//!
//! Compact JSON, one object per instance in the registry's (app, id) order:
//!
//! ```json
//! {"digest":[{"app":"ORDERS","id":"o1","status":"UP","overriddenStatus":"UNKNOWN",
//!   "lastDirtyTimestamp":1,"lastUpdatedTimestamp":2,"lastRenewalTimestamp":3,"removed":false,
//!   "stamps":{"registration":[1,0,7],"status":[1,0,7],"overridden":[0,0,0],"removed":[0,0,0]}}]}
//! ```
//!
//! Every field is always written except `stamps`, the entry's `PartStamps` as a stamped
//! batch writes them (`stamped.rs`: each part's `[ms, counter, node]`), which is left out when
//! the entry has none. The reader is strict about the fields it knows, since a digest drives
//! repairs: each must be present (`stamps` may be absent or `null`: an older Heureka sends
//! none), statuses are exact enum names, timestamps are JSON integers, `removed` a JSON
//! boolean, `stamps` an object holding all four parts' stamps as `stamped.rs` reads them, and
//! any bad entry fails the whole digest with one error naming the entry and field
//! (`digest[3].status is not an instance status`, `digest[0].stamps.removed[2] is out of
//! range`). It ignores fields it does not know, so a newer Heureka can add some without
//! breaking an older peer (an older Heureka reading ours skips `stamps`).

use heureka_core::{InstanceDigest, InstanceStatus, Millis};

use crate::error::DecodeError;
use crate::json::decode::parse;
use crate::json::encode::string;
use crate::json::tree::Node;
use crate::numbers::push_i64;
use crate::stamped::{decode_part_stamps, push_part_stamps};

/// A peer's digest, as [`decode_registry_digest`] reads it.
pub type RegistryDigest = Vec<InstanceDigest>;

/// `{"digest":[…]}`, entries in the given order.
pub fn encode_registry_digest(entries: &[InstanceDigest]) -> Vec<u8> {
    let hint: usize = entries
        .iter()
        .map(|entry| ENTRY_MARKUP + entry.app.len() + entry.id.len())
        .sum();
    let mut out = Vec::with_capacity(16 + hint);
    out.extend_from_slice(br#"{"digest":["#);
    for (n, entry) in entries.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        encode_entry(&mut out, entry);
    }
    out.extend_from_slice(b"]}");
    out
}

/// Field names, quotes and the longest values of an entry besides its app and id (its stamps
/// included: four times 20 + 10 + 10 digits), rounded up.
const ENTRY_MARKUP: usize = 448;

fn encode_entry(out: &mut Vec<u8>, entry: &InstanceDigest) {
    out.extend_from_slice(br#"{"app":"#);
    string(out, &entry.app);
    out.extend_from_slice(br#","id":"#);
    string(out, &entry.id);
    push_status(out, br#","status":""#, entry.status);
    push_status(out, br#","overriddenStatus":""#, entry.overridden_status);
    out.extend_from_slice(br#","lastDirtyTimestamp":"#);
    push_i64(out, entry.last_dirty_timestamp);
    out.extend_from_slice(br#","lastUpdatedTimestamp":"#);
    push_i64(out, entry.last_updated_timestamp);
    out.extend_from_slice(br#","lastRenewalTimestamp":"#);
    push_i64(out, entry.last_renewal_timestamp);
    out.extend_from_slice(if entry.removed {
        br#","removed":true"#
    } else {
        br#","removed":false"#
    });
    if let Some(stamps) = &entry.stamps {
        out.extend_from_slice(br#","stamps":"#);
        push_part_stamps(out, stamps);
    }
    out.push(b'}');
}

fn push_status(out: &mut Vec<u8>, key: &[u8], status: InstanceStatus) {
    out.extend_from_slice(key);
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b'"');
}

/// Reads a peer's digest. `now` is unused: a digest carries every timestamp it needs, but the
/// parameter keeps this reader's signature in line with the others.
pub fn decode_registry_digest(body: &[u8], now: Millis) -> Result<RegistryDigest, DecodeError> {
    let _ = now;
    let root = parse(body)?;
    let Some(Node::Array(entries)) = root.get("digest") else {
        return Err(DecodeError::WrongRoot {
            expected: r#"a JSON object {"digest":[…]}"#,
        });
    };
    entries
        .iter()
        .enumerate()
        .map(|(n, entry)| decode_entry(entry).map_err(|e| e.within(&format!("digest[{n}]"))))
        .collect()
}

fn decode_entry(node: &Node<'_>) -> Result<InstanceDigest, DecodeError> {
    let Node::Object(_) = node else {
        return Err(DecodeError::field("", "is not an object"));
    };
    Ok(InstanceDigest {
        app: text(node, "app")?,
        id: text(node, "id")?,
        status: status(node, "status")?,
        overridden_status: status(node, "overriddenStatus")?,
        last_dirty_timestamp: timestamp(node, "lastDirtyTimestamp")?,
        last_updated_timestamp: timestamp(node, "lastUpdatedTimestamp")?,
        last_renewal_timestamp: timestamp(node, "lastRenewalTimestamp")?,
        removed: match field(node, "removed")? {
            Node::Bool(removed) => *removed,
            _ => return Err(DecodeError::field("removed", "is not a boolean")),
        },
        stamps: match node.get("stamps") {
            None | Some(Node::Null) => None,
            Some(stamps) => Some(decode_part_stamps(stamps).map_err(|e| e.within("stamps"))?),
        },
    })
}

/// A known field's value; absent and `null` are both "missing". A repeated key's last value
/// wins, as in the other readers.
fn field<'a>(node: &'a Node<'a>, key: &'static str) -> Result<&'a Node<'a>, DecodeError> {
    match node.get(key) {
        None | Some(Node::Null) => Err(DecodeError::field(key, "is missing")),
        Some(value) => Ok(value),
    }
}

/// A non-empty string: an entry without its app or id names no instance.
fn text(node: &Node<'_>, key: &'static str) -> Result<String, DecodeError> {
    match field(node, key)? {
        Node::Str(value) if !value.is_empty() => Ok(value.to_string()),
        Node::Str(_) => Err(DecodeError::field(key, "is empty")),
        _ => Err(DecodeError::field(key, "is not a string")),
    }
}

fn status(node: &Node<'_>, key: &'static str) -> Result<InstanceStatus, DecodeError> {
    match field(node, key)? {
        Node::Str(name) => InstanceStatus::from_name(name),
        _ => None,
    }
    .ok_or_else(|| DecodeError::field(key, "is not an instance status"))
}

fn timestamp(node: &Node<'_>, key: &'static str) -> Result<Millis, DecodeError> {
    match field(node, key)? {
        Node::Int(millis) => Ok(*millis),
        _ => Err(DecodeError::field(key, "is not an integer")),
    }
}
