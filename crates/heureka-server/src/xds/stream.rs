//! One ADS stream's side of the xDS protocol (state of the world), without I/O: what the
//! client subscribed to per resource type, the version and nonce last sent of each, whether a
//! request is an ACK, a NACK or stale, and which responses a registry view calls for. A type
//! is sent again only when its subscription changed or its content did, so an ACKed or
//! NACKed answer is never repeated as is.

use std::collections::{BTreeMap, BTreeSet};

use envoy_types::pb::envoy::config::cluster::v3::Cluster;
use envoy_types::pb::envoy::config::endpoint::v3::ClusterLoadAssignment;
use envoy_types::pb::envoy::config::listener::v3::Listener;
use envoy_types::pb::envoy::config::route::v3::RouteConfiguration;
use envoy_types::pb::envoy::service::discovery::v3::{DiscoveryRequest, DiscoveryResponse};
use envoy_types::pb::google::protobuf::Any;
use heureka_core::Registry;
use prost::Name;

use super::cache::{EndpointCache, Endpoints};
use super::resources::{self, Endpoint};
use super::targets;
use crate::clock::Instant;

/// Resource names one request may carry. A gRPC client asks for one per target, but an Envoy
/// asks the endpoints of every cluster it was given in one request, one name per application:
/// the bound is a registry's worth of applications, below what the 1 MiB request holds.
pub(crate) const MAX_NAMES_PER_REQUEST: usize = 16_384;
/// The longest resource name taken: longer than any application name or VIP address.
pub(crate) const MAX_NAME_LENGTH: usize = 1024;

/// The resource types served, in the order gRPC asks for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Listener,
    Route,
    Cluster,
    Endpoints,
}

impl Kind {
    fn of(type_url: &str) -> Option<Kind> {
        [Kind::Listener, Kind::Route, Kind::Cluster, Kind::Endpoints]
            .into_iter()
            .find(|kind| kind.type_url() == type_url)
    }

    pub(crate) fn type_url(self) -> String {
        match self {
            Kind::Listener => Listener::type_url(),
            Kind::Route => RouteConfiguration::type_url(),
            Kind::Cluster => Cluster::type_url(),
            Kind::Endpoints => ClusterLoadAssignment::type_url(),
        }
    }

    /// Listeners and clusters may be asked for by wildcard (Envoy does); routes and
    /// endpoints are always named.
    fn allows_wildcard(self) -> bool {
        matches!(self, Kind::Listener | Kind::Cluster)
    }
}

/// What the client asked for of one type and what it was last sent.
#[derive(Debug, Default)]
struct Subscription {
    names: BTreeSet<String>,
    wildcard: bool,
    /// The resources last sent; `None` before the first response.
    sent: Option<Vec<Any>>,
    version: u64,
    nonce: String,
    /// The subscription changed since the last response: answer even if the content did not.
    pending: bool,
    /// The registry version of the view its resources were last built from: a view of the
    /// same version holds the same content, and is not built again.
    built_from: Option<u64>,
}

/// What a request was, for the caller to log and count.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Received {
    /// A first request of a type, or one changing what it subscribes to.
    Subscribed,
    /// The client accepted the response of this nonce.
    Ack,
    /// The client rejected the response of this nonce: `message` says why.
    Nack {
        type_url: String,
        version: String,
        message: String,
    },
    /// The request answers a response older than the latest of its type: ignored, as the
    /// protocol says (the client will answer the latest too).
    Stale,
    /// A type this server does not serve (secrets, runtime, …): ignored.
    UnknownType(String),
}

/// A request refused whole: the stream ends with this message.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refusal(pub(crate) String);

/// The names a stream needs read from the registry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wanted {
    pub(crate) names: BTreeSet<String>,
    pub(crate) wildcard: bool,
}

/// The registry as one short read saw it, for the names a stream wants.
#[derive(Debug, Default)]
pub(crate) struct View {
    /// Each wanted name's endpoints; `None`: no such resource.
    endpoints: BTreeMap<String, Option<Endpoints>>,
    /// Every application's name, read only for a wildcard subscription.
    applications: Vec<String>,
    /// The registry version read; `None`: unknown, every subscription is built.
    version: Option<u64>,
}

impl View {
    /// Reads what `wanted` needs through `cache`; call under the store's read lock and keep it
    /// short. `now` paces the cache's pruning.
    pub(crate) fn read(
        registry: &Registry,
        wanted: &Wanted,
        cache: &mut EndpointCache,
        now: Instant,
    ) -> View {
        cache.prune(registry, now);
        View {
            endpoints: wanted
                .names
                .iter()
                .map(|name| (name.clone(), cache.endpoints(registry, name)))
                .collect(),
            applications: if wanted.wildcard {
                targets::application_names(registry)
            } else {
                Vec::new()
            },
            version: Some(registry.version()),
        }
    }

    fn exists(&self, name: &str) -> bool {
        matches!(self.endpoints.get(name), Some(Some(_)))
    }
}

/// One stream's subscriptions and what it was sent.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    subscriptions: BTreeMap<Kind, Subscription>,
    nonces: u64,
    /// The registry version and the names of the last read: the same again, with no
    /// subscription changed, calls for no response.
    last_read: Option<(u64, Wanted)>,
}

impl StreamState {
    /// Takes one request from the client.
    pub(crate) fn receive(&mut self, request: &DiscoveryRequest) -> Result<Received, Refusal> {
        let Some(kind) = Kind::of(&request.type_url) else {
            return Ok(Received::UnknownType(bounded(&request.type_url)));
        };
        if request.resource_names.len() > MAX_NAMES_PER_REQUEST {
            return Err(Refusal(format!(
                "{} resource names in one request: at most {MAX_NAMES_PER_REQUEST} are taken",
                request.resource_names.len()
            )));
        }
        if let Some(long) = request
            .resource_names
            .iter()
            .find(|name| name.len() > MAX_NAME_LENGTH)
        {
            return Err(Refusal(format!(
                "a resource name of {} bytes: at most {MAX_NAME_LENGTH} are taken",
                long.len()
            )));
        }
        // A nonce this stream never sent (a client resuming after a reconnect, as Envoy does)
        // on a type it has not subscribed yet is a first request, not a stale one.
        let stale = self.subscriptions.get(&kind).is_some_and(|subscription| {
            !request.response_nonce.is_empty() && request.response_nonce != subscription.nonce
        });
        if stale {
            return Ok(Received::Stale);
        }
        let subscription = self.subscriptions.entry(kind).or_default();
        let mut names: BTreeSet<String> = request.resource_names.iter().cloned().collect();
        let wildcard = kind.allows_wildcard() && (names.is_empty() || names.remove("*"));
        if names != subscription.names
            || wildcard != subscription.wildcard
            || subscription.sent.is_none()
        {
            subscription.names = names;
            subscription.wildcard = wildcard;
            subscription.pending = true;
        }
        if let Some(error) = &request.error_detail {
            return Ok(Received::Nack {
                type_url: request.type_url.clone(),
                version: bounded(&request.version_info),
                message: bounded(&error.message),
            });
        }
        if request.response_nonce.is_empty() || subscription.pending {
            Ok(Received::Subscribed)
        } else {
            Ok(Received::Ack)
        }
    }

    /// Every name any subscription needs read, and whether one is a wildcard.
    pub(crate) fn wanted(&self) -> Wanted {
        let mut wanted = Wanted::default();
        for subscription in self.subscriptions.values() {
            wanted.names.extend(subscription.names.iter().cloned());
            wanted.wildcard |= subscription.wildcard;
        }
        wanted
    }

    /// The names to read from a registry of `version`, or `None` when a read could call for
    /// no response: the registry and the names are those of the last read and no subscription
    /// changed since (an ACK, a NACK, a stale request).
    pub(crate) fn read_needed(&mut self, version: u64, wanted: Wanted) -> Option<&Wanted> {
        let pending = self.subscriptions.values().any(|s| s.pending);
        let unchanged = self
            .last_read
            .as_ref()
            .is_some_and(|(read, names)| *read == version && *names == wanted);
        if unchanged && !pending {
            return None;
        }
        let (_, names) = self.last_read.insert((version, wanted));
        Some(names)
    }

    /// The responses `view` calls for: one per type whose subscription changed or whose
    /// resources differ from those last sent. A type neither changed nor built from an older
    /// registry is not built at all (the request of one type re-reads for all of them).
    pub(crate) fn responses(&mut self, view: &View, region: &str) -> Vec<DiscoveryResponse> {
        let mut responses = Vec::new();
        for (kind, subscription) in &mut self.subscriptions {
            let built = view.version.is_some() && subscription.built_from == view.version;
            if built && !subscription.pending {
                continue;
            }
            let resources = build(*kind, subscription, view, region);
            subscription.built_from = view.version;
            if !subscription.pending && subscription.sent.as_ref() == Some(&resources) {
                continue;
            }
            self.nonces += 1;
            subscription.version += 1;
            subscription.nonce = self.nonces.to_string();
            subscription.pending = false;
            subscription.sent = Some(resources.clone());
            responses.push(DiscoveryResponse {
                version_info: subscription.version.to_string(),
                resources,
                type_url: kind.type_url(),
                nonce: subscription.nonce.clone(),
                ..Default::default()
            });
        }
        responses
    }
}

/// The resources of one type a subscription gets from `view`: those of its names that exist,
/// or every application's for a wildcard.
fn build(kind: Kind, subscription: &Subscription, view: &View, region: &str) -> Vec<Any> {
    let mut names: BTreeSet<&str> = subscription
        .names
        .iter()
        .map(String::as_str)
        .filter(|name| view.exists(name))
        .collect();
    if subscription.wildcard {
        names.extend(view.applications.iter().map(String::as_str));
    }
    names
        .into_iter()
        .map(|name| match kind {
            Kind::Listener => resources::any(&resources::listener(name)),
            Kind::Route => resources::any(&resources::route_configuration(name)),
            Kind::Cluster => resources::any(&resources::cluster(name)),
            Kind::Endpoints => {
                let endpoints: &[Endpoint] = view
                    .endpoints
                    .get(name)
                    .and_then(Option::as_deref)
                    .map_or(&[], Vec::as_slice);
                resources::any(&resources::load_assignment(name, region, endpoints))
            }
        })
        .collect()
}

/// Text from a client, cut to a length fit for a log line or the dashboard.
fn bounded(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests;
