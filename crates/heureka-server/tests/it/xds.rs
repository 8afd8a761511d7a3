//! The xDS port over real sockets (`docs/xds.md`), with a tonic ADS client: the four
//! resources gRPC's `xds:///APP` resolver asks for, a change pushed to an open stream, a NACK
//! counted, authentication, and the port closed by default.

use std::time::Duration;

use envoy_types::pb::envoy::config::endpoint::v3::ClusterLoadAssignment;
use envoy_types::pb::envoy::config::listener::v3::Listener;
use envoy_types::pb::envoy::service::discovery::v3::aggregated_discovery_service_client::AggregatedDiscoveryServiceClient;
use envoy_types::pb::envoy::service::discovery::v3::{DiscoveryRequest, DiscoveryResponse};
use envoy_types::pb::google::rpc::Status as RpcStatus;
use prost::{Message, Name};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;

use crate::support::{TestServer, CREDENTIALS};

/// How long a response may take to come: far more than the second the issue allows.
const RESPONSE_DEADLINE: Duration = Duration::from_secs(10);

/// A server with the xDS port on, and the port.
async fn with_xds(extra: &[&str]) -> (TestServer, u16) {
    let port = heureka_testkit::free_port();
    let port_arg = format!("--heureka.xds.port={port}");
    let mut args = vec![
        "--heureka.xds.enabled=true",
        port_arg.as_str(),
        "--server.address=127.0.0.1",
    ];
    args.extend_from_slice(extra);
    (TestServer::start(&args).await, port)
}

/// One open ADS stream.
struct Ads {
    requests: mpsc::Sender<DiscoveryRequest>,
    responses: Streaming<DiscoveryResponse>,
}

impl Ads {
    async fn open(port: u16, authorization: Option<&str>) -> Result<Ads, tonic::Status> {
        let mut client =
            AggregatedDiscoveryServiceClient::connect(format!("http://127.0.0.1:{port}"))
                .await
                .expect("the xDS port accepts connections");
        let (requests, receiver) = mpsc::channel(8);
        let mut request = tonic::Request::new(ReceiverStream::new(receiver));
        if let Some(value) = authorization {
            request
                .metadata_mut()
                .insert("authorization", value.parse().unwrap());
        }
        let responses = client
            .stream_aggregated_resources(request)
            .await?
            .into_inner();
        Ok(Ads {
            requests,
            responses,
        })
    }

    async fn ask(&self, type_url: String, name: &str, nonce: &str) {
        let request = DiscoveryRequest {
            type_url,
            resource_names: vec![name.to_owned()],
            response_nonce: nonce.to_owned(),
            ..Default::default()
        };
        self.requests.send(request).await.unwrap();
    }

    async fn next(&mut self) -> DiscoveryResponse {
        tokio::time::timeout(RESPONSE_DEADLINE, self.responses.message())
            .await
            .expect("a response within the deadline")
            .expect("the stream is open")
            .expect("a response, not the stream's end")
    }

    /// Subscribes to the endpoints of `name` and returns the first assignment, ACKed.
    async fn endpoints(&mut self, name: &str) -> (ClusterLoadAssignment, String) {
        self.ask(ClusterLoadAssignment::type_url(), name, "").await;
        let response = self.next().await;
        self.ask(ClusterLoadAssignment::type_url(), name, &response.nonce)
            .await;
        (assignment(&response), response.nonce)
    }
}

fn assignment(response: &DiscoveryResponse) -> ClusterLoadAssignment {
    assert_eq!(response.type_url, ClusterLoadAssignment::type_url());
    ClusterLoadAssignment::decode(response.resources[0].value.as_slice()).unwrap()
}

fn endpoint_count(assignment: &ClusterLoadAssignment) -> usize {
    assignment
        .endpoints
        .iter()
        .map(|locality| locality.lb_endpoints.len())
        .sum()
}

#[tokio::test]
async fn a_listener_is_served_for_a_registered_application_by_its_lower_case_name() {
    let (server, port) = with_xds(&[]).await;
    server.register("ORDERS", "o-1").await;
    let mut ads = Ads::open(port, None).await.unwrap();
    ads.ask(Listener::type_url(), "orders", "").await;
    let response = ads.next().await;
    let listener = Listener::decode(response.resources[0].value.as_slice()).unwrap();
    assert_eq!(listener.name, "orders");
    assert!(listener.api_listener.is_some());
}

#[tokio::test]
async fn the_endpoints_are_the_up_instances_at_their_address_and_port() {
    let (server, port) = with_xds(&[]).await;
    server.register("ORDERS", "o-1").await;
    let mut ads = Ads::open(port, None).await.unwrap();
    let (assignment, _) = ads.endpoints("orders").await;
    assert_eq!(endpoint_count(&assignment), 1);
    let address = format!("{:?}", assignment.endpoints[0].lb_endpoints[0]);
    assert!(
        address.contains("10.0.0.5") && address.contains("8080"),
        "{address}"
    );
}

#[tokio::test]
async fn an_out_of_service_override_is_pushed_to_an_open_stream() {
    let (server, port) = with_xds(&[]).await;
    server.register("ORDERS", "o-1").await;
    server.register("ORDERS", "o-2").await;
    let mut ads = Ads::open(port, None).await.unwrap();
    let (before, _) = ads.endpoints("orders").await;
    assert_eq!(endpoint_count(&before), 2);
    server.take_out_of_service("ORDERS", "o-1").await;
    let after = assignment(&ads.next().await);
    assert_eq!(endpoint_count(&after), 1);
}

#[tokio::test]
async fn a_nack_is_counted_in_the_metrics_and_the_answer_not_repeated() {
    let (server, port) = with_xds(&[]).await;
    server.register("ORDERS", "o-1").await;
    let mut ads = Ads::open(port, None).await.unwrap();
    ads.ask(ClusterLoadAssignment::type_url(), "orders", "")
        .await;
    let first = ads.next().await;
    let nack = DiscoveryRequest {
        type_url: ClusterLoadAssignment::type_url(),
        resource_names: vec!["orders".to_owned()],
        response_nonce: first.nonce.clone(),
        error_detail: Some(RpcStatus {
            code: 3,
            message: "rejected for the test".to_owned(),
            details: Vec::new(),
        }),
        ..Default::default()
    };
    ads.requests.send(nack).await.unwrap();
    // A change after the NACK is the next thing the stream sends, not the rejected answer.
    server.register("ORDERS", "o-2").await;
    let next = assignment(&ads.next().await);
    assert_eq!(endpoint_count(&next), 2);
    let metrics = server.root_url("/actuator/prometheus");
    let text = server
        .http
        .get(metrics)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(text.contains("heureka_xds_nacks_total 1"), "{text}");
}

#[tokio::test]
async fn with_authentication_on_a_stream_without_credentials_is_refused() {
    let (server, port) = with_xds(&CREDENTIALS).await;
    let _ = server.status(reqwest::Method::GET, "/apps").await;
    let refused = Ads::open(port, None).await.err().expect("refused");
    assert_eq!(refused.code(), tonic::Code::Unauthenticated);
}

#[tokio::test]
async fn with_authentication_on_a_user_with_the_read_role_is_served() {
    let (server, port) = with_xds(&CREDENTIALS).await;
    let body = heureka_testkit::spring_body("ORDERS", "o-1");
    let registered = server
        .request(reqwest::Method::POST, "/apps/ORDERS")
        .basic_auth("eureka", Some("s3cret"))
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(registered.status(), 204);
    let basic = "Basic ZXVyZWthOnMzY3JldA=="; // eureka:s3cret
    let mut ads = Ads::open(port, Some(basic)).await.unwrap();
    let (assignment, _) = ads.endpoints("orders").await;
    assert_eq!(endpoint_count(&assignment), 1);
}

#[tokio::test]
async fn the_xds_port_is_closed_unless_enabled() {
    let port = heureka_testkit::free_port();
    let port_arg = format!("--heureka.xds.port={port}");
    let server = TestServer::start(&[port_arg.as_str(), "--server.address=127.0.0.1"]).await;
    server.register("ORDERS", "o-1").await;
    let connected = tokio::net::TcpStream::connect(("127.0.0.1", port)).await;
    assert!(connected.is_err());
}

#[tokio::test]
async fn a_connection_beyond_max_streams_is_closed_at_once_and_served_once_a_slot_is_free() {
    use tokio::io::AsyncReadExt;
    let (server, port) = with_xds(&["--heureka.xds.max-streams=1"]).await;
    server.register("ORDERS", "o-1").await;
    let mut first = Ads::open(port, None).await.unwrap();
    assert_eq!(endpoint_count(&first.endpoints("orders").await.0), 1);
    let mut second = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(RESPONSE_DEADLINE, second.read(&mut byte))
        .await
        .expect("the connection is closed within the deadline");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    drop(first);
    // The slot is given back when the first connection closes, which the server learns a
    // moment after the client drops it.
    heureka_testkit::eventually(
        "a new connection is served once the first closed",
        || async {
            let address = format!("http://127.0.0.1:{port}");
            if AggregatedDiscoveryServiceClient::connect(address)
                .await
                .is_err()
            {
                return false;
            }
            match Ads::open(port, None).await {
                Ok(mut ads) => endpoint_count(&ads.endpoints("orders").await.0) == 1,
                Err(_) => false,
            }
        },
    )
    .await;
}
