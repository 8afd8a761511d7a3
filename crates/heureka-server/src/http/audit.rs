//! What the HTTP side records in the audit trail (`audit.rs`), and who it says asked.
//!
//! **Who** is the principal authentication put in the request (`principal::of`), by name;
//! **from where** is the IP address of the request's connection (`connection::Sender`), absent
//! for requests that crossed no socket; **in which namespace** is the state's that serves the
//! request, or the name asked for when the vacant namespace answers one not created yet.
//!
//! **An act "by the instance itself" is not audited**: a cancel or metadata update whose
//! connection comes from the IP address the instance registered (`ipAddr`) is the instance
//! looking after its own registration (the Java client cancels from its own host at
//! shutdown). Anything else is an administrative act and is audited: another address, or no
//! address known. Writes replicated from a peer are not audited again: the node the client
//! wrote to recorded them, as a takeover is reported once.

use std::convert::Infallible;
use std::net::IpAddr;

use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, Extensions, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use heureka_core::{Millis, Origin};
use heureka_wire::{AuditAction, AuditEntry};

use crate::connection::Sender;
use crate::http::error::ApiError;
use crate::http::origin::origin;
use crate::http::principal;
use crate::namespaces::Vacancy;
use crate::security::basic::Credentials;
use crate::state::AppState;

/// Who made a request, and from which address.
#[derive(Clone, Debug)]
pub(crate) struct Actor {
    principal: String,
    address: Option<IpAddr>,
    /// The namespace named by a request to one not created yet (`namespaces::Vacancy`).
    vacancy: Option<String>,
}

impl<S: Send + Sync> FromRequestParts<S> for Actor {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Actor, Infallible> {
        Ok(Actor::of(&parts.extensions))
    }
}

impl Actor {
    fn of(extensions: &Extensions) -> Actor {
        Actor {
            principal: principal::of(extensions).name().to_owned(),
            // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d.
            address: extensions
                .get::<Sender>()
                .map(|sender| sender.0.ip().to_canonical()),
            vacancy: extensions
                .get::<Vacancy>()
                .map(|vacancy| vacancy.name.clone()),
        }
    }

    /// The namespace this actor's request is in, served by `state`.
    fn namespace(&self, state: &AppState) -> String {
        self.vacancy
            .clone()
            .unwrap_or_else(|| state.namespace.clone())
    }

    /// An entry of `action` by this actor, at `at`, answered `outcome`.
    pub(crate) fn entry(&self, action: AuditAction, at: Millis, outcome: StatusCode) -> AuditEntry {
        AuditEntry {
            address: self.address.map(|ip| ip.to_string()),
            ..AuditEntry::new(action, at, &self.principal, outcome.as_u16())
        }
    }

    /// Whether the request comes from `ip_addr`, an instance's registered address: the
    /// instance itself (module docs).
    pub(crate) fn is_at(&self, ip_addr: &str) -> bool {
        let registered = ip_addr.parse::<IpAddr>().ok().map(|ip| ip.to_canonical());
        self.address.is_some() && self.address == registered
    }
}

/// Records the act `entry` describes, by `actor` in its namespace, unless the write was
/// replicated from a peer.
pub(crate) fn act(
    state: &AppState,
    headers: &HeaderMap,
    actor: &Actor,
    entry: impl FnOnce(Millis) -> AuditEntry,
) {
    if state.observe.audit.enabled() && origin(headers) == Origin::Client {
        let entry = AuditEntry {
            namespace: actor.namespace(state),
            ..entry(state.observe.audit.now())
        };
        state.observe.audit.act(entry);
    }
}

/// The address `app`/`id` is registered at, read before a write that may remove it; `None`
/// when the instance is unknown, or when nothing will be audited (auditing off, or the write
/// replicated), so that no instance is copied for nothing.
pub(crate) fn registered_address(
    state: &AppState,
    headers: &HeaderMap,
    app: &str,
    id: &str,
) -> Option<String> {
    if !state.observe.audit.enabled() || origin(headers) != Origin::Client {
        return None;
    }
    let now = state.store.now();
    let instance = state.store.read().instance(app, id, now)?;
    Some(instance.ip_addr)
}

/// A request refused 401: counted per address and presented user name (never the password).
pub(crate) fn credentials_refused(state: &AppState, request: &Request) {
    refused(
        state,
        request,
        AuditAction::CredentialsRefused,
        ApiError::Unauthorized,
    );
}

/// Replication refused 403 (`peers_only.rs`): counted per address and principal.
pub(crate) fn replication_refused(state: &AppState, request: &Request) {
    refused(
        state,
        request,
        AuditAction::ReplicationRefused,
        ApiError::NotAPeer(String::new()),
    );
}

/// `refusal` is the answer the caller sends, whose status the entry records.
fn refused(state: &AppState, request: &Request, action: AuditAction, refusal: ApiError) {
    if !state.observe.audit.enabled() {
        return;
    }
    let outcome = refusal.into_response().status();
    let actor = Actor::of(request.extensions());
    let user = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| Credentials::from_header(value.as_bytes()))
        .map(|credentials| credentials.user().to_owned());
    let entry = AuditEntry {
        user,
        namespace: actor.namespace(state),
        ..actor.entry(action, state.observe.audit.now(), outcome)
    };
    state.observe.audit.refused(entry);
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use super::*;

    fn from(address: &str) -> Actor {
        let mut extensions = Extensions::new();
        let sender: SocketAddr = address.parse().unwrap();
        extensions.insert(Sender(sender));
        Actor::of(&extensions)
    }

    #[test]
    fn a_request_from_the_registered_address_is_the_instance_itself() {
        assert!(from("10.0.0.5:51000").is_at("10.0.0.5"));
    }

    #[test]
    fn a_request_from_another_address_is_not_the_instance() {
        assert!(!from("10.0.0.6:51000").is_at("10.0.0.5"));
    }

    #[test]
    fn an_ipv4_client_on_a_dual_stack_socket_is_known_by_its_ipv4_address() {
        assert!(from("[::ffff:10.0.0.5]:51000").is_at("10.0.0.5"));
    }

    #[test]
    fn a_request_from_no_known_address_is_never_the_instance() {
        let actor = Actor::of(&Extensions::new());
        assert!(!actor.is_at("10.0.0.5"));
        assert!(!actor.is_at("not an address"));
    }
}
