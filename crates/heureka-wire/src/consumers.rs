//! Who fetches the registry, in Heureka's own JSON: `GET {base}/consumers` (this node's
//! consumers), and a drain's progress (`GET {base}/apps/{app}/{id}/drain`, the cluster's
//! consumers each with whether it holds the instance's change, and the peers' own views at
//! `GET {base}/peerreplication/drain`).
//!
//! ```json
//! {"node":"http://eureka-1:8761/eureka/","version":42,"now":1714550400000,"status":"OUT_OF_SERVICE",
//!  "required":41,"consumers":[{"address":"10.0.0.7","agent":"Java-EurekaClient/v1.10.18",
//!  "node":"http://eureka-1:8761/eureka/","firstSeen":1714550000000,"lastFull":1714550000000,
//!  "lastDelta":1714550399000,"lastFetch":1714550399000,"version":42,"behind":0,"confirmed":true}],
//!  "readers":[{"address":"10.0.0.9","agent":"curl/8.5.0",…}],"unseen":["http://eureka-java:8761/eureka/"]}
//! ```
//!
//! `status` and `required` (the registry version a consumer must hold to have seen the
//! instance's change) are only in a drain's progress; `confirmed` only there too. `consumers` are the clients that fetch periodically, which a drain waits for;
//! `readers` made one-off reads (a curl, a probe, `heureka apps`), listed apart and not waited
//! for (a document without `readers`, from an older node, lists everyone as a consumer).
//! `"push":true` marks a consumer that follows the push stream (`docs/push.md`) on its node.
//! `unseen` lists the peers whose consumers could not be asked (a Java server, a node that is
//! down).

use heureka_core::Millis;

use crate::error::DecodeError;
use crate::json::decode::parse;
use crate::json::object::{field_i64, field_str, field_u64};
use crate::json::tree::Node;

/// One consumer of the registry, as the node that served it saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsumerView {
    /// The address its requests came from.
    pub address: String,
    /// What it calls itself: `DiscoveryIdentity-Name/-Version (-Id)` when it sends them, else
    /// its `User-Agent`.
    pub agent: String,
    /// The node it fetched from.
    pub node: String,
    pub first_seen: Millis,
    pub last_full: Option<Millis>,
    pub last_delta: Option<Millis>,
    pub last_fetch: Millis,
    /// The registry version its last fetch returned (at least).
    pub version: u64,
    /// How many versions its node has moved past it.
    pub behind: u64,
    /// In a drain's progress: whether it holds the instance's change.
    pub confirmed: Option<bool>,
    /// It follows the push (`GET {base}/push`, `docs/push.md`) on this node: a stream of it is
    /// open now. Written only when true.
    pub push: bool,
}

/// A node's consumers, or a drain's progress over the cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsumersDoc {
    pub node: String,
    pub version: u64,
    pub now: Millis,
    /// In a drain's progress: the instance's status on this node.
    pub status: Option<String>,
    /// In a drain's progress: the version a consumer of this node must hold.
    pub required: Option<u64>,
    /// The clients that fetch periodically: what a drain waits for.
    pub consumers: Vec<ConsumerView>,
    /// One-off readers: listed apart, never waited for.
    pub readers: Vec<ConsumerView>,
    pub unseen: Vec<String>,
}

pub fn encode_consumers(doc: &ConsumersDoc) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + doc.consumers.len() * 256);
    out.extend_from_slice(br#"{"node":"#);
    crate::json::encode::string(&mut out, &doc.node);
    field_u64(&mut out, "version", doc.version);
    field_i64(&mut out, "now", doc.now);
    if let Some(status) = &doc.status {
        field_str(&mut out, "status", status);
    }
    if let Some(required) = doc.required {
        field_u64(&mut out, "required", required);
    }
    out.extend_from_slice(br#","consumers":["#);
    views(&mut out, &doc.consumers);
    out.extend_from_slice(br#"],"readers":["#);
    views(&mut out, &doc.readers);
    out.extend_from_slice(br#"],"unseen":["#);
    for (n, node) in doc.unseen.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        crate::json::encode::string(&mut out, node);
    }
    out.extend_from_slice(b"]}");
    out
}

fn views(out: &mut Vec<u8>, views: &[ConsumerView]) {
    for (n, consumer) in views.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#"{"address":"#);
        crate::json::encode::string(out, &consumer.address);
        field_str(out, "agent", &consumer.agent);
        field_str(out, "node", &consumer.node);
        field_i64(out, "firstSeen", consumer.first_seen);
        if let Some(at) = consumer.last_full {
            field_i64(out, "lastFull", at);
        }
        if let Some(at) = consumer.last_delta {
            field_i64(out, "lastDelta", at);
        }
        field_i64(out, "lastFetch", consumer.last_fetch);
        field_u64(out, "version", consumer.version);
        field_u64(out, "behind", consumer.behind);
        if let Some(confirmed) = consumer.confirmed {
            out.extend_from_slice(format!(r#","confirmed":{confirmed}"#).as_bytes());
        }
        if consumer.push {
            out.extend_from_slice(br#","push":true"#);
        }
        out.push(b'}');
    }
}

/// Reads [`encode_consumers`]'s document (a peer's view, or the CLI's drain progress).
pub fn decode_consumers(body: &[u8]) -> Result<ConsumersDoc, DecodeError> {
    let root = parse(body)?;
    let consumers = match root.get("consumers") {
        Some(Node::Array(items)) => list(items, "consumers")?,
        _ => return Err(DecodeError::field("consumers", "is not an array")),
    };
    let readers = match root.get("readers") {
        Some(Node::Array(items)) => list(items, "readers")?,
        _ => Vec::new(),
    };
    let unseen = match root.get("unseen") {
        Some(Node::Array(items)) => items
            .iter()
            .filter_map(|item| match item {
                Node::Str(text) => Some(text.to_string()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(ConsumersDoc {
        node: text(&root, "node").unwrap_or_default(),
        version: number(&root, "version")?.unwrap_or(0) as u64,
        now: number(&root, "now")?.unwrap_or(0),
        status: text(&root, "status"),
        required: number(&root, "required")?.map(|v| v as u64),
        consumers,
        readers,
        unseen,
    })
}

fn list(items: &[Node<'_>], name: &str) -> Result<Vec<ConsumerView>, DecodeError> {
    items
        .iter()
        .enumerate()
        .map(|(n, item)| consumer(item).map_err(|e| e.within(&format!("{name}[{n}]"))))
        .collect()
}

fn consumer(node: &Node<'_>) -> Result<ConsumerView, DecodeError> {
    Ok(ConsumerView {
        address: text(node, "address").unwrap_or_default(),
        agent: text(node, "agent").unwrap_or_default(),
        node: text(node, "node").unwrap_or_default(),
        first_seen: number(node, "firstSeen")?.unwrap_or(0),
        last_full: number(node, "lastFull")?,
        last_delta: number(node, "lastDelta")?,
        last_fetch: number(node, "lastFetch")?.unwrap_or(0),
        version: number(node, "version")?.unwrap_or(0) as u64,
        behind: number(node, "behind")?.unwrap_or(0) as u64,
        confirmed: match node.get("confirmed") {
            Some(Node::Bool(confirmed)) => Some(*confirmed),
            _ => None,
        },
        push: matches!(node.get("push"), Some(Node::Bool(true))),
    })
}

fn text(node: &Node<'_>, key: &str) -> Option<String> {
    match node.get(key) {
        Some(Node::Str(text)) => Some(text.to_string()),
        _ => None,
    }
}

fn number(node: &Node<'_>, key: &'static str) -> Result<Option<i64>, DecodeError> {
    match node.get(key) {
        None | Some(Node::Null) => Ok(None),
        Some(Node::Int(value)) if *value >= 0 => Ok(Some(*value)),
        Some(_) => Err(DecodeError::field(key, "is not a whole number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drain_progress_reads_back() {
        let doc = ConsumersDoc {
            node: "http://a:8761/eureka/".to_owned(),
            version: 42,
            now: 7,
            status: Some("OUT_OF_SERVICE".to_owned()),
            required: Some(41),
            consumers: vec![ConsumerView {
                address: "10.0.0.7".to_owned(),
                agent: "Java-EurekaClient/v1.10.18 \"x\"".to_owned(),
                node: "http://a:8761/eureka/".to_owned(),
                first_seen: 1,
                last_full: Some(2),
                last_delta: None,
                last_fetch: 2,
                version: 40,
                behind: 2,
                confirmed: Some(false),
                push: true,
            }],
            readers: vec![ConsumerView {
                address: "10.0.0.9".to_owned(),
                agent: "curl/8.5.0".to_owned(),
                node: "http://a:8761/eureka/".to_owned(),
                first_seen: 3,
                last_full: Some(3),
                last_fetch: 3,
                version: 39,
                behind: 3,
                ..ConsumerView::default()
            }],
            unseen: vec!["http://java:8761/eureka/".to_owned()],
        };
        assert_eq!(decode_consumers(&encode_consumers(&doc)).unwrap(), doc);
    }

    #[test]
    fn a_consumers_list_without_drain_fields_reads_back() {
        let doc = ConsumersDoc {
            node: "n".to_owned(),
            version: 3,
            ..ConsumersDoc::default()
        };
        let text = String::from_utf8(encode_consumers(&doc)).unwrap();
        assert_eq!(
            text,
            r#"{"node":"n","version":3,"now":0,"consumers":[],"readers":[],"unseen":[]}"#
        );
        assert_eq!(decode_consumers(text.as_bytes()).unwrap(), doc);
    }

    #[test]
    fn an_older_nodes_document_without_readers_lists_everyone_as_a_consumer() {
        let text = r#"{"node":"n","version":3,"now":0,"consumers":[{"address":"a","agent":"curl/8"}],"unseen":[]}"#;

        let doc = decode_consumers(text.as_bytes()).unwrap();

        assert_eq!((doc.consumers.len(), doc.readers.len()), (1, 0));
    }
}
