//! Creating a namespace on the write that needs it. The vacant router (`dispatch.rs`) runs
//! this innermost, after authentication, the roles and the peers-only gate, so that only a
//! request allowed to make that write creates a namespace: a registration
//! (`POST {base}/apps/{app}`) or a peer's replication batch. The request then goes, whole, to
//! the new namespace's router. Any other request is answered by the vacant namespace itself:
//! an empty registry to reads, Eureka's 404 for an unknown instance to other writes (which
//! makes a client register again).

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;

use super::directory::Refused;
use super::dispatch::Vacancy;
use crate::connection::{ClientCertificate, Sender};
use crate::http::error::ApiError;

/// Middleware of the vacant router: creates the request's namespace when the request is a
/// write that creates one, and hands it over.
pub(crate) async fn create_on_write(mut request: Request, next: Next) -> Response {
    let Some(vacancy) = request.extensions_mut().remove::<Vacancy>() else {
        return next.run(request).await;
    };
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("", MatchedPath::as_str);
    if !creates(request.method(), route) {
        return next.run(request).await;
    }
    match vacancy.namespaces.create(&vacancy.name) {
        Ok(namespace) => match namespace.app.clone().oneshot(afresh(request)).await {
            Ok(response) => response,
            Err(never) => match never {},
        },
        Err(refused) => refusal(refused).into_response(),
    }
}

/// The request as the connection handed it over: what the vacant router's routing and
/// layers put in its extensions (the matched route's parameters, the principal) would
/// otherwise be read again, wrongly, by the new namespace's router.
fn afresh(request: Request) -> Request {
    let (parts, body) = request.into_parts();
    let mut fresh = Request::new(body);
    *fresh.method_mut() = parts.method;
    *fresh.uri_mut() = parts.uri;
    *fresh.version_mut() = parts.version;
    *fresh.headers_mut() = parts.headers;
    let extensions = fresh.extensions_mut();
    if let Some(sender) = parts.extensions.get::<Sender>() {
        extensions.insert(*sender);
    }
    if let Some(certificate) = parts.extensions.get::<ClientCertificate>() {
        extensions.insert(certificate.clone());
    }
    fresh
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
