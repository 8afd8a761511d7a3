//! The remote regions this server fetches, in Heureka's own JSON: `GET {base}/regions`.
//!
//! ```json
//! {"region":"us-east-1","fallback":true,"regions":[{"name":"us-west",
//!  "url":"http://h:8761/eureka/","state":"ready","lastSuccess":1733400000000,
//!  "lastAttempt":1733400000000,"lagMs":1234,"staleAfterMs":600000,"applications":3,
//!  "instances":12,"error":null,"fetches":{"full":1,"delta":10,"mismatches":0,"failures":0}}]}
//! ```
//!
//! `regions` is in configuration order; `url` never holds credentials (the server strips
//! them before it writes the document); `lagMs` is now minus `lastSuccess`.

use heureka_core::Millis;

use crate::error::DecodeError;
use crate::json::decode::parse;
use crate::json::encode::string;
use crate::json::object::{bool_text, field_str, field_u64, list};
use crate::json::tree::Node;
use crate::numbers::push_i64;

/// The regions a server fetches, and which region it is itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegionsDoc {
    /// `eureka.client.region` of the answering server.
    pub region: String,
    /// Whether reads without `regions=` fall back to the remote regions.
    pub fallback: bool,
    /// One view per configured region, in configuration order.
    pub regions: Vec<RegionView>,
}

/// One remote region as the answering server holds it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegionView {
    pub name: String,
    /// The remote server's base URL, without user information.
    pub url: String,
    /// `starting`, `ready`, `stale` or `dropped`.
    pub state: String,
    pub last_success: Option<Millis>,
    pub last_attempt: Option<Millis>,
    pub lag_ms: Option<i64>,
    pub stale_after_ms: u64,
    /// Applications and instances held (0 once dropped).
    pub applications: u64,
    pub instances: u64,
    /// Why the last fetch failed, one line; none after a success.
    pub error: Option<String>,
    pub fetches: FetchCounts,
}

/// How many fetches of one region were made, and how they went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FetchCounts {
    pub full: u64,
    pub delta: u64,
    /// Deltas whose `apps__hashcode` disagreed with the view they were applied to.
    pub mismatches: u64,
    pub failures: u64,
}

pub fn encode_regions(doc: &RegionsDoc) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + doc.regions.len() * 320);
    out.extend_from_slice(br#"{"region":"#);
    string(&mut out, &doc.region);
    out.extend_from_slice(br#","fallback":"#);
    out.extend_from_slice(bool_text(doc.fallback));
    out.extend_from_slice(br#","regions":"#);
    list(&mut out, &doc.regions, region);
    out.push(b'}');
    out
}

fn region(out: &mut Vec<u8>, view: &RegionView) {
    out.extend_from_slice(br#"{"name":"#);
    string(out, &view.name);
    field_str(out, "url", &view.url);
    field_str(out, "state", &view.state);
    optional_number(out, "lastSuccess", view.last_success);
    optional_number(out, "lastAttempt", view.last_attempt);
    optional_number(out, "lagMs", view.lag_ms);
    field_u64(out, "staleAfterMs", view.stale_after_ms);
    field_u64(out, "applications", view.applications);
    field_u64(out, "instances", view.instances);
    out.extend_from_slice(br#","error":"#);
    match &view.error {
        Some(error) => string(out, error),
        None => out.extend_from_slice(b"null"),
    }
    let counts = view.fetches;
    out.extend_from_slice(br#","fetches":{"full":"#);
    crate::numbers::push_u64(out, counts.full);
    field_u64(out, "delta", counts.delta);
    field_u64(out, "mismatches", counts.mismatches);
    field_u64(out, "failures", counts.failures);
    out.extend_from_slice(b"}}");
}

fn optional_number(out: &mut Vec<u8>, name: &str, value: Option<i64>) {
    out.push(b',');
    string(out, name);
    out.push(b':');
    match value {
        Some(value) => push_i64(out, value),
        None => out.extend_from_slice(b"null"),
    }
}

/// Reads [`encode_regions`]'s document (the CLI's `heureka regions`).
pub fn decode_regions(body: &[u8]) -> Result<RegionsDoc, DecodeError> {
    let root = parse(body)?;
    let regions = match root.get("regions") {
        Some(Node::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(n, item)| view(item).map_err(|e| e.within(&format!("regions[{n}]"))))
            .collect::<Result<_, _>>()?,
        _ => return Err(DecodeError::field("regions", "is not an array")),
    };
    Ok(RegionsDoc {
        region: text(&root, "region").unwrap_or_default(),
        fallback: matches!(root.get("fallback"), Some(Node::Bool(true))),
        regions,
    })
}

fn view(node: &Node<'_>) -> Result<RegionView, DecodeError> {
    let counts = node.get("fetches");
    let count = |key: &'static str| -> Result<u64, DecodeError> {
        match counts {
            Some(counts) => Ok(whole(counts, key)?.unwrap_or(0) as u64),
            None => Ok(0),
        }
    };
    Ok(RegionView {
        name: text(node, "name").unwrap_or_default(),
        url: text(node, "url").unwrap_or_default(),
        state: text(node, "state").unwrap_or_default(),
        last_success: whole(node, "lastSuccess")?,
        last_attempt: whole(node, "lastAttempt")?,
        lag_ms: whole(node, "lagMs")?,
        stale_after_ms: whole(node, "staleAfterMs")?.unwrap_or(0) as u64,
        applications: whole(node, "applications")?.unwrap_or(0) as u64,
        instances: whole(node, "instances")?.unwrap_or(0) as u64,
        error: text(node, "error"),
        fetches: FetchCounts {
            full: count("full")?,
            delta: count("delta")?,
            mismatches: count("mismatches")?,
            failures: count("failures")?,
        },
    })
}

fn text(node: &Node<'_>, key: &str) -> Option<String> {
    match node.get(key) {
        Some(Node::Str(text)) => Some(text.to_string()),
        _ => None,
    }
}

fn whole(node: &Node<'_>, key: &'static str) -> Result<Option<i64>, DecodeError> {
    match node.get(key) {
        None | Some(Node::Null) => Ok(None),
        Some(Node::Int(value)) if *value >= 0 => Ok(Some(*value)),
        Some(_) => Err(DecodeError::field(key, "is not a whole number")),
    }
}

#[cfg(test)]
mod tests;
