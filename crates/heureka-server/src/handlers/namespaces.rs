//! `GET {prefix}` (`/ns`): the namespaces of this node with their counts, those the caller
//! may use only. Served by the default namespace's router, which the dispatcher hands the
//! directory with the request (`dispatch.rs`).

use std::sync::Arc;

use axum::extract::Extension;
use axum::response::Response;
use heureka_wire::{encode_namespaces, NamespaceView};

use crate::handlers::response::json;
use crate::http::error::ApiError;
use crate::namespaces::Namespaces;
use crate::security::principal::Principal;

pub(crate) async fn list(
    directory: Option<Extension<Arc<Namespaces>>>,
    principal: Option<Extension<Principal>>,
) -> Result<Response, ApiError> {
    let Some(Extension(directory)) = directory else {
        return Err(ApiError::NotFound);
    };
    let principal = principal.map(|Extension(principal)| principal);
    let views: Vec<NamespaceView> = directory
        .all()
        .iter()
        .filter(|namespace| {
            principal
                .as_ref()
                .is_none_or(|principal| principal.grant().may_use(&namespace.state.namespace))
        })
        .map(|namespace| {
            let registry = namespace.state.store.read();
            let self_preservation = registry.self_preservation();
            NamespaceView {
                name: namespace.state.namespace.clone(),
                applications: registry.application_count() as u64,
                instances: registry.registry_size() as u64,
                self_preservation: !self_preservation.lease_expiration_enabled,
                renews_last_min: self_preservation.renews_last_min,
                renews_threshold: u64::from(self_preservation.renews_threshold),
            }
        })
        .collect();
    Ok(json(encode_namespaces(&views)))
}
