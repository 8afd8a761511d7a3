//! Creating a namespace on the write that needs it. The vacant router (`dispatch.rs`) runs
//! this innermost, after authentication, the roles and the peers-only gate, so that only a
//! request allowed to make that write creates a namespace: a registration
//! (`POST {base}/apps/{app}`) or a peer's replication batch. The request then goes, whole, to
//! the new namespace's router. Any other request is answered by the vacant namespace itself:
//! an empty registry to reads, Eureka's 404 for an unknown instance to other writes (which
//! makes a client register again). A stream it serves (push, events) ends when the
//! namespace is created: the vacant registry never changes, so its subscriber would otherwise
//! never hear of the namespace's writes; reconnecting, it follows the namespace's own stream.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, BodyDataStream, Bytes};
use axum::extract::{MatchedPath, Request};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio_stream::Stream;
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
        return until_created(next.run(request).await, vacancy);
    }
    match vacancy.namespaces.create(&vacancy.name) {
        Ok(namespace) => match namespace.app.clone().oneshot(afresh(request)).await {
            Ok(response) => response,
            Err(never) => match never {},
        },
        Err(refused) => refusal(refused).into_response(),
    }
}

/// `response`, whose event stream (if it is one) ends once the vacancy's namespace exists.
fn until_created(response: Response, vacancy: Vacancy) -> Response {
    let streams = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|kind| kind.as_bytes().starts_with(b"text/event-stream"));
    if !streams {
        return response;
    }
    let (parts, body) = response.into_parts();
    let created = Box::pin(async move { vacancy.namespaces.until_created(&vacancy.name).await });
    let body = Body::from_stream(UntilCreated {
        body: body.into_data_stream(),
        created,
    });
    Response::from_parts(parts, body)
}

/// A body's data that ends when `created` resolves.
struct UntilCreated {
    body: BodyDataStream,
    created: Pin<Box<dyn Future<Output = ()> + Send>>,
}

impl Stream for UntilCreated {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.created.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Pin::new(&mut self.body).poll_next(cx)
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
