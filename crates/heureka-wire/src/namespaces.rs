//! `GET {prefix}` (`/ns`): the namespaces of a server with their counts, Heureka's own
//! document, in JSON.

use crate::error::DecodeError;
use crate::json::decode::parse;
use crate::json::encode::string;
use crate::json::object::{bool_text, field_u64, list};
use crate::json::tree::Node;

/// One namespace as the listing shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NamespaceView {
    pub name: String,
    pub applications: u64,
    pub instances: u64,
    /// Whether its registry is in self-preservation (expired leases kept).
    pub self_preservation: bool,
    /// Renewals counted in its previous complete minute, and the threshold under which its
    /// self-preservation begins: each namespace has its own.
    pub renews_last_min: u64,
    pub renews_threshold: u64,
}

/// `{"namespaces":[{"name":"default","applications":2,"instances":3,"selfPreservation":false,
/// "renewsLastMin":4,"renewsThreshold":5}]}`
pub fn encode_namespaces(namespaces: &[NamespaceView]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + 96 * namespaces.len());
    out.extend_from_slice(br#"{"namespaces":"#);
    list(&mut out, namespaces, |out, namespace| {
        out.extend_from_slice(br#"{"name":"#);
        string(out, &namespace.name);
        field_u64(out, "applications", namespace.applications);
        field_u64(out, "instances", namespace.instances);
        out.extend_from_slice(br#","selfPreservation":"#);
        out.extend_from_slice(bool_text(namespace.self_preservation));
        field_u64(out, "renewsLastMin", namespace.renews_last_min);
        field_u64(out, "renewsThreshold", namespace.renews_threshold);
        out.push(b'}');
    });
    out.push(b'}');
    out
}

/// The names a peer's [`encode_namespaces`] listing shows (its counts are not needed to
/// learn which namespaces it holds). Entries without a string `name` are skipped.
pub fn decode_namespace_names(body: &[u8]) -> Result<Vec<String>, DecodeError> {
    let root = parse(body)?;
    let Some(Node::Array(entries)) = root.get("namespaces") else {
        return Err(DecodeError::field("namespaces", "is not a list"));
    };
    Ok(entries
        .iter()
        .filter_map(|entry| match entry.get("name") {
            Some(Node::Str(name)) => Some(name.to_string()),
            _ => None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_reads_back_as_its_names() {
        let listed = encode_namespaces(&[
            NamespaceView {
                name: "default".to_owned(),
                ..NamespaceView::default()
            },
            NamespaceView {
                name: "team-a".to_owned(),
                instances: 3,
                ..NamespaceView::default()
            },
        ]);
        assert_eq!(
            decode_namespace_names(&listed).unwrap(),
            vec!["default".to_owned(), "team-a".to_owned()]
        );
    }

    #[test]
    fn a_document_without_a_list_of_namespaces_is_refused() {
        assert!(decode_namespace_names(br#"{"applications":{}}"#).is_err());
    }

    #[test]
    fn each_namespace_is_listed_with_its_counts() {
        let listed = encode_namespaces(&[NamespaceView {
            name: "team-a".into(),
            applications: 2,
            instances: 3,
            self_preservation: true,
            renews_last_min: 4,
            renews_threshold: 5,
        }]);
        let value: serde_json::Value = serde_json::from_slice(&listed).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"namespaces":[{"name":"team-a","applications":2,"instances":3,"selfPreservation":true,
                "renewsLastMin":4,"renewsThreshold":5}]})
        );
    }

    #[test]
    fn no_namespace_is_an_empty_list() {
        assert_eq!(encode_namespaces(&[]), br#"{"namespaces":[]}"#);
    }
}
