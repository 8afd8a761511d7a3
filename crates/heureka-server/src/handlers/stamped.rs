//! The receiving end of replication between Heureka servers: `POST
//! {base}/peerreplication/stamped` (a batch of stamped copies, `heureka_wire::stamped`) and
//! `POST {base}/peerreplication/copies` (anti-entropy's request for our copies).
//!
//! Java servers never call these (they send `peerreplication/batch`, `replication.rs`), and
//! a Heureka sender that gets 404 here knows its peer is a Java server. Each element is
//! merged part by part (`heureka_core::Parts::merge`) as a peer's write, never replicated
//! again, and answered with what the sender must do next:
//!
//! * 200: nothing, both copies hold the same writes;
//! * 404: send your copy (we do not hold the instance, or you hold writes we do not);
//! * 409 with our copy: take it (we hold writes you do not, a cancel among them);
//! * 400: refused (a time too far ahead of our clock, or over `heureka.limits.*`); the rest
//!   of the batch goes through;
//! * 403: a new instance while the registry holds `heureka.limits.max-instances`.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::response::Response;
use heureka_core::{ElementOutcome, Limits, Millis, Registry, StampedCopy};
use heureka_wire::{DecodeError, Format, ReplicationAction, StampedItem, StampedResult};

use crate::handlers::replication::{check_element, readable};
use crate::handlers::request::Ns;
use crate::handlers::request::{Headers, SenderAddress};
use crate::handlers::response::document;
use crate::http::error::ApiError;
use crate::http::negotiate;
use crate::state::SharedState;

/// `POST {base}/peerreplication/stamped`: merge a Heureka peer's batch, answer element by
/// element, all in one write so its changes are published together and in order.
pub(crate) async fn batch(
    Ns(state): Ns,
    sender: SenderAddress,
    Headers(headers): Headers,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    negotiate::json_body(&headers)?;
    let elements = decode(&state, &body?)?;
    tracing::debug!(%sender, items = elements.len(), "stamped peer batch accepted");
    let results = state.store.write(|registry, now| {
        elements
            .into_iter()
            .map(|element| match element {
                Ok(item) => apply(registry, item, now),
                Err(outcome) => answer(outcome, None),
            })
            .collect::<Vec<_>>()
    });
    Ok(document(
        Format::Json,
        heureka_wire::encode_stamped_response(&results),
    ))
}

/// `POST {base}/peerreplication/copies`: our copy of each instance the body names (its
/// elements' actions and stamps are ignored), 200 with the copy or 404 when we hold nothing
/// of it. Anti-entropy asks this for the instances a peer holds newer writes of.
pub(crate) async fn copies(
    Ns(state): Ns,
    sender: SenderAddress,
    Headers(headers): Headers,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    negotiate::json_body(&headers)?;
    let elements = decode(&state, &body?)?;
    tracing::debug!(%sender, items = elements.len(), "peer's request for copies accepted");
    let now = state.store.now();
    let results: Vec<StampedResult> = {
        let registry = state.store.read();
        elements
            .iter()
            .map(|element| match element {
                Ok(item) => match registry.stamped_copy(&item.copy.app, &item.copy.id, now) {
                    Some(copy) => answer(ElementOutcome::Done, Some(copy)),
                    None => answer(ElementOutcome::SendYours, None),
                },
                Err(outcome) => answer(*outcome, None),
            })
            .collect()
    };
    Ok(document(
        Format::Json,
        heureka_wire::encode_stamped_response(&results),
    ))
}

/// Reads a batch: a body that is no batch at all is a 400; an element that cannot be read or
/// carries an invalid registration is answered without the registry (logged here, since
/// nothing under the registry lock may write to the log).
fn decode(
    state: &SharedState,
    body: &[u8],
) -> Result<Vec<Result<StampedItem, ElementOutcome>>, ApiError> {
    let elements = heureka_wire::decode_stamped_batch(body, state.store.now())
        .map_err(|error| ApiError::BadRequest(format!("stamped replication batch: {error}")))?;
    let limits = &state.node.limits;
    Ok(elements
        .into_iter()
        .map(|element| prepare(element, limits))
        .collect())
}

/// The check a Java batch's elements pass too (`replication.rs`); an unreadable element is
/// refused (400).
fn prepare(
    element: Result<StampedItem, DecodeError>,
    limits: &Limits,
) -> Result<StampedItem, ElementOutcome> {
    let mut item = readable(element, ElementOutcome::Refused)?;
    let copy = &mut item.copy;
    let registration = copy.parts.registration.as_mut();
    check_element(&copy.app, &copy.id, registration, limits)?;
    Ok(item)
}

/// Merges one element under the registry lock and says what the sender must do next.
fn apply(registry: &mut Registry, item: StampedItem, now: Millis) -> StampedResult {
    let StampedItem { action, copy } = item;
    if action == ReplicationAction::Heartbeat {
        return match registry.renew_stamped(&copy.app, &copy.id, &copy.parts.stamps, now) {
            Ok(renewal) => {
                let (outcome, ours) = renewal.into_answer();
                answer(outcome, ours)
            }
            Err(_) => answer(ElementOutcome::Refused, None),
        };
    }
    let (app, id, theirs, they_lease) = (
        copy.app.clone(),
        copy.id.clone(),
        copy.parts.stamps,
        copy.leased,
    );
    if they_lease && registry.check_room(&app, &id).is_err() {
        // A peer's new instance is bounded like a client's (README § Limits).
        return answer(ElementOutcome::Full, None);
    }
    let Ok(merged) = registry.merge_copy(copy, now) else {
        return answer(ElementOutcome::Refused, None);
    };
    match registry.stamps_of(&app, &id) {
        Some(ours) if ours.has_newer_part_than(&theirs) => answer(
            ElementOutcome::TakeOurs,
            registry.stamped_copy(&app, &id, now),
        ),
        _ if they_lease && !merged.leased => answer(ElementOutcome::SendYours, None),
        _ => answer(ElementOutcome::Done, None),
    }
}

fn answer(outcome: ElementOutcome, copy: Option<StampedCopy>) -> StampedResult {
    StampedResult {
        status_code: outcome.status(),
        copy,
    }
}
