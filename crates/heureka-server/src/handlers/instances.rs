//! Instance writes and reads: register, renew, cancel, and single-instance lookups.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use heureka_core::{instance_write_status_code, InstanceStatus, Millis, Origin, RenewOutcome};
use heureka_wire::{AuditAction, AuditEntry};

use crate::handlers::regions;
use crate::handlers::request::Ns;
use crate::handlers::request::{
    firsts_in, heartbeat_as_clients_send, parse_last_dirty_timestamp, status_param, Headers,
    QueryParams,
};
use crate::handlers::response::{document, written};
use crate::http::audit::{self, Actor};
use crate::http::error::ApiError;
use crate::http::negotiate;
use crate::http::origin::origin;
use crate::state::SharedState;

/// `POST {base}/apps/{app}`: register or re-register. Always 204 on success — the Java and
/// JavaScript clients treat any other 2xx as a failed registration.
/// Most registrations never reach this handler: the fast lane (`fast_lane.rs`) reads their
/// body and answers them with [`register_instance`] before routing.
pub(crate) async fn register(
    Ns(state): Ns,
    Path(app): Path<String>,
    Headers(headers): Headers,
    body: Result<Bytes, BytesRejection>,
) -> Result<StatusCode, ApiError> {
    register_instance(&state, &app, &headers, body)
}

/// A registration's work, whichever way it came: the body decoded in the format its headers
/// name, checked against Eureka's rules and this server's limits, and registered unless it
/// would take over a live lease while that is refused.
pub(crate) fn register_instance(
    state: &SharedState,
    app: &str,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<StatusCode, ApiError> {
    let format = negotiate::body_format(headers)?;
    let body = body?;
    let mut instance = heureka_wire::decode_instance(&body, format, state.store.now())
        .map_err(|error| ApiError::BadRequest(error.to_string()))?;
    let limits = &state.node.limits;
    let clamped = heureka_core::validate_registration(&mut instance, app, limits)?;
    if let Some(clamped) = clamped {
        let id = instance.id();
        tracing::warn!(%app, %id, %clamped, "lease over heureka.limits.max-lease-duration");
    }
    let origin = origin(headers);
    let refuse_takeover = state.node.refuse_takeovers && origin == Origin::Client;
    let refused = state.store.write(|registry, now| {
        // Under the same write as the register, so concurrent registers cannot overshoot.
        registry.check_room(app, instance.id())?;
        let refused = refuse_takeover
            .then(|| registry.takeover_by(&instance, now))
            .flatten();
        Ok::<_, heureka_core::InvalidRegistration>(match refused {
            None => {
                registry.register(instance, origin, now);
                None
            }
            Some(taken_over) => Some((taken_over, instance.id().to_owned())),
        })
    })?;
    match refused {
        None => Ok(StatusCode::NO_CONTENT),
        Some((taken_over, id)) => {
            tracing::warn!(
                %app,
                %id,
                previous = %taken_over.previous,
                incoming = %taken_over.incoming,
                "takeover refused (409): the id's lease is alive at another endpoint"
            );
            Err(ApiError::TakeoverRefused(format!(
                "instance {}/{} is registered at {} with a live lease; refusing to move it to {} \
             (heureka.refuse-takeovers)",
                app.to_ascii_uppercase(),
                id,
                taken_over.previous,
                taken_over.incoming
            )))
        }
    }
}

/// `PUT {base}/apps/{app}/{id}`: heartbeat. 404 asks the client to re-register; 409 (peers
/// only) sends back our newer copy. Most heartbeats never reach this handler: the fast lane
/// (`fast_lane.rs`) answers them with [`renew_lease`] before routing.
pub(crate) async fn renew(
    Ns(state): Ns,
    Path((app, id)): Path<(String, String)>,
    query: QueryParams,
    Headers(headers): Headers,
) -> Result<StatusCode, ApiError> {
    renew_lease(&state, &app, &id, query.query(), &headers, origin(&headers))
}

/// A heartbeat's work, whichever way it came: its parameters read from `query`, the lease
/// renewed for `origin` (which the caller reads from the headers, or knows), and the outcome
/// as Eureka answers it.
pub(crate) fn renew_lease(
    state: &SharedState,
    app: &str,
    id: &str,
    query: Option<&str>,
    headers: &HeaderMap,
    origin: Origin,
) -> Result<StatusCode, ApiError> {
    let (dirty, overridden) = match query.and_then(heartbeat_as_clients_send) {
        Some(dirty) => (Some(dirty), None),
        None => heartbeat_parameters(query)?,
    };
    let outcome = state
        .store
        .write(|registry, now| registry.renew(app, id, dirty, overridden, origin, now));
    let status_code = outcome.status_code();
    match outcome {
        RenewOutcome::Renewed => {}
        // The levels and wording of Eureka's InstanceResource: both are WARN there, and both
        // make the client register again.
        RenewOutcome::NotFound => {
            tracing::warn!(%app, %id, ?origin, "not found (renew): 404, the client must register again");
        }
        RenewOutcome::ClientNewer => {
            tracing::warn!(%app, %id, ?origin, "time to sync, the client's last dirty timestamp is newer: 404");
        }
        RenewOutcome::RegistryNewer(ours) => {
            let format = negotiate::instance_format(headers);
            let ours = document(format, heureka_wire::encode_instance(&ours, format));
            return Err(ApiError::Conflict(Box::new(ours)));
        }
    }
    written(status_code)
}

/// A heartbeat's `lastDirtyTimestamp` and `overriddenstatus`, read from any query.
fn heartbeat_parameters(
    query: Option<&str>,
) -> Result<(Option<Millis>, Option<InstanceStatus>), ApiError> {
    let [dirty, overridden] = match query {
        Some(query) => firsts_in(query, ["lastDirtyTimestamp", "overriddenstatus"]),
        None => [None, None],
    };
    let dirty = parse_last_dirty_timestamp(dirty.as_deref())?;
    let overridden = match overridden {
        Some(value) => Some(status_param("overriddenstatus", &value)?),
        None => None,
    };
    Ok((dirty, overridden))
}

/// `DELETE {base}/apps/{app}/{id}`: cancel (deregister). Audited unless the instance itself
/// sent it (`http/audit.rs`): a cancel of an unknown instance has no registered address, so
/// it is audited too, with its 404.
pub(crate) async fn cancel(
    Ns(state): Ns,
    Path((app, id)): Path<(String, String)>,
    actor: Actor,
    Headers(headers): Headers,
) -> Response {
    let origin = origin(&headers);
    let registered = audit::registered_address(&state, &headers, &app, &id);
    let cancelled = state
        .store
        .write(|registry, now| registry.cancel(&app, &id, origin, now));
    if !cancelled {
        // INFO, as Eureka logs it: clients cancel again after an eviction, which is harmless.
        tracing::info!(%app, %id, ?origin, "not found (cancel): 404");
    }
    let answer = written(instance_write_status_code(cancelled)).into_response();
    if registered.is_none_or(|ip| !actor.is_at(&ip)) {
        audit::act(&state, &headers, &actor, |at| AuditEntry {
            app: Some(app),
            id: Some(id),
            ..actor.entry(AuditAction::Deregistered, at, answer.status())
        });
    }
    answer
}

/// `GET {base}/apps/{app}/{id}`: the local lease, else (fallback on) the instance of the
/// first remote region holding the application.
pub(crate) async fn one(
    Ns(state): Ns,
    Path((app, id)): Path<(String, String)>,
    Headers(headers): Headers,
) -> Result<Response, ApiError> {
    let now = state.store.now();
    let instance = state.store.read().instance(&app, &id, now);
    let instance = instance
        .or_else(|| regions::instance(&state, &app, &id))
        .ok_or(ApiError::NotFound)?;
    let format = negotiate::instance_format(&headers);
    Ok(document(
        format,
        heureka_wire::encode_instance(&instance, format),
    ))
}

/// `GET {base}/instances/{id}`: the first instance with this id in any application, else in
/// the first remote region holding it (fallback on).
pub(crate) async fn by_id(
    Ns(state): Ns,
    Path(id): Path<String>,
    Headers(headers): Headers,
) -> Result<Response, ApiError> {
    let now = state.store.now();
    let instance = state.store.read().instance_by_id(&id, now);
    let instance = instance
        .or_else(|| regions::instance_by_id(&state, &id))
        .ok_or(ApiError::NotFound)?;
    let format = negotiate::instance_format(&headers);
    Ok(document(
        format,
        heureka_wire::encode_instance(&instance, format),
    ))
}
