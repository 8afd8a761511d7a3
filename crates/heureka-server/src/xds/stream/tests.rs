//! The protocol rules of one stream: ACK, NACK, stale nonces, resending only what changed.

use std::sync::Arc;

use envoy_types::pb::google::rpc::Status as RpcStatus;

use super::*;

fn request(kind: Kind, names: &[&str], nonce: &str) -> DiscoveryRequest {
    DiscoveryRequest {
        type_url: kind.type_url(),
        resource_names: names.iter().map(|name| (*name).to_owned()).collect(),
        response_nonce: nonce.to_owned(),
        ..Default::default()
    }
}

fn endpoint(address: &str) -> Endpoint {
    Endpoint {
        zone: String::new(),
        address: address.to_owned(),
        port: 9000,
    }
}

fn view(endpoints: &[(&str, Option<Vec<Endpoint>>)]) -> View {
    View {
        endpoints: endpoints
            .iter()
            .map(|(name, found)| ((*name).to_owned(), found.clone().map(Arc::new)))
            .collect(),
        applications: Vec::new(),
        version: None,
    }
}

/// A stream subscribed to the endpoints of `orders`, its first response ACKed.
fn acked_endpoints(current: &View) -> (StreamState, DiscoveryResponse) {
    let mut stream = StreamState::default();
    stream
        .receive(&request(Kind::Endpoints, &["orders"], ""))
        .unwrap();
    let first = stream.responses(current, "r").remove(0);
    let ack = request(Kind::Endpoints, &["orders"], &first.nonce);
    assert_eq!(stream.receive(&ack), Ok(Received::Ack));
    (stream, first)
}

#[test]
fn a_first_request_is_answered_with_the_resources_that_exist() {
    let mut stream = StreamState::default();
    let received = stream.receive(&request(Kind::Listener, &["orders", "nothing"], ""));
    assert_eq!(received, Ok(Received::Subscribed));
    let current = view(&[
        ("orders", Some(vec![endpoint("10.0.0.1")])),
        ("nothing", None),
    ]);
    let responses = stream.responses(&current, "r");
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0].type_url, Listener::type_url());
    assert_eq!(responses[0].resources.len(), 1);
    assert!(!responses[0].nonce.is_empty());
}

#[test]
fn an_acked_response_is_not_sent_again_while_nothing_changed() {
    let current = view(&[("orders", Some(vec![endpoint("10.0.0.1")]))]);
    let (mut stream, _) = acked_endpoints(&current);
    assert!(stream.responses(&current, "r").is_empty());
}

#[test]
fn changed_endpoints_are_sent_with_a_new_version_and_nonce() {
    let before = view(&[("orders", Some(vec![endpoint("10.0.0.1")]))]);
    let (mut stream, first) = acked_endpoints(&before);
    let after = view(&[("orders", Some(vec![]))]);
    let responses = stream.responses(&after, "r");
    assert_eq!(responses.len(), 1);
    assert_ne!(responses[0].version_info, first.version_info);
    assert_ne!(responses[0].nonce, first.nonce);
}

#[test]
fn a_nack_is_reported_with_the_clients_message_and_the_rejected_answer_is_not_resent() {
    let current = view(&[("orders", Some(vec![endpoint("10.0.0.1")]))]);
    let mut stream = StreamState::default();
    stream
        .receive(&request(Kind::Endpoints, &["orders"], ""))
        .unwrap();
    let first = stream.responses(&current, "r").remove(0);
    let mut nack = request(Kind::Endpoints, &["orders"], &first.nonce);
    nack.error_detail = Some(RpcStatus {
        code: 3,
        message: "bad endpoint".to_owned(),
        details: Vec::new(),
    });
    assert_eq!(
        stream.receive(&nack),
        Ok(Received::Nack {
            type_url: Kind::Endpoints.type_url(),
            version: String::new(),
            message: "bad endpoint".to_owned(),
        })
    );
    assert!(stream.responses(&current, "r").is_empty());
}

#[test]
fn a_request_answering_an_older_nonce_is_stale_and_changes_nothing() {
    let before = view(&[("orders", Some(vec![endpoint("10.0.0.1")]))]);
    let (mut stream, first) = acked_endpoints(&before);
    let after = view(&[("orders", Some(vec![]))]);
    stream.responses(&after, "r");
    let late = request(Kind::Endpoints, &["orders", "billing"], &first.nonce);
    assert_eq!(stream.receive(&late), Ok(Received::Stale));
    assert!(!stream.wanted().names.contains("billing"));
}

#[test]
fn a_new_subscription_is_answered_even_when_no_resource_exists() {
    let current = view(&[("orders", Some(vec![endpoint("10.0.0.1")]))]);
    let (mut stream, first) = acked_endpoints(&current);
    let more = request(Kind::Endpoints, &["orders", "billing"], &first.nonce);
    assert_eq!(stream.receive(&more), Ok(Received::Subscribed));
    let responses = stream.responses(&current, "r");
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0].resources.len(), 1);
}

#[test]
fn only_the_types_whose_content_changed_are_sent() {
    let mut stream = StreamState::default();
    stream
        .receive(&request(Kind::Cluster, &["orders"], ""))
        .unwrap();
    stream
        .receive(&request(Kind::Endpoints, &["orders"], ""))
        .unwrap();
    let before = view(&[("orders", Some(vec![endpoint("10.0.0.1")]))]);
    assert_eq!(stream.responses(&before, "r").len(), 2);
    let after = view(&[("orders", Some(vec![endpoint("10.0.0.2")]))]);
    let responses = stream.responses(&after, "r");
    let types: Vec<&str> = responses.iter().map(|r| r.type_url.as_str()).collect();
    assert_eq!(types, [ClusterLoadAssignment::type_url()]);
}

#[test]
fn an_empty_listener_request_is_a_wildcard_answered_with_every_application() {
    let mut stream = StreamState::default();
    stream.receive(&request(Kind::Listener, &[], "")).unwrap();
    let wanted = stream.wanted();
    assert!(wanted.wildcard);
    let current = View {
        endpoints: BTreeMap::new(),
        applications: vec!["BILLING".to_owned(), "ORDERS".to_owned()],
        version: None,
    };
    assert_eq!(stream.responses(&current, "r")[0].resources.len(), 2);
}

#[test]
fn endpoints_are_never_asked_for_by_wildcard() {
    let mut stream = StreamState::default();
    stream.receive(&request(Kind::Endpoints, &[], "")).unwrap();
    assert!(!stream.wanted().wildcard);
}

#[test]
fn too_many_names_in_one_request_are_refused() {
    let mut stream = StreamState::default();
    let names: Vec<String> = (0..=MAX_NAMES_PER_REQUEST).map(|n| n.to_string()).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    assert!(stream
        .receive(&request(Kind::Listener, &names, ""))
        .is_err());
}

#[test]
fn an_unknown_type_is_ignored() {
    let mut stream = StreamState::default();
    let secret = DiscoveryRequest {
        type_url: "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret".into(),
        ..Default::default()
    };
    assert!(matches!(
        stream.receive(&secret),
        Ok(Received::UnknownType(_))
    ));
    assert!(stream.responses(&View::default(), "r").is_empty());
}

#[test]
fn a_nonce_from_an_earlier_stream_on_a_new_type_is_a_first_request() {
    let mut stream = StreamState::default();
    let resumed = request(Kind::Cluster, &["orders"], "41");
    assert_eq!(stream.receive(&resumed), Ok(Received::Subscribed));
    let current = view(&[("orders", Some(vec![endpoint("10.0.0.1")]))]);
    assert_eq!(stream.responses(&current, "r").len(), 1);
}

#[test]
fn an_ack_calls_for_no_read_while_the_registry_has_not_moved() {
    let mut stream = StreamState::default();
    stream
        .receive(&request(Kind::Endpoints, &["orders"], ""))
        .unwrap();
    assert!(stream.read_needed(7, stream.wanted()).is_some());
    let first = stream.responses(&view(&[("orders", None)]), "r").remove(0);
    stream
        .receive(&request(Kind::Endpoints, &["orders"], &first.nonce))
        .unwrap();
    assert_eq!(stream.read_needed(7, stream.wanted()), None);
}

#[test]
fn a_registry_change_calls_for_a_read() {
    let current = view(&[("orders", Some(vec![endpoint("10.0.0.1")]))]);
    let (mut stream, _) = acked_endpoints(&current);
    assert!(stream.read_needed(7, stream.wanted()).is_some());
    assert!(stream.read_needed(8, stream.wanted()).is_some());
}

#[test]
fn a_new_type_for_names_already_read_calls_for_a_read() {
    let current = view(&[("orders", Some(vec![endpoint("10.0.0.1")]))]);
    let (mut stream, _) = acked_endpoints(&current);
    assert!(stream.read_needed(7, stream.wanted()).is_some());
    stream
        .receive(&request(Kind::Cluster, &["orders"], ""))
        .unwrap();
    let wanted = stream.read_needed(7, stream.wanted()).cloned();
    assert_eq!(wanted.map(|w| w.names.len()), Some(1));
    assert_eq!(stream.responses(&current, "r").len(), 1);
}

#[test]
fn an_unchanged_type_is_not_built_again_from_the_same_registry_version() {
    let mut stream = StreamState::default();
    stream
        .receive(&request(Kind::Endpoints, &["orders"], ""))
        .unwrap();
    let mut first = view(&[("orders", Some(vec![endpoint("10.0.0.1")]))]);
    first.version = Some(7);
    let sent = stream.responses(&first, "r").remove(0);
    stream
        .receive(&request(Kind::Endpoints, &["orders"], &sent.nonce))
        .unwrap();
    let mut same_version = view(&[("orders", Some(vec![endpoint("10.0.0.2")]))]);
    same_version.version = Some(7);
    assert!(stream.responses(&same_version, "r").is_empty());
    same_version.version = Some(8);
    assert_eq!(stream.responses(&same_version, "r").len(), 1);
}
