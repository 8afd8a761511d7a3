//! A stream the vacant namespace serves (push or events) ends when its namespace is created.
//! The vacant registry never changes, so a subscriber that connected before the namespace's
//! first registration would otherwise wait for ever on keep-alives; reconnecting, as push and
//! event clients do when a stream ends, it follows the namespace's own stream.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, BodyDataStream, Bytes};
use axum::http::header;
use axum::response::Response;
use tokio_stream::Stream;

use super::directory::Vacancy;

/// `response`, whose event stream (if it is one) ends once the vacancy's namespace exists.
pub(crate) fn until_created(response: Response, vacancy: Vacancy) -> Response {
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
