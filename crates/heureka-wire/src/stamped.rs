//! Causal replication between Heureka servers: `POST {peer}/peerreplication/stamped` and its
//! answer, each write carrying the sender's whole stamped copy of the instance.
//!
//! Heureka's own format, never sent to a Java peer (Java's batch reader fails a whole batch on
//! any property it does not know). A batch is `{"stampedList":[…]}` and its answer
//! `{"responseList":[…]}`, compact JSON without a root wrapper:
//!
//! ```json
//! {"stampedList":[{"action":"Register","appName":"ORDERS","id":"o1","leased":true,
//!   "ownStatus":"UP","overriddenStatus":"OUT_OF_SERVICE",
//!   "stamps":{"registration":[1714550400000,0,7],"status":[1714550400000,0,7],
//!             "overridden":[1714550400100,0,7],"removed":[0,0,0]},
//!   "instanceInfo":{…}}]}
//! {"responseList":[{"statusCode":200},{"statusCode":409,"copy":{"appName":"ORDERS",…}}]}
//! ```
//!
//! A copy is [`StampedCopy`]: `appName`, `id`, `leased`, `ownStatus`, `overriddenStatus` (left
//! out when no override is in force), `health` (`"FAILING"` when a health check's verdict
//! reads the instance DOWN; left out when passing), `stamps` (each part's [`Stamp`] as
//! `[ms, counter, node]`; the `health` part's only once a verdict was written, so copies of
//! servers without health checks read as before)
//! and `instanceInfo` (left out when the copy holds no registration: a tombstone, or a
//! heartbeat, which carries only the stamps). `instanceInfo` is the instance object of the
//! `instance` documents, without their wrapper, as in Eureka's batch. A batch element is a copy
//! with an `action` first; an answer's `copy` is the receiver's own copy, the same object
//! without one.
//!
//! The reader is strict about what drives a merge, since a wrong stamp would make a write win
//! or lose for good: stamps are arrays of exactly three JSON integers (`ms` not negative,
//! `counter` and `node` within `u32`), the four other parts' stamps must be present, statuses are
//! exact enum names, `leased` is a JSON boolean, `appName` and `id` non-empty JSON strings.
//! The instance inside is read as leniently as any other. `null` counts as absent and unknown
//! fields are ignored, so a newer Heureka can add some. A batch is decided element by element,
//! as Eureka's is: an element that cannot be applied is an `Err` naming its index and field
//! (`stampedList[3].stamps.status[1] is out of range`), which the receiver answers with that
//! element's 400 while the rest goes through. An answer is read whole: any bad element fails
//! it.

use heureka_core::{Health, InstanceStatus, Millis, PartStamps, Parts, Stamp, StampedCopy};

use crate::error::DecodeError;
use crate::fields;
use crate::json::decode::read_instance;
use crate::json::encode::{instance_body, string, INSTANCE_MARKUP};
use crate::json::tree::Node;
use crate::numbers::{push_i64, push_u64};
use crate::replication::{
    decode_list, encode_list, open_result, ReplicationAction, RESPONSE_LIST, RESPONSE_OPENING,
};
use crate::size;

/// One element of a stamped batch: a write, and the sender's copy of the instance after it.
///
/// A `Heartbeat`'s copy normally carries no registration (only the stamps, for the receiver
/// to compare); the other actions may carry it. A `Register` must.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StampedItem {
    pub action: ReplicationAction,
    pub copy: StampedCopy,
}

/// The receiver's answer to one element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StampedResult {
    /// The HTTP status the write would have had on its own endpoint.
    pub status_code: u16,
    /// The receiver's own copy, when the sender should merge it (a heartbeat's 409).
    pub copy: Option<StampedCopy>,
}

impl StampedResult {
    /// An answer without a copy.
    pub fn status(status_code: u16) -> StampedResult {
        StampedResult {
            status_code,
            copy: None,
        }
    }
}

// --- encoding ---------------------------------------------------------------------------------

/// `{"stampedList":[…]}`, elements in the given order.
pub fn encode_stamped_batch(items: &[StampedItem]) -> Vec<u8> {
    let hint: usize = items
        .iter()
        .map(|item| ACTION_MARKUP + copy_size(&item.copy))
        .sum();
    encode_list(br#"{"stampedList":["#, items, hint, |out, item| {
        out.extend_from_slice(br#"{"action":""#);
        out.extend_from_slice(item.action.as_str().as_bytes());
        out.extend_from_slice(br#"","#);
        copy_fields(out, &item.copy);
        out.push(b'}');
    })
}

/// `{"responseList":[…]}`, answers in the given order.
pub fn encode_stamped_response(results: &[StampedResult]) -> Vec<u8> {
    let hint: usize = results
        .iter()
        .map(|result| RESULT_MARKUP + result.copy.as_ref().map_or(0, copy_size))
        .sum();
    encode_list(RESPONSE_OPENING, results, hint, |out, result| {
        open_result(out, result.status_code);
        if let Some(copy) = &result.copy {
            out.extend_from_slice(br#","copy":{"#);
            copy_fields(out, copy);
            out.push(b'}');
        }
        out.push(b'}');
    })
}

/// `"action":"DeleteStatusOverride",` and the element's braces.
const ACTION_MARKUP: usize = 40;
/// `{"statusCode":409,"copy":{` and the closing braces.
const RESULT_MARKUP: usize = 40;
/// A copy's field names, quotes, statuses and four stamps at their longest (20 + 10 + 10
/// digits each), without its app, id and instance; rounded up.
const COPY_MARKUP: usize = 400;

/// Bytes a copy's fields take, about: escapes in the app and id are not counted.
pub(crate) fn copy_size(copy: &StampedCopy) -> usize {
    let instance = copy
        .parts
        .registration
        .as_ref()
        .map_or(0, |i| INSTANCE_MARKUP + size::instance_text(i));
    COPY_MARKUP + copy.app.len() + copy.id.len() + instance
}

/// A copy's fields, without the braces around them, so that a batch element can put its
/// action first.
pub(crate) fn copy_fields(out: &mut Vec<u8>, copy: &StampedCopy) {
    let parts = &copy.parts;
    out.extend_from_slice(br#""appName":"#);
    string(out, &copy.app);
    out.extend_from_slice(br#","id":"#);
    string(out, &copy.id);
    out.extend_from_slice(if copy.leased {
        br#","leased":true"#
    } else {
        br#","leased":false"#
    });
    push_status(out, br#","ownStatus":""#, parts.own_status);
    if let Some(status) = parts.overridden {
        push_status(out, br#","overriddenStatus":""#, status);
    }
    if parts.health == Health::Failing {
        out.extend_from_slice(br#","health":"FAILING""#);
    }
    out.extend_from_slice(br#","stamps":"#);
    push_part_stamps(out, &parts.stamps);
    if let Some(instance) = &parts.registration {
        out.extend_from_slice(br#","instanceInfo":"#);
        instance_body(out, instance);
    }
}

fn push_status(out: &mut Vec<u8>, key: &[u8], status: InstanceStatus) {
    out.extend_from_slice(key);
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b'"');
}

/// `{"registration":[ms,counter,node],"status":[…],"overridden":[…],"removed":[…]}`; the
/// digest writes the same object.
pub(crate) fn push_part_stamps(out: &mut Vec<u8>, stamps: &PartStamps) {
    out.extend_from_slice(br#"{"registration":"#);
    push_stamp(out, stamps.registration);
    out.extend_from_slice(br#","status":"#);
    push_stamp(out, stamps.status);
    out.extend_from_slice(br#","overridden":"#);
    push_stamp(out, stamps.overridden);
    out.extend_from_slice(br#","removed":"#);
    push_stamp(out, stamps.removed);
    if stamps.health != Stamp::ZERO {
        out.extend_from_slice(br#","health":"#);
        push_stamp(out, stamps.health);
    }
    out.push(b'}');
}

fn push_stamp(out: &mut Vec<u8>, stamp: Stamp) {
    out.push(b'[');
    push_i64(out, stamp.ms);
    out.push(b',');
    push_u64(out, u64::from(stamp.counter));
    out.push(b',');
    push_u64(out, u64::from(stamp.node));
    out.push(b']');
}

// --- decoding ---------------------------------------------------------------------------------

/// Reads a stamped batch. The outer `Err` means the body as a whole is unreadable (not JSON,
/// no `stampedList` array), which deserves a 400; otherwise there is one entry per element, in
/// order, each the element or why it cannot be applied (that element's 400). `now` is parse
/// time, the default of an `instanceInfo`'s missing timestamps.
pub fn decode_stamped_batch(
    body: &[u8],
    now: Millis,
) -> Result<Vec<Result<StampedItem, DecodeError>>, DecodeError> {
    let expected = r#"a JSON object {"stampedList":[…]}"#;
    decode_list(body, "stampedList", expected, |item| decode_item(item, now))
}

fn decode_item(node: &Node<'_>, now: Millis) -> Result<StampedItem, DecodeError> {
    let Node::Object(_) = node else {
        return Err(DecodeError::field("", "is not an object"));
    };
    let action = match field(node, "action")? {
        Node::Str(name) => ReplicationAction::from_name(name),
        _ => None,
    }
    .ok_or_else(|| DecodeError::field("action", "is not a known action"))?;
    let copy = decode_copy(node, now)?;
    // As in Eureka's batch: a registration without the instance registers nothing.
    if action == ReplicationAction::Register && copy.parts.registration.is_none() {
        return Err(DecodeError::field("instanceInfo", "is missing"));
    }
    Ok(StampedItem { action, copy })
}

/// Reads a receiver's answer. Any unreadable element fails the whole answer: the sender acts
/// on an answer only element by element against its own batch, so a partial one is no use.
/// A copy's instance without timestamps gets `0`, as in registry documents.
pub fn decode_stamped_response(body: &[u8]) -> Result<Vec<StampedResult>, DecodeError> {
    decode_list(body, "responseList", RESPONSE_LIST, decode_result)?
        .into_iter()
        .collect()
}

fn decode_result(node: &Node<'_>) -> Result<StampedResult, DecodeError> {
    let Node::Object(_) = node else {
        return Err(DecodeError::field("", "is not an object"));
    };
    let status_code = match field(node, "statusCode")? {
        Node::Int(code) => {
            u16::try_from(*code).map_err(|_| DecodeError::field("statusCode", "is out of range"))?
        }
        _ => return Err(DecodeError::field("statusCode", "is not an integer")),
    };
    let copy = optional(node, "copy")
        .map(|copy| decode_copy(copy, 0).map_err(|e| e.within("copy")))
        .transpose()?;
    Ok(StampedResult { status_code, copy })
}

/// A copy's fields, from a batch element or an answer's `copy`.
pub(crate) fn decode_copy(node: &Node<'_>, now: Millis) -> Result<StampedCopy, DecodeError> {
    let Node::Object(_) = node else {
        return Err(DecodeError::field("", "is not an object"));
    };
    let app = fields::upper_case(&text(node, "appName")?);
    let id = text(node, "id")?;
    let leased = match field(node, "leased")? {
        Node::Bool(leased) => *leased,
        _ => return Err(DecodeError::field("leased", "is not a boolean")),
    };
    let own_status = status(field(node, "ownStatus")?, "ownStatus")?;
    let overridden = optional(node, "overriddenStatus")
        .map(|value| status(value, "overriddenStatus"))
        .transpose()?;
    let health = match optional(node, "health") {
        None => Health::Passing,
        Some(Node::Str(name)) => Health::from_name(name)
            .ok_or_else(|| DecodeError::field("health", "is not PASSING or FAILING"))?,
        Some(_) => return Err(DecodeError::field("health", "is not a string")),
    };
    let stamps = decode_part_stamps(field(node, "stamps")?).map_err(|e| e.within("stamps"))?;
    let registration = optional(node, "instanceInfo")
        .map(|value| read_instance(value, now).map_err(|e| e.within("instanceInfo")))
        .transpose()?;
    Ok(StampedCopy {
        app,
        id,
        parts: Parts {
            registration,
            own_status,
            overridden,
            health,
            stamps,
        },
        leased,
    })
}

/// The four parts' stamps; each must be there. The digest reads the same object.
pub(crate) fn decode_part_stamps(node: &Node<'_>) -> Result<PartStamps, DecodeError> {
    let Node::Object(_) = node else {
        return Err(DecodeError::field("", "is not an object"));
    };
    let part = |key: &'static str| decode_stamp(field(node, key)?, key);
    Ok(PartStamps {
        registration: part("registration")?,
        status: part("status")?,
        overridden: part("overridden")?,
        removed: part("removed")?,
        // Absent from the copies of servers without health checks, and of older ones.
        health: optional(node, "health")
            .map(|stamp| decode_stamp(stamp, "health"))
            .transpose()?
            .unwrap_or(Stamp::ZERO),
    })
}

/// `[ms, counter, node]`, JSON integers only (no strings, no fractions, no exponents); errors
/// name the part (`key`) and the position in it (`status[1]`).
fn decode_stamp(node: &Node<'_>, key: &'static str) -> Result<Stamp, DecodeError> {
    let items = match node {
        Node::Array(items) => items.as_slice(),
        _ => &[],
    };
    let [ms, counter, writer] = items else {
        return Err(DecodeError::field(
            key,
            "is not a [ms, counter, node] array",
        ));
    };
    let int = |n: usize, value: &Node<'_>| match value {
        Node::Int(value) => Ok(*value),
        _ => Err(DecodeError::field(
            format!("{key}[{n}]"),
            "is not an integer",
        )),
    };
    let small = |n: usize, value: &Node<'_>| {
        u32::try_from(int(n, value)?)
            .map_err(|_| DecodeError::field(format!("{key}[{n}]"), "is out of range"))
    };
    let ms = int(0, ms)?;
    if ms < 0 {
        return Err(DecodeError::field(format!("{key}[0]"), "is negative"));
    }
    Ok(Stamp {
        ms,
        counter: small(1, counter)?,
        node: small(2, writer)?,
    })
}

/// A field's value, or `None` when absent or `null`. A repeated key's last value wins, as in
/// the other readers.
fn optional<'a>(node: &'a Node<'a>, key: &str) -> Option<&'a Node<'a>> {
    node.get(key).filter(|value| !matches!(value, Node::Null))
}

/// A field that must be there.
fn field<'a>(node: &'a Node<'a>, key: &'static str) -> Result<&'a Node<'a>, DecodeError> {
    optional(node, key).ok_or_else(|| DecodeError::field(key, "is missing"))
}

/// A non-empty JSON string: a copy without its app or id names no instance.
fn text(node: &Node<'_>, key: &'static str) -> Result<String, DecodeError> {
    match field(node, key)? {
        Node::Str(value) if !value.is_empty() => Ok(value.to_string()),
        Node::Str(_) => Err(DecodeError::field(key, "is empty")),
        _ => Err(DecodeError::field(key, "is not a string")),
    }
}

/// An exact enum name, as Java's `InstanceStatus.valueOf` reads it.
fn status(value: &Node<'_>, key: &'static str) -> Result<InstanceStatus, DecodeError> {
    match value {
        Node::Str(name) => InstanceStatus::from_name(name),
        _ => None,
    }
    .ok_or_else(|| DecodeError::field(key, "is not an instance status"))
}
