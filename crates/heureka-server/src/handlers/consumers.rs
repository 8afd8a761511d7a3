//! Who fetches the registry (`consumers.rs`) and a safe drain built on it:
//!
//! * `GET {base}/consumers`: this node's consumers, how far behind each is; one-off readers
//!   apart (`consumers.rs` says which are which).
//! * `PUT {base}/apps/{app}/{id}/drain`: takes the instance out of service (an operator's
//!   OUT_OF_SERVICE override, audited as one, through the override's own path), then answers
//!   the progress below.
//! * `GET {base}/apps/{app}/{id}/drain`: for every consumer that fetches periodically and
//!   fetched from the cluster within `heureka.consumers.active-within`, whether it holds a
//!   registry version with the instance's change; the one-off readers of that time listed
//!   apart, not waited for. The peers' consumers come from `GET {peer}peerreplication/drain`,
//!   this node's local view, which a peer answers. A consumer seen on several nodes counts by
//!   its latest fetch, fetches periodically if any node says so, and follows the push if any
//!   node has a push stream of it open.

use std::collections::HashMap;

use axum::extract::{Path, Query};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use heureka_core::InstanceStatus;
use heureka_wire::{ConsumerView, ConsumersDoc};

use crate::handlers::request::Ns;
use crate::handlers::request::{first, Headers};
use crate::handlers::response::json;
use crate::http::audit::Actor;
use crate::http::error::ApiError;
use crate::state::SharedState;

/// `GET {base}/consumers`.
pub(crate) async fn list(Ns(state): Ns) -> Response {
    let now = state.store.now();
    let version = state.store.read().version();
    let (consumers, readers) = state
        .observe
        .consumers
        .views(&state.node.name, version, now);
    let doc = ConsumersDoc {
        node: state.node.name.clone(),
        version,
        now,
        consumers,
        readers,
        ..ConsumersDoc::default()
    };
    json(heureka_wire::encode_consumers(&doc))
}

/// `PUT {base}/apps/{app}/{id}/drain`: OUT_OF_SERVICE, then the progress.
pub(crate) async fn start(
    Ns(state): Ns,
    Path((app, id)): Path<(String, String)>,
    actor: Actor,
    headers: Headers,
) -> Response {
    let query = vec![("value".to_owned(), "OUT_OF_SERVICE".to_owned())];
    let set = super::overrides::set_status(
        Ns(state.clone()),
        Path((app.clone(), id.clone())),
        Query(query),
        actor,
        headers,
    )
    .await;
    if set.status() != StatusCode::OK {
        return set;
    }
    progress(Ns(state), Path((app, id))).await.into_response()
}

/// `GET {base}/apps/{app}/{id}/drain`: the cluster's consumers and whether each has the change.
pub(crate) async fn progress(
    Ns(state): Ns,
    Path((app, id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let mut doc = local_progress(&state, &app, &id)?;
    let mut cluster = Cluster::default();
    cluster.take(&mut doc);
    let client = state.replication.client().clone();
    for peer in state.replication.peers() {
        match client.fetch_drain_progress(&peer.url, &app, &id).await {
            Ok(Some(mut theirs)) => cluster.take(&mut theirs),
            Ok(None) | Err(_) => doc.unseen.push(peer.url.as_str().to_owned()),
        }
    }
    (doc.consumers, doc.readers) = cluster.split();
    Ok(json(heureka_wire::encode_consumers(&doc)))
}

/// The consumers of every node's progress, one entry per address and client: its latest fetch,
/// and whether any node saw it fetch periodically.
#[derive(Default)]
struct Cluster {
    latest: HashMap<(String, String), (ConsumerView, bool)>,
}

impl Cluster {
    fn take(&mut self, doc: &mut ConsumersDoc) {
        let periodic = doc.consumers.drain(..).map(|view| (view, true));
        let readers = doc.readers.drain(..).map(|view| (view, false));
        for (view, periodic) in periodic.chain(readers) {
            let key = (view.address.clone(), view.agent.clone());
            match self.latest.get_mut(&key) {
                Some((ours, seen_periodic)) => {
                    let push = ours.push || view.push;
                    if view.last_fetch > ours.last_fetch {
                        *ours = view;
                    }
                    ours.push = push;
                    *seen_periodic |= periodic;
                }
                None => {
                    self.latest.insert(key, (view, periodic));
                }
            }
        }
    }

    /// Those that fetch periodically, then the readers, each by address and client.
    fn split(self) -> (Vec<ConsumerView>, Vec<ConsumerView>) {
        let (mut periodic, mut readers): (Vec<_>, Vec<_>) = self
            .latest
            .into_values()
            .partition(|(_, periodic)| *periodic);
        for views in [&mut periodic, &mut readers] {
            views.sort_by(|(a, _), (b, _)| (&a.address, &a.agent).cmp(&(&b.address, &b.agent)));
        }
        let views =
            |list: Vec<(ConsumerView, bool)>| list.into_iter().map(|(view, _)| view).collect();
        (views(periodic), views(readers))
    }
}

/// `GET {base}/peerreplication/drain?app=A&id=I`: this node's part of a drain's progress.
pub(crate) async fn peer_progress(
    Ns(state): Ns,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let missing = |name: &str| ApiError::BadRequest(format!("missing query parameter '{name}'"));
    let app = first(&query, "app").ok_or_else(|| missing("app"))?;
    let id = first(&query, "id").ok_or_else(|| missing("id"))?;
    let doc = local_progress(&state, app, id)?;
    Ok(json(heureka_wire::encode_consumers(&doc)))
}

/// The instance's status here and, once it is OUT_OF_SERVICE here, the version a consumer of
/// this node must hold (its application's last change: at least the drain's own); each
/// consumer and each reader active within `active-within`, confirmed or not.
fn local_progress(state: &SharedState, app: &str, id: &str) -> Result<ConsumersDoc, ApiError> {
    state.node.limits.check_names(app, id)?;
    let now = state.store.now();
    let (status, required, version) = {
        let registry = state.store.read();
        let instance = registry.instance(app, id, now).ok_or(ApiError::NotFound)?;
        let drained = instance.status == InstanceStatus::OutOfService;
        let required = drained.then(|| registry.application_version(app));
        (instance.status, required, registry.version())
    };
    let active_within = state.observe.consumers.active_within_ms;
    // Readers carry `confirmed` too: a peer's reader may be another node's periodic consumer.
    let progress = |views: Vec<ConsumerView>| -> Vec<ConsumerView> {
        views
            .into_iter()
            // A push follower is active while its stream is open, whenever it last
            // acknowledged: it will apply the change within moments.
            .filter(|consumer| consumer.push || now - consumer.last_fetch <= active_within)
            .map(|consumer| ConsumerView {
                confirmed: Some(required.is_some_and(|required| consumer.version >= required)),
                ..consumer
            })
            .collect()
    };
    let (consumers, readers) = state
        .observe
        .consumers
        .views(&state.node.name, version, now);
    Ok(ConsumersDoc {
        node: state.node.name.clone(),
        version,
        now,
        status: Some(status.as_str().to_owned()),
        required,
        consumers: progress(consumers),
        readers: progress(readers),
        unseen: Vec::new(),
    })
}
