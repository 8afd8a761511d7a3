//! A JSON syntax tree that keeps object keys in document order, duplicates included.
//!
//! `serde_json::Value` sorts keys unless the workspace-wide `preserve_order` feature is on, and
//! Eureka's reading rules depend on order: with both `overriddenStatus` and `overriddenstatus`
//! present, the last one wins (`EurekaJacksonCodec` reads tokens in sequence).

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

#[derive(Debug)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
}

impl Node {
    /// Looks a key up; the last occurrence wins, as with a streaming reader.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Object(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Node, E> {
        Ok(Node::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Node, E> {
        Ok(Node::Int(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Node, E> {
        // Above i64::MAX nothing in Eureka fits anyway; keep it as a float so it reports
        // "out of range" / "not a number" rather than wrapping.
        Ok(i64::try_from(n)
            .map(Node::Int)
            .unwrap_or(Node::Float(n as f64)))
    }
    fn visit_f64<E>(self, x: f64) -> Result<Node, E> {
        Ok(Node::Float(x))
    }
    fn visit_str<E>(self, s: &str) -> Result<Node, E> {
        Ok(Node::Str(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Node, E> {
        Ok(Node::Str(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(entry) = map.next_entry::<String, Node>()? {
            entries.push(entry);
        }
        Ok(Node::Object(entries))
    }
}
