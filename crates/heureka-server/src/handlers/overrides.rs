//! Operator writes on one instance: status override set and remove, metadata update.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use heureka_core::instance_write_status_code;

use crate::handlers::{first, last_dirty_timestamp, origin, status_param, written, Headers};
use crate::http::error::ApiError;
use crate::state::SharedState;

/// `PUT {base}/apps/{app}/{id}/status?value=S`: set a status override.
pub(crate) async fn set_status(
    State(state): State<SharedState>,
    Path((app, id)): Path<(String, String)>,
    Query(query): Query<Vec<(String, String)>>,
    Headers(headers): Headers,
) -> Result<StatusCode, ApiError> {
    state.settings.limits.check_names(&app, &id)?;
    // Eureka looks the instance up before it reads `value`: unknown instances are 404 first.
    let now = state.store.now();
    if state.store.read().instance(&app, &id, now).is_none() {
        // Eureka's InstanceResource logs this at WARN.
        tracing::warn!(%app, %id, "instance not found (status update): 404");
        return Err(ApiError::NotFound);
    }
    let value = first(&query, "value")
        .ok_or_else(|| ApiError::BadRequest("missing query parameter 'value'".to_owned()))?;
    let status = status_param("value", value)?;
    let dirty = last_dirty_timestamp(&query)?;
    let origin = origin(&headers);
    let updated = state
        .store
        .write(|registry, now| registry.set_status_override(&app, &id, status, dirty, origin, now));
    written(instance_write_status_code(updated))
}

/// `DELETE {base}/apps/{app}/{id}/status[?value=S]`: remove the override. Without `value` the
/// instance becomes `UNKNOWN`, so its next heartbeat gets 404 and it re-registers its real status.
pub(crate) async fn delete_status(
    State(state): State<SharedState>,
    Path((app, id)): Path<(String, String)>,
    Query(query): Query<Vec<(String, String)>>,
    Headers(headers): Headers,
) -> Result<StatusCode, ApiError> {
    state.settings.limits.check_names(&app, &id)?;
    let new_status = match first(&query, "value") {
        Some(value) => Some(status_param("value", value)?),
        None => None,
    };
    let dirty = last_dirty_timestamp(&query)?;
    let origin = origin(&headers);
    let removed = state.store.write(|registry, now| {
        registry.delete_status_override(&app, &id, new_status, dirty, origin, now)
    });
    if !removed {
        tracing::warn!(%app, %id, "instance not found (status override removal): 404");
    }
    written(instance_write_status_code(removed))
}

/// `PUT {base}/apps/{app}/{id}/metadata?k=v…`: merge every query parameter into the metadata.
/// Merged metadata over `heureka.limits.max-metadata-*` is a 400, changing nothing.
pub(crate) async fn update_metadata(
    State(state): State<SharedState>,
    Path((app, id)): Path<(String, String)>,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<StatusCode, ApiError> {
    state.settings.limits.check_names(&app, &id)?;
    let mut entries: Vec<(String, String)> = Vec::with_capacity(query.len());
    for (key, value) in query {
        if !entries.iter().any(|(seen, _)| *seen == key) {
            entries.push((key, value));
        }
    }
    let updated = state
        .store
        .write(|registry, now| registry.update_metadata(&app, &id, entries, now))?;
    if !updated {
        // Eureka logs an ERROR and answers 500 here; Heureka answers 404, at WARN like the
        // other lookups of an unknown instance.
        tracing::warn!(%app, %id, "instance not found (metadata update): 404");
    }
    written(instance_write_status_code(updated))
}

/// `PUT {base}/asg/{asg}/status`: AWS auto-scaling-group switches. Like Spring's (non-AWS)
/// Eureka server, Heureka has no ASG support and answers 400.
pub(crate) async fn asg_status(Path(asg): Path<String>) -> ApiError {
    ApiError::BadRequest(format!(
        "auto-scaling group '{asg}': ASG status is only supported on AWS-aware servers"
    ))
}
