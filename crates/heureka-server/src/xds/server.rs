//! The ADS server: `envoy.service.discovery.v3.AggregatedDiscoveryService`, state of the
//! world, over tonic. Each stream is a task that takes the client's requests, wakes on every
//! registry change (`hub.rs`), re-reads under the store's lock only what its subscriptions
//! need (through the shared `cache.rs`, and not at all when neither the registry nor the
//! subscriptions moved), and sends the types whose content changed (`stream.rs`). Incremental (delta) xDS is
//! answered UNIMPLEMENTED; gRPC and Envoy then use state of the world.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use envoy_types::pb::envoy::service::discovery::v3::aggregated_discovery_service_server::{
    AggregatedDiscoveryService, AggregatedDiscoveryServiceServer,
};
use envoy_types::pb::envoy::service::discovery::v3::{
    DeltaDiscoveryRequest, DeltaDiscoveryResponse, DiscoveryRequest, DiscoveryResponse,
};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

use super::hub::Xds;
use super::incoming::{self, Peer};
use super::stream::{Received, Refusal, StreamState, View};
use crate::clock;
use crate::security::roles;
use crate::security::roles::Role;
use crate::security::users::{authenticate, Users};
use crate::store::Store;
use crate::tls::ServerTls;

/// The largest request taken: a request names a few resources.
const MAX_REQUEST_BYTES: usize = 1024 * 1024;
/// The largest response sent: every application's listeners for a wildcard, or one large
/// application's endpoints.
const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;
/// Responses queued for a stream before its task waits for the client to read.
const QUEUED_RESPONSES: usize = 8;
/// A client that reads nothing for this long loses its stream.
const SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// What every stream's task needs.
#[derive(Debug)]
pub(crate) struct Context {
    pub(crate) store: Arc<Store>,
    pub(crate) xds: Arc<Xds>,
    /// The API's users; `None`: authentication off.
    pub(crate) users: Option<Users>,
    /// Flips to true at shutdown: every stream ends.
    pub(crate) closing: watch::Receiver<bool>,
}

/// Serves ADS on `listener` (TLS when `tls`) until `context.closing` flips.
pub(crate) async fn serve(listener: TcpListener, tls: Option<Arc<ServerTls>>, context: Context) {
    let mut closing = context.closing.clone();
    let max_connections = context.xds.settings.max_streams;
    let service = AggregatedDiscoveryServiceServer::new(Service(Arc::new(context)))
        .max_decoding_message_size(MAX_REQUEST_BYTES)
        .max_encoding_message_size(MAX_RESPONSE_BYTES);
    let result = tonic::transport::Server::builder()
        .add_service(service)
        .serve_with_incoming_shutdown(
            incoming::accept(listener, tls, max_connections),
            async move {
                let _ = closing.wait_for(|closing| *closing).await;
            },
        )
        .await;
    if let Err(error) = result {
        tracing::error!(%error, "xDS server stopped");
    }
}

#[derive(Debug)]
struct Service(Arc<Context>);

type Responses = Pin<Box<dyn Stream<Item = Result<DiscoveryResponse, Status>> + Send>>;
type DeltaResponses = Pin<Box<dyn Stream<Item = Result<DeltaDiscoveryResponse, Status>> + Send>>;

#[tonic::async_trait]
impl AggregatedDiscoveryService for Service {
    type StreamAggregatedResourcesStream = Responses;
    type DeltaAggregatedResourcesStream = DeltaResponses;

    async fn stream_aggregated_resources(
        &self,
        request: Request<Streaming<DiscoveryRequest>>,
    ) -> Result<Response<Responses>, Status> {
        let context = &self.0;
        let peer = request
            .extensions()
            .get::<Peer>()
            .cloned()
            .unwrap_or_default();
        authorise(context, &request, &peer).await?;
        let Some(permit) = context.xds.stream_permit() else {
            context.xds.metrics.xds().refused.inc();
            return Err(Status::resource_exhausted(
                "heureka.xds.max-streams streams are open",
            ));
        };
        let (sender, responses) = mpsc::channel(QUEUED_RESPONSES);
        let context = Arc::clone(context);
        let requests = request.into_inner();
        tokio::spawn(async move {
            let _permit = permit;
            let _counted = context.xds.metrics.xds_stream();
            follow(&context, requests, &sender, &peer).await;
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(responses))))
    }

    async fn delta_aggregated_resources(
        &self,
        _request: Request<Streaming<DeltaDiscoveryRequest>>,
    ) -> Result<Response<DeltaResponses>, Status> {
        Err(Status::unimplemented(
            "incremental xDS is not served: use state-of-the-world ADS",
        ))
    }
}

/// Lets a stream in only as a configured user with the `read` role, by an `authorization:
/// Basic` header or a client certificate mapped to a user, as the API does.
async fn authorise<T>(context: &Context, request: &Request<T>, peer: &Peer) -> Result<(), Status> {
    if context.users.is_none() {
        return Ok(());
    }
    let presented = request
        .metadata()
        .get("authorization")
        .map(|value| value.as_bytes());
    let certificate = peer.certificate.as_ref().map(|names| names.as_slice());
    let Some(principal) = authenticate(context.users.as_ref(), presented, certificate).await else {
        tracing::info!(peer = ?peer.address, "rejected an unauthenticated xDS stream");
        return Err(Status::unauthenticated(
            "an xDS stream needs a user: basic credentials or a client certificate mapped to one",
        ));
    };
    roles::allows(principal.grant(), Role::Read, None).map_err(|_| {
        Status::permission_denied(format!("user {} lacks the read role", principal.name()))
    })
}

/// One stream's life: answer requests and registry changes until the client goes, the server
/// closes, or the client reads nothing for `SEND_TIMEOUT`.
async fn follow(
    context: &Context,
    mut requests: Streaming<DiscoveryRequest>,
    sender: &mpsc::Sender<Result<DiscoveryResponse, Status>>,
    peer: &Peer,
) {
    let mut state = StreamState::default();
    let mut versions = context.xds.versions();
    let mut closing = context.closing.clone();
    loop {
        tokio::select! {
            // A request already in is taken before a change: it may NACK the answer the
            // change would replace, and the read after it sees the change anyway.
            biased;
            request = requests.message() => {
                let request = match request {
                    Ok(Some(request)) => request,
                    Ok(None) | Err(_) => return,
                };
                match state.receive(&request) {
                    Ok(received) => note(context, peer, received),
                    Err(Refusal(reason)) => {
                        let _ = sender.try_send(Err(Status::invalid_argument(reason)));
                        return;
                    }
                }
            }
            changed = versions.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            _ = closing.wait_for(|closing| *closing) => return,
        }
        versions.mark_unchanged();
        let wanted = state.wanted();
        let view = {
            let registry = context.store.read();
            let Some(wanted) = state.read_needed(registry.version(), wanted) else {
                continue;
            };
            let mut cache = context.xds.endpoint_cache();
            View::read(&registry, wanted, &mut cache, clock::instant())
        };
        for response in state.responses(&view, &context.xds.region) {
            match tokio::time::timeout(SEND_TIMEOUT, sender.send(Ok(response))).await {
                Ok(Ok(())) => context.xds.metrics.xds().responses.inc(),
                Ok(Err(_)) | Err(_) => return,
            };
        }
    }
}

fn note(context: &Context, peer: &Peer, received: Received) {
    match received {
        Received::Nack {
            type_url,
            version,
            message,
        } => context
            .xds
            .nacked(peer.address, &type_url, &version, &message),
        Received::UnknownType(type_url) => {
            tracing::debug!(peer = ?peer.address, type_url, "xDS request for a type not served")
        }
        Received::Subscribed | Received::Ack | Received::Stale => {}
    }
}

/// Binds the xDS port: `server.address`, `heureka.xds.port`.
pub(crate) async fn bind(address: std::net::SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(address).await.map_err(|error| {
        io::Error::new(
            error.kind(),
            format!("heureka.xds.port: cannot listen on {address}: {error}"),
        )
    })
}
