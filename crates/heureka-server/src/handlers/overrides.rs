//! Operator writes on one instance: status override set and remove, metadata update. Each
//! leaves an audit entry once its answer is known (`http/audit.rs`).

use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use heureka_core::{instance_write_status_code, InstanceStatus};
use heureka_wire::{AuditAction, AuditEntry};

use crate::handlers::request::Ns;
use crate::handlers::request::{first, last_dirty_timestamp, status_param, Headers};
use crate::handlers::response::written;
use crate::http::audit::{self, Actor};
use crate::http::error::ApiError;
use crate::http::origin::origin;
use crate::state::SharedState;

/// `PUT {base}/apps/{app}/{id}/status?value=S`: set a status override.
pub(crate) async fn set_status(
    Ns(state): Ns,
    path: Path<(String, String)>,
    query: Query<Vec<(String, String)>>,
    actor: Actor,
    headers: Headers,
) -> Response {
    write_override(OverrideWrite::Set, Ns(state), path, query, actor, headers)
}

/// `DELETE {base}/apps/{app}/{id}/status[?value=S]`: remove the override. Without `value` the
/// instance becomes `UNKNOWN`, so its next heartbeat gets 404 and it re-registers its real status.
pub(crate) async fn delete_status(
    Ns(state): Ns,
    path: Path<(String, String)>,
    query: Query<Vec<(String, String)>>,
    actor: Actor,
    headers: Headers,
) -> Response {
    write_override(
        OverrideWrite::Remove,
        Ns(state),
        path,
        query,
        actor,
        headers,
    )
}

/// The two writes of a status override, which differ only in how `value` is read, the call
/// on the registry and the audit entry's action.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OverrideWrite {
    Set,
    Remove,
}

/// Either override write, answered and then audited.
fn write_override(
    write: OverrideWrite,
    Ns(state): Ns,
    Path((app, id)): Path<(String, String)>,
    Query(query): Query<Vec<(String, String)>>,
    actor: Actor,
    Headers(headers): Headers,
) -> Response {
    let answer = apply_override(write, &state, &app, &id, &query, &headers).into_response();
    let action = match write {
        OverrideWrite::Set => AuditAction::StatusOverrideSet,
        OverrideWrite::Remove => AuditAction::StatusOverrideRemoved,
    };
    audit::act(&state, &headers, &actor, |at| AuditEntry {
        app: Some(app),
        id: Some(id),
        status: asked_status(&query),
        ..actor.entry(action, at, answer.status())
    });
    answer
}

fn apply_override(
    write: OverrideWrite,
    state: &SharedState,
    app: &str,
    id: &str,
    query: &[(String, String)],
    headers: &HeaderMap,
) -> Result<StatusCode, ApiError> {
    state.node.limits.check_names(app, id)?;
    let status = match write {
        OverrideWrite::Set => Some(status_to_set(state, app, id, query)?),
        OverrideWrite::Remove => match first(query, "value") {
            Some(value) => Some(status_param("value", value)?),
            None => None,
        },
    };
    let dirty = last_dirty_timestamp(query)?;
    let origin = origin(headers);
    let found = state.store.write(|registry, now| match status {
        Some(status) if write == OverrideWrite::Set => {
            registry.set_status_override(app, id, status, dirty, origin, now)
        }
        _ => registry.delete_status_override(app, id, status, dirty, origin, now),
    });
    if !found && write == OverrideWrite::Remove {
        tracing::warn!(%app, %id, "instance not found (status override removal): 404");
    }
    written(instance_write_status_code(found))
}

/// The status a set asks for. Eureka looks the instance up before it reads `value`: unknown
/// instances are 404 first.
fn status_to_set(
    state: &SharedState,
    app: &str,
    id: &str,
    query: &[(String, String)],
) -> Result<InstanceStatus, ApiError> {
    let now = state.store.now();
    if state.store.read().instance(app, id, now).is_none() {
        // Eureka's InstanceResource logs this at WARN.
        tracing::warn!(%app, %id, "instance not found (status update): 404");
        return Err(ApiError::NotFound);
    }
    let value = first(query, "value")
        .ok_or_else(|| ApiError::BadRequest("missing query parameter 'value'".to_owned()))?;
    status_param("value", value)
}

/// The status a request asks for, when `value` names one: anything else is not kept, so an
/// entry holds no text a caller chose beyond names.
fn asked_status(query: &[(String, String)]) -> Option<String> {
    let status = InstanceStatus::from_name(first(query, "value")?)?;
    Some(status.as_str().to_owned())
}

/// `PUT {base}/apps/{app}/{id}/metadata?k=v…`: merge every query parameter into the metadata.
/// Merged metadata over `heureka.limits.max-metadata-*` is a 400, changing nothing. Audited
/// with the keys it sets, unless the instance itself sent it (`http/audit.rs`).
pub(crate) async fn update_metadata(
    Ns(state): Ns,
    Path((app, id)): Path<(String, String)>,
    Query(query): Query<Vec<(String, String)>>,
    actor: Actor,
    Headers(headers): Headers,
) -> Response {
    let mut entries: Vec<(String, String)> = Vec::with_capacity(query.len());
    for (key, value) in query {
        if !entries.iter().any(|(seen, _)| *seen == key) {
            entries.push((key, value));
        }
    }
    let keys: Vec<String> = entries.iter().map(|(key, _)| key.clone()).collect();
    let registered = audit::registered_address(&state, &headers, &app, &id);
    let answer = apply_metadata(&state, &app, &id, entries).into_response();
    if registered.is_none_or(|ip| !actor.is_at(&ip)) {
        audit::act(&state, &headers, &actor, |at| AuditEntry {
            app: Some(app),
            id: Some(id),
            metadata_keys: keys,
            ..actor.entry(AuditAction::MetadataUpdated, at, answer.status())
        });
    }
    answer
}

fn apply_metadata(
    state: &SharedState,
    app: &str,
    id: &str,
    entries: Vec<(String, String)>,
) -> Result<StatusCode, ApiError> {
    state.node.limits.check_names(app, id)?;
    let updated = state
        .store
        .write(|registry, now| registry.update_metadata(app, id, entries, now))?;
    if !updated {
        // Eureka logs an ERROR and answers 500 here; Heureka answers 404, at WARN like the
        // other lookups of an unknown instance.
        tracing::warn!(%app, %id, "instance not found (metadata update): 404");
    }
    written(instance_write_status_code(updated))
}

/// `PUT {base}/asg/{asg}/status`: AWS auto-scaling-group switches. Like Spring's (non-AWS)
/// Eureka server, Heureka has no ASG support and answers 400; the request is still an
/// operator's act, so it is audited.
pub(crate) async fn asg_status(
    Ns(state): Ns,
    Path(asg): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
    actor: Actor,
    Headers(headers): Headers,
) -> Response {
    let answer = ApiError::BadRequest(format!(
        "auto-scaling group '{asg}': ASG status is only supported on AWS-aware servers"
    ))
    .into_response();
    audit::act(&state, &headers, &actor, |at| AuditEntry {
        asg: Some(asg),
        status: asked_status(&query),
        ..actor.entry(AuditAction::AsgStatusSet, at, answer.status())
    });
    answer
}
