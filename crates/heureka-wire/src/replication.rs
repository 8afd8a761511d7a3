//! The peer replication batch: `POST {peer}/peerreplication/batch/` and its answer.
//!
//! A batch is `{"replicationList":[…]}` and its answer `{"responseList":[…]}`, both JSON only and
//! without a root wrapper. Java writes them with a plain Jackson bean mapper (`NON_NULL`
//! inclusion, properties in constructor order) around the legacy `InstanceInfo` serializer, so
//! an element's `instanceInfo` and an answer's `responseEntity` are the same instance object our
//! `instance` documents hold, minus the `{"instance":…}` wrapper.
//!
//! Java *reads* a batch with the same bean mapper, which fails the whole request on any unknown
//! property, so the encoders here write exactly Java's fields and nothing else. Our reader is
//! lenient like the other readers, and decides element by element: one element that cannot be
//! applied (no action, an action this version does not know, an unreadable instance) is an
//! `Err` in its place, which the receiver answers with that element's 500, while the rest of the
//! batch goes through. Java answers 400 to the whole batch when an action name is unknown; we
//! choose the per-element failure so that peers of different versions can still replicate
//! everything both understand.

use heureka_core::{Instance, InstanceStatus, Millis, PeerWrite};

use crate::error::DecodeError;
use crate::fields;
use crate::json::decode::{parse, read_instance, scalar};
use crate::json::encode::{instance_body, string, INSTANCE_MARKUP};
use crate::json::tree::Node;
use crate::numbers::{push_i64, push_u64};
use crate::size;

/// What a replicated element does on the receiving peer. The names on the wire are Java's
/// `PeerAwareInstanceRegistryImpl.Action` constants, exact and case-sensitive.
///
/// Metadata changes travel as `Register` of the changed instance, as Java sends them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReplicationAction {
    Register,
    Heartbeat,
    Cancel,
    StatusUpdate,
    DeleteStatusOverride,
}

impl ReplicationAction {
    pub const ALL: [ReplicationAction; 5] = [
        ReplicationAction::Register,
        ReplicationAction::Heartbeat,
        ReplicationAction::Cancel,
        ReplicationAction::StatusUpdate,
        ReplicationAction::DeleteStatusOverride,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReplicationAction::Register => "Register",
            ReplicationAction::Heartbeat => "Heartbeat",
            ReplicationAction::Cancel => "Cancel",
            ReplicationAction::StatusUpdate => "StatusUpdate",
            ReplicationAction::DeleteStatusOverride => "DeleteStatusOverride",
        }
    }

    /// Exact, case-sensitive match on the name, as Jackson reads a Java enum.
    pub fn from_name(name: &str) -> Option<ReplicationAction> {
        ReplicationAction::ALL
            .into_iter()
            .find(|action| action.as_str() == name)
    }
}

/// The write anti-entropy decided to send a peer, as the action that carries it.
impl From<PeerWrite> for ReplicationAction {
    fn from(write: PeerWrite) -> ReplicationAction {
        match write {
            PeerWrite::Register => ReplicationAction::Register,
            PeerWrite::Heartbeat => ReplicationAction::Heartbeat,
            PeerWrite::Cancel => ReplicationAction::Cancel,
            PeerWrite::StatusUpdate => ReplicationAction::StatusUpdate,
            PeerWrite::DeleteStatusOverride => ReplicationAction::DeleteStatusOverride,
        }
    }
}

/// One element of a batch: Eureka's `ReplicationInstance`.
///
/// Which fields an action carries is Java's rule, kept by the constructors: `Register` carries
/// the whole instance, `Heartbeat`, `StatusUpdate` and `DeleteStatusOverride` the stored
/// instance's `status` and `lastDirtyTimestamp` (a heartbeat also the override, if there is
/// one), `Cancel` only the names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicationItem {
    pub action: ReplicationAction,
    /// `appName`: the application, upper-cased as the registry keys it.
    pub app_name: String,
    /// `id`: the instance's key inside its application ([`Instance::id`]).
    pub id: String,
    pub last_dirty_timestamp: Option<Millis>,
    /// The override the sender holds for the instance; only heartbeats carry it.
    pub overridden_status: Option<InstanceStatus>,
    pub status: Option<InstanceStatus>,
    /// `instanceInfo`: only `Register` carries it.
    pub instance: Option<Instance>,
}

impl ReplicationItem {
    /// A registration (or re-registration after any change, metadata included) of `instance`.
    pub fn register(instance: Instance) -> ReplicationItem {
        let mut item = ReplicationItem::about(ReplicationAction::Register, &instance);
        item.instance = Some(instance);
        item
    }

    /// A renewal of the stored `instance`, with the override the sender holds for it.
    pub fn heartbeat(instance: &Instance, overridden: Option<InstanceStatus>) -> ReplicationItem {
        let mut item = ReplicationItem::about(ReplicationAction::Heartbeat, instance);
        item.overridden_status = overridden;
        item
    }

    pub fn cancel(app_name: &str, id: &str) -> ReplicationItem {
        ReplicationItem {
            action: ReplicationAction::Cancel,
            app_name: app_name.to_owned(),
            id: id.to_owned(),
            last_dirty_timestamp: None,
            overridden_status: None,
            status: None,
            instance: None,
        }
    }

    /// A status override set on the stored `instance`; `status` is the instance's status after
    /// the update.
    pub fn status_update(instance: &Instance) -> ReplicationItem {
        ReplicationItem::about(ReplicationAction::StatusUpdate, instance)
    }

    /// A status override removed from the stored `instance`, as it is after the removal.
    pub fn delete_status_override(instance: &Instance) -> ReplicationItem {
        ReplicationItem::about(ReplicationAction::DeleteStatusOverride, instance)
    }

    fn about(action: ReplicationAction, instance: &Instance) -> ReplicationItem {
        ReplicationItem {
            action,
            app_name: instance.app.clone(),
            id: instance.id().to_owned(),
            last_dirty_timestamp: Some(instance.last_dirty_timestamp),
            overridden_status: None,
            status: Some(instance.status),
            instance: None,
        }
    }
}

/// The receiver's answer to one element: Eureka's `ReplicationInstanceResponse`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicationResult {
    /// The HTTP status the same request would have had on its own endpoint.
    pub status_code: u16,
    /// `responseEntity`: the receiver's own, newer copy, sent with a heartbeat's 409.
    pub entity: Option<Instance>,
}

impl ReplicationResult {
    pub fn status(status_code: u16) -> ReplicationResult {
        ReplicationResult {
            status_code,
            entity: None,
        }
    }
}

/// `{"replicationList":[…]}`, byte for byte as Java's sender writes it.
pub fn encode_replication_batch(items: &[ReplicationItem]) -> Vec<u8> {
    let hint: usize = items
        .iter()
        .map(|item| {
            let instance = item
                .instance
                .as_ref()
                .map_or(0, |i| INSTANCE_MARKUP + size::instance_text(i));
            ITEM_MARKUP + item.app_name.len() + item.id.len() + instance
        })
        .sum();
    encode_list(br#"{"replicationList":["#, items, hint, encode_item)
}

/// Writes a peer's list, a batch or its answer: `opening` (`{"<list>":[`), each element by
/// `write` with commas between, `]}`; `hint` is the elements' expected size.
pub(crate) fn encode_list<T>(
    opening: &[u8],
    items: &[T],
    hint: usize,
    write: impl Fn(&mut Vec<u8>, &T),
) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + hint);
    out.extend_from_slice(opening);
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        write(&mut out, item);
    }
    out.extend_from_slice(b"]}");
    out
}

/// The opening of a batch's answer.
pub(crate) const RESPONSE_OPENING: &[u8] = br#"{"responseList":["#;

/// An answer's element up to its status code, `{"statusCode":N`; the caller adds the rest and
/// the closing brace.
pub(crate) fn open_result(out: &mut Vec<u8>, status_code: u16) {
    out.extend_from_slice(br#"{"statusCode":"#);
    push_u64(out, u64::from(status_code));
}

/// Field names, quotes and the longest values of an element without its instance, rounded up.
const ITEM_MARKUP: usize = 200;

/// The properties of `ReplicationInstance` in its constructor's order (Jackson puts creator
/// properties first, in parameter order), each left out when null.
fn encode_item(out: &mut Vec<u8>, item: &ReplicationItem) {
    out.extend_from_slice(br#"{"appName":"#);
    string(out, &item.app_name);
    out.extend_from_slice(br#","id":"#);
    string(out, &item.id);
    if let Some(timestamp) = item.last_dirty_timestamp {
        out.extend_from_slice(br#","lastDirtyTimestamp":"#);
        push_i64(out, timestamp);
    }
    if let Some(status) = item.overridden_status {
        push_status(out, br#","overriddenStatus":""#, status);
    }
    if let Some(status) = item.status {
        push_status(out, br#","status":""#, status);
    }
    if let Some(instance) = &item.instance {
        out.extend_from_slice(br#","instanceInfo":"#);
        instance_body(out, instance);
    }
    out.extend_from_slice(br#","action":""#);
    out.extend_from_slice(item.action.as_str().as_bytes());
    out.extend_from_slice(br#""}"#);
}

fn push_status(out: &mut Vec<u8>, key: &[u8], status: InstanceStatus) {
    out.extend_from_slice(key);
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b'"');
}

/// Reads a batch. The outer `Err` means the body as a whole is unreadable (not JSON, no
/// `replicationList` array), which deserves a 400; otherwise there is one entry per element, in
/// order, each the element or why it cannot be applied (that element's 500). `now` is parse
/// time, Java's default for an `instanceInfo`'s missing timestamps.
pub fn decode_replication_batch(
    body: &[u8],
    now: Millis,
) -> Result<Vec<Result<ReplicationItem, DecodeError>>, DecodeError> {
    let expected = r#"a JSON object {"replicationList":[…]}"#;
    decode_list(body, "replicationList", expected, |item| {
        decode_item(item, now)
    })
}

/// Reads a peer's list, a batch or its answer, `{"<list>":[…]}`, with `read` for each
/// element. The outer `Err` means the body is no such list (not JSON, no `list` array, which
/// `expected` describes); otherwise there is one entry per element, in order, an unreadable
/// one named by its place (`list[n]`). Both kinds of batch and both answers are read with it.
pub(crate) fn decode_list<T>(
    body: &[u8],
    list: &'static str,
    expected: &'static str,
    read: impl Fn(&Node<'_>) -> Result<T, DecodeError>,
) -> Result<Vec<Result<T, DecodeError>>, DecodeError> {
    let root = parse(body)?;
    let Some(Node::Array(elements)) = root.get(list) else {
        return Err(DecodeError::WrongRoot { expected });
    };
    Ok(elements
        .iter()
        .enumerate()
        .map(|(n, element)| read(element).map_err(|e| e.within(&format!("{list}[{n}]"))))
        .collect())
}

fn decode_item(node: &Node<'_>, now: Millis) -> Result<ReplicationItem, DecodeError> {
    let Node::Object(entries) = node else {
        return Err(DecodeError::field("", "is not an object"));
    };
    let (mut action, mut app_name, mut id) = (None, String::new(), String::new());
    let (mut last_dirty_timestamp, mut overridden_status, mut status, mut instance) =
        (None, None, None, None);
    // Fields are taken in document order, so a repeated key's last value wins, as with Jackson.
    // Unknown keys are skipped.
    for (key, value) in entries {
        if let Node::Null = value {
            continue;
        }
        match &**key {
            "action" => {
                let name = read_text(key, value)?;
                action = Some(
                    ReplicationAction::from_name(&name)
                        .ok_or_else(|| DecodeError::field("action", "is not a known action"))?,
                );
            }
            "appName" => app_name = fields::upper_case(&read_text(key, value)?),
            "id" => id = read_text(key, value)?,
            "lastDirtyTimestamp" => last_dirty_timestamp = read_int(key, value)?,
            "overriddenStatus" => overridden_status = Some(read_status(key, value)?),
            "status" => status = Some(read_status(key, value)?),
            "instanceInfo" => {
                instance = Some(read_instance(value, now).map_err(|e| e.within("instanceInfo"))?);
            }
            _ => {}
        }
    }
    let action = action.ok_or_else(|| DecodeError::field("action", "is missing"))?;
    if app_name.is_empty() {
        return Err(DecodeError::field("appName", "is missing"));
    }
    if id.is_empty() {
        return Err(DecodeError::field("id", "is missing"));
    }
    // Java's receiver fails such an element too (a null dereference, so a 500).
    if action == ReplicationAction::Register && instance.is_none() {
        return Err(DecodeError::field("instanceInfo", "is missing"));
    }
    Ok(ReplicationItem {
        action,
        app_name,
        id,
        last_dirty_timestamp,
        overridden_status,
        status,
        instance,
    })
}

/// A string property; like Jackson's `String` coercion, numbers and booleans count as text.
fn read_text(key: &str, value: &Node<'_>) -> Result<String, DecodeError> {
    scalar(value)
        .map(|s| s.text().into_owned())
        .ok_or_else(|| DecodeError::field(key, "is not a single value"))
}

/// A number property; like Jackson's, a numeric string is fine.
fn read_int(key: &str, value: &Node<'_>) -> Result<Option<i64>, DecodeError> {
    scalar(value)
        .ok_or_else(|| DecodeError::field(key, "is not a number"))?
        .int(&|| key.to_owned())
}

/// Statuses are exact enum names: read leniently, an unknown one would be applied as a real
/// change (an override of `UNKNOWN`), where Java's `InstanceStatus.valueOf` fails the element.
fn read_status(key: &str, value: &Node<'_>) -> Result<InstanceStatus, DecodeError> {
    InstanceStatus::from_name(&read_text(key, value)?)
        .ok_or_else(|| DecodeError::field(key, "is not an instance status"))
}

/// `{"responseList":[…]}`, byte for byte as Java's receiver writes it.
pub fn encode_replication_response(results: &[ReplicationResult]) -> Vec<u8> {
    let hint: usize = results
        .iter()
        .map(|result| {
            let entity = result
                .entity
                .as_ref()
                .map_or(0, |i| INSTANCE_MARKUP + size::instance_text(i));
            RESULT_MARKUP + entity
        })
        .sum();
    encode_list(RESPONSE_OPENING, results, hint, |out, result| {
        open_result(out, result.status_code);
        if let Some(entity) = &result.entity {
            out.extend_from_slice(br#","responseEntity":"#);
            instance_body(out, entity);
        }
        out.push(b'}');
    })
}

/// `{"statusCode":200,"responseEntity":` and the closing brace.
const RESULT_MARKUP: usize = 40;

/// Reads a receiver's answer. Any unreadable element fails the whole answer: the sender can act
/// on an answer only element by element against its own batch, so a partial one is no use.
/// An entity's missing timestamps are `0`, as in registry documents.
pub fn decode_replication_response(body: &[u8]) -> Result<Vec<ReplicationResult>, DecodeError> {
    decode_list(body, "responseList", RESPONSE_LIST, decode_result)?
        .into_iter()
        .collect()
}

/// What an answer that is no answer at all should have been.
pub(crate) const RESPONSE_LIST: &str = r#"a JSON object {"responseList":[…]}"#;

fn decode_result(node: &Node<'_>) -> Result<ReplicationResult, DecodeError> {
    let Node::Object(entries) = node else {
        return Err(DecodeError::field("", "is not an object"));
    };
    let mut status_code = None;
    let mut entity = None;
    for (key, value) in entries {
        match (&**key, value) {
            (_, Node::Null) => {}
            ("statusCode", value) => {
                status_code = read_int(key, value)?
                    .map(|code| {
                        u16::try_from(code)
                            .map_err(|_| DecodeError::field("statusCode", "is out of range"))
                    })
                    .transpose()?;
            }
            ("responseEntity", value) => {
                entity = Some(read_instance(value, 0).map_err(|e| e.within("responseEntity"))?);
            }
            _ => {}
        }
    }
    let status_code = status_code.ok_or_else(|| DecodeError::field("statusCode", "is missing"))?;
    Ok(ReplicationResult {
        status_code,
        entity,
    })
}
