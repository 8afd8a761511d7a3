//! Reads that include remote regions (`regions/`): which regions a full or delta fetch
//! serves, the merged documents, the fallbacks of single reads, and `GET {base}/regions`.
//! With no region configured every function here returns at its first line, and the reads
//! take their local paths untouched.

use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::Response;
use bytes::Bytes;
use heureka_core::{Application, Applications, Instance};
use heureka_wire::{RegionView, RegionsDoc};

use crate::cache::{Encoding, MergedKey};
use crate::handlers::request::Ns;
use crate::handlers::request::QueryParams;
use crate::handlers::response::json;
use crate::http::error::ApiError;
use crate::http::negotiate;
use crate::regions::documents::{self, Chosen};
use crate::regions::is_fetcher_agent;
use crate::state::SharedState;

/// The regions a full or delta fetch serves besides the local registry, as indexes in
/// name order; None serves the local registry alone (from its own caches).
///
/// `regions=` names them (403 until every region has been fetched once, as in Eureka; names
/// not configured are ignored). Without it, every region when transparent fallback is on,
/// except for region fetchers, which are served their own region's instances only.
pub(crate) fn chosen_for_fetch(
    state: &SharedState,
    query: &QueryParams,
    headers: &HeaderMap,
) -> Result<Option<Vec<usize>>, ApiError> {
    let regions = &state.regions;
    if regions.is_empty() {
        return Ok(None);
    }
    let settings = regions.settings();
    let Some(requested) = query.first("regions").filter(|value| !value.is_empty()) else {
        let agent = headers
            .get(header::USER_AGENT)
            .and_then(|agent| agent.to_str().ok())
            .unwrap_or("");
        if !settings.fallback || is_fetcher_agent(agent) {
            return Ok(None);
        }
        return Ok(Some(settings.all()));
    };
    if !regions.all_ready() {
        return Err(ApiError::RegionsStarting(format!(
            "remote regions not fetched yet: {}; reads naming regions= are served once each \
             region has been fetched",
            regions.not_ready().join(", ")
        )));
    }
    let (found, unknown) = settings.requested(&requested);
    if !unknown.is_empty() {
        tracing::warn!(
            ?unknown,
            "regions= names regions that are not configured: ignored"
        );
    }
    Ok(Some(found).filter(|found| !found.is_empty()))
}

/// Every region, for the single reads' fallbacks; empty when fallback is off.
fn fallback_regions(state: &SharedState) -> Vec<Chosen<'_>> {
    let settings = state.regions.settings();
    if !settings.fallback {
        return Vec::new();
    }
    chosen(state, &settings.all())
}

fn chosen<'a>(state: &'a SharedState, indexes: &[usize]) -> Vec<Chosen<'a>> {
    indexes
        .iter()
        .map(|index| Chosen {
            settings: state.regions.region(*index),
            published: state.regions.published(*index),
        })
        .collect()
}

/// Which merged body `GET /apps` (`delta` false) or `/apps/delta` with `regions` is: the
/// regions, the format and encoding the client takes, and the local and regions versions now.
pub(crate) fn merged_key(
    state: &SharedState,
    headers: &HeaderMap,
    delta: bool,
    regions: Vec<usize>,
) -> MergedKey {
    let encoding = if negotiate::accepts_gzip(headers) {
        Encoding::Gzip
    } else {
        Encoding::Plain
    };
    MergedKey {
        delta,
        regions,
        format: negotiate::collection_format(headers),
        encoding,
        versions: (state.store.read().version(), state.regions.version()),
    }
}

/// The merged body already built for `key`, if any.
pub(crate) fn merged_ready(state: &SharedState, key: &MergedKey) -> Option<Bytes> {
    state.caches.merged.ready(key)
}

/// Builds (or takes) the merged body for `key`. A region delta's `versions__delta` is the sum
/// of the two versions, which never goes back.
pub(crate) fn merged_build(state: &SharedState, key: &MergedKey) -> Bytes {
    state.caches.merged.get(key.clone(), || {
        let chosen = chosen(state, &key.regions);
        let (local_version, regions_version) = key.versions;
        if key.delta {
            let (local_delta, apps_hashcode) = {
                let registry = state.store.read();
                let counts: Vec<_> = registry
                    .status_counts()
                    .iter()
                    .map(|count| (count.status, count.instances))
                    .collect();
                let hashcode =
                    documents::hashcode(&counts, |app, id| registry.status_of(app, id), &chosen);
                (registry.delta(), hashcode)
            };
            let versions_delta = (local_version + regions_version) as i64;
            documents::delta(local_delta, apps_hashcode, &chosen, versions_delta)
        } else {
            let local = state.store.read().applications();
            documents::full(local, &chosen)
        }
    })
}

/// The answer carrying a merged body.
pub(crate) fn merged_response(key: &MergedKey, body: Bytes) -> Response {
    let mut response = Response::new(axum::body::Body::from(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(key.format.content_type()),
    );
    if key.encoding == Encoding::Gzip {
        response
            .headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

/// `GET /apps/{app}` of an application with no local instance: the first region with it.
pub(crate) fn application(state: &SharedState, app: &str) -> Option<Application> {
    if state.regions.is_empty() {
        return None;
    }
    documents::application(app, &fallback_regions(state))
}

/// `GET /apps/{app}/{id}` of no local lease.
pub(crate) fn instance(state: &SharedState, app: &str, id: &str) -> Option<Instance> {
    if state.regions.is_empty() {
        return None;
    }
    documents::instance(app, id, &fallback_regions(state))
}

/// `GET /instances/{id}` of no local instance.
pub(crate) fn instance_by_id(state: &SharedState, id: &str) -> Option<Instance> {
    if state.regions.is_empty() {
        return None;
    }
    documents::instance_by_id(id, &fallback_regions(state))
}

/// `GET /vips/{vip}` and `/svips/{svip}` over the local registry and every region, when
/// fallback is on and a region is configured; None takes the local path.
pub(crate) fn vip(state: &SharedState, vip: &str, secure: bool) -> Option<Applications> {
    if state.regions.is_empty() || !state.regions.settings().fallback {
        return None;
    }
    let local = state.store.read().vip(vip, secure);
    Some(documents::vip(local, vip, secure, &fallback_regions(state)))
}

/// `GET {base}/regions`: each configured region's state, never cached. URLs are shown without
/// their credentials.
pub(crate) async fn list(Ns(state): Ns) -> Response {
    let now = state.store.now();
    let settings = state.regions.settings();
    let regions = settings
        .regions
        .iter()
        .enumerate()
        .map(|(index, region)| {
            let published = state.regions.published(index);
            RegionView {
                name: region.name.clone(),
                url: region.url.clone(),
                state: published.phase.as_str().to_owned(),
                last_success: published.last_success,
                last_attempt: published.last_attempt,
                lag_ms: published.last_success.map(|at| (now - at).max(0)),
                stale_after_ms: settings.stale_after.as_millis() as u64,
                applications: published.served.application_count() as u64,
                instances: published.served.instance_count() as u64,
                error: published.error.clone(),
                fetches: published.fetches.counts(),
            }
        })
        .collect();
    json(heureka_wire::encode_regions(&RegionsDoc {
        region: settings.own_region.clone(),
        fallback: settings.fallback,
        regions,
    }))
}
