//! Creating a namespace on the write that needs it. Requests to a name not created yet are
//! served by the vacant namespace, marked with a [`Vacancy`] (`dispatch.rs`). This check runs
//! innermost, after authentication, the roles and the peers-only gate, so that only a request
//! allowed to make that write creates a namespace: a registration (`POST {base}/apps/{app}`)
//! or a peer's replication batch. The request then goes on in the new namespace. Any other
//! request is answered by the vacant namespace itself: an empty registry to reads, Eureka's
//! 404 for an unknown instance to other writes (which makes a client register again).

use axum::extract::{MatchedPath, Request};
use axum::http::Method;

use crate::http::error::ApiError;
use crate::http::gate::Check;
use crate::namespaces::{InNamespace, Refused, Vacancy};

/// The check that creates a request's namespace when the request is a write that creates
/// one; a request with no [`Vacancy`] costs one look-up.
pub(crate) struct CreateOnWrite;

impl Check for CreateOnWrite {
    fn check(&self, request: &mut Request) -> Result<(), ApiError> {
        if request.extensions().get::<Vacancy>().is_none() {
            return Ok(());
        }
        let route = request
            .extensions()
            .get::<MatchedPath>()
            .map_or("", MatchedPath::as_str);
        if !creates(request.method(), route) {
            return Ok(());
        }
        let Some(vacancy) = request.extensions_mut().remove::<Vacancy>() else {
            return Ok(());
        };
        let namespace = vacancy.namespaces.create(&vacancy.name).map_err(refusal)?;
        request
            .extensions_mut()
            .insert(InNamespace(namespace.state.clone()));
        Ok(())
    }
}

/// Whether a request to `route` (its template) creates its namespace.
fn creates(method: &Method, route: &str) -> bool {
    *method == Method::POST
        && (route.ends_with("/apps/{app}") || route.contains("/peerreplication/"))
}

fn refusal(refused: Refused) -> ApiError {
    match refused {
        Refused::NotDeclared(_) => ApiError::NotServed(refused.to_string()),
        Refused::Full { .. } => ApiError::RegistryFull(refused.to_string()),
        Refused::Failed { .. } => ApiError::NotServed(refused.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registration_creates_its_namespace() {
        assert!(creates(&Method::POST, "/eureka/apps/{app}"));
        assert!(creates(&Method::POST, "/eureka/v2/apps/{app}"));
    }

    #[test]
    fn a_peers_replication_creates_its_namespace() {
        assert!(creates(&Method::POST, "/eureka/peerreplication/batch"));
        assert!(creates(&Method::POST, "/eureka/peerreplication/stamped"));
    }

    #[test]
    fn reads_heartbeats_cancels_and_overrides_create_nothing() {
        assert!(!creates(&Method::GET, "/eureka/apps/{app}"));
        assert!(!creates(&Method::PUT, "/eureka/apps/{app}/{id}"));
        assert!(!creates(&Method::DELETE, "/eureka/apps/{app}/{id}"));
        assert!(!creates(&Method::PUT, "/eureka/apps/{app}/{id}/status"));
    }
}
