//! The receiving end of peer replication: `POST {base}/peerreplication/batch` (spec §7.4, §7.5)
//! and the digest anti-entropy compares, `GET {base}/peerreplication/digest`.
//!
//! Every element of a batch is a replica (`Origin::Peer`), whatever the headers say, so none is
//! replicated again, and each is answered with the status its own endpoint would have given a
//! peer (Eureka's `PeerReplicationResource` calls the same resource methods). The whole batch
//! is applied in one [`Store::write`](crate::store::Store::write), so its changes are published
//! together and in order. The answer always has exactly one result per element, in order: a
//! Java sender that gets a list of another length ignores every result.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::response::Response;
use heureka_core::{
    instance_write_status_code, ElementOutcome, Instance, Limits, Millis, Origin, Registry,
    RenewOutcome,
};
use heureka_wire::{DecodeError, Format, ReplicationAction, ReplicationItem, ReplicationResult};

use crate::handlers::request::Ns;
use crate::handlers::request::{Headers, SenderAddress};
use crate::handlers::response::document;
use crate::http::error::ApiError;
use crate::http::negotiate;

/// `POST {base}/peerreplication/batch`: apply a peer's batch, answer element by element.
/// A body that is not a batch at all is a 400; everything else is a 200 with the results.
pub(crate) async fn batch(
    Ns(state): Ns,
    sender: SenderAddress,
    Headers(headers): Headers,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    negotiate::json_body(&headers)?;
    let body = body?;
    let elements = heureka_wire::decode_replication_batch(&body, state.store.now())
        .map_err(|error| ApiError::BadRequest(format!("replication batch: {error}")))?;
    tracing::debug!(%sender, items = elements.len(), "peer batch accepted");
    // Decoding failures and validation are settled before the lock, and logged here, since
    // nothing under the registry lock may write to the log.
    let limits = &state.node.limits;
    let elements: Vec<Element> = elements
        .into_iter()
        .map(|element| prepare(element, limits))
        .collect();
    let results = state.store.write(|registry, now| {
        elements
            .into_iter()
            .map(|element| match element {
                Element::Apply(item) => apply(registry, item, now),
                Element::Answered(outcome) => ReplicationResult::status(outcome.status()),
            })
            .collect::<Vec<_>>()
    });
    Ok(document(
        Format::Json,
        heureka_wire::encode_replication_response(&results),
    ))
}

/// `GET {base}/peerreplication/digest`: our registry's digest, for a Heureka peer's
/// anti-entropy. Encoded after the lock is released.
pub(crate) async fn digest(Ns(state): Ns) -> Response {
    let digest = state.store.read().digest();
    document(Format::Json, heureka_wire::encode_registry_digest(&digest))
}

/// One element, ready for the registry or already answered.
#[derive(Debug)]
// Elements live in one short-lived Vec per batch; boxing would cost an allocation each.
#[allow(clippy::large_enum_variant)]
enum Element {
    Apply(ReplicationItem),
    /// Answered without the registry: an unreadable element, or an invalid registration.
    Answered(ElementOutcome),
}

/// Decides what can be decided without the registry: unreadable elements are 500, and so is a
/// `DeleteStatusOverride` without `lastDirtyTimestamp` (Java dereferences it unchecked); the
/// rest is [`check_element`].
fn prepare(element: Result<ReplicationItem, DecodeError>, limits: &Limits) -> Element {
    let mut item = match readable(element, ElementOutcome::Failed) {
        Ok(item) => item,
        Err(outcome) => return Element::Answered(outcome),
    };
    let registration = match item.action {
        ReplicationAction::Register => item.instance.as_mut(),
        _ => None,
    };
    if let Err(outcome) = check_element(&item.app_name, &item.id, registration, limits) {
        return Element::Answered(outcome);
    }
    let (app, id) = (&item.app_name, &item.id);
    match item.action {
        // The decoder refuses a register without its instance; kept total anyway.
        ReplicationAction::Register if item.instance.is_none() => {
            return Element::Answered(ElementOutcome::Failed);
        }
        ReplicationAction::DeleteStatusOverride if item.last_dirty_timestamp.is_none() => {
            tracing::warn!(%app, %id, "replicated override removal without lastDirtyTimestamp");
            return Element::Answered(ElementOutcome::Failed);
        }
        _ => {}
    }
    Element::Apply(item)
}

/// A replicated element as read, or, logged, the answer to one that cannot be read: a Java
/// batch fails it (500, as Eureka does), a stamped batch refuses it (400).
pub(super) fn readable<T>(
    element: Result<T, DecodeError>,
    unreadable: ElementOutcome,
) -> Result<T, ElementOutcome> {
    element.map_err(|error| {
        let status = unreadable.status();
        tracing::warn!(%error, "replicated element cannot be read; answered {status}");
        unreadable
    })
}

/// The check every replicated element passes before the registry, in a Java batch and a
/// stamped batch alike: an element over `heureka.limits.*` (names on every action, the
/// registration's contents) is refused (400), as the REST path answers it; senders log it and
/// do not retry. An invalid registration is answered 200 and never applied, as Java ignores
/// the 400 its `addInstance` returns, so the sender does not retry it. A lease over the
/// longest allowed is clamped in place.
pub(super) fn check_element(
    app: &str,
    id: &str,
    registration: Option<&mut Instance>,
    limits: &Limits,
) -> Result<(), ElementOutcome> {
    if let Err(reason) = limits.check_names(app, id) {
        tracing::warn!(%app, %id, %reason, "refused a replicated write over the limits: 400");
        return Err(ElementOutcome::Refused);
    }
    let Some(registration) = registration else {
        return Ok(());
    };
    match heureka_core::validate_registration(registration, app, limits) {
        Ok(None) => Ok(()),
        Ok(Some(clamped)) => {
            tracing::warn!(%app, %id, %clamped, "replicated lease over heureka.limits.max-lease-duration");
            Ok(())
        }
        Err(reason) if reason.is_limit() => {
            tracing::warn!(%app, %id, %reason, "refused a replicated registration over the limits: 400");
            Err(ElementOutcome::Refused)
        }
        Err(reason) => {
            tracing::warn!(%app, %id, %reason, "ignored an invalid replicated registration");
            Err(ElementOutcome::Done)
        }
    }
}

/// Applies one replica under the registry lock and answers it with the status code core gives
/// its outcome, the one its own endpoint answers with (`handlers/instances.rs`,
/// `handlers/overrides.rs`).
fn apply(registry: &mut Registry, item: ReplicationItem, now: Millis) -> ReplicationResult {
    let ReplicationItem {
        action,
        app_name: app,
        id,
        last_dirty_timestamp: dirty,
        overridden_status,
        status,
        instance,
    } = item;
    let origin = Origin::Peer;
    let found = |found: bool| ReplicationResult::status(instance_write_status_code(found));
    let answer = |outcome: ElementOutcome| ReplicationResult::status(outcome.status());
    match action {
        ReplicationAction::Register => match instance {
            // A peer's new instance is bounded like a client's: the limit guards this node's
            // memory whatever the origin (README § Limits).
            Some(_) if registry.check_room(&app, &id).is_err() => answer(ElementOutcome::Full),
            Some(instance) => {
                registry.register(instance, origin, now);
                answer(ElementOutcome::Done)
            }
            None => answer(ElementOutcome::Failed),
        },
        ReplicationAction::Heartbeat => {
            let outcome = registry.renew(&app, &id, dirty, overridden_status, origin, now);
            ReplicationResult {
                status_code: outcome.status_code(),
                entity: match outcome {
                    RenewOutcome::RegistryNewer(ours) => Some(*ours),
                    _ => None,
                },
            }
        }
        ReplicationAction::Cancel => found(registry.cancel(&app, &id, origin, now)),
        ReplicationAction::StatusUpdate => match status {
            Some(status) => {
                found(registry.set_status_override(&app, &id, status, dirty, origin, now))
            }
            // Eureka looks the instance up before it reads the status, then fails on null.
            None if registry.instance(&app, &id, now).is_none() => found(false),
            None => answer(ElementOutcome::Failed),
        },
        // A missing status means UNKNOWN, as on the client endpoint and in Eureka.
        ReplicationAction::DeleteStatusOverride => {
            found(registry.delete_status_override(&app, &id, status, dirty, origin, now))
        }
    }
}
