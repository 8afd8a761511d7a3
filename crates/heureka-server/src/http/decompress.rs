//! Request-body decompression for the requests that declare an encoding, and only for them.
//!
//! tower-http's `RequestDecompression` wraps every body, encoded or not, and boxes every
//! response body on the way out (which axum then boxes again): allocations on each heartbeat
//! and registration, though almost no client compresses what it sends. Here a request without
//! `Content-Encoding` goes straight to the inner service; one with `gzip` or `identity` goes
//! through tower-http's layer unchanged, so gzip is decoded and `identity` passes; any other
//! encoding is refused here, with `ApiError::UnsupportedContentEncoding`, the 415
//! tower-http's layer would give it (the one decoder this crate enables is gzip's).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::http::error::ApiError;
use axum::body::Body;
use axum::extract::Request;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use pin_project_lite::pin_project;
use tower::util::MapRequest;
use tower::{Layer, Service};
use tower_http::decompression::{
    DecompressionBody, RequestDecompression, RequestDecompressionLayer,
};

/// The layer: see the module docs.
pub(crate) fn lazy() -> LazyDecompressionLayer {
    LazyDecompressionLayer
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct LazyDecompressionLayer;

impl<S> Layer<S> for LazyDecompressionLayer {
    type Service = LazyDecompression<S>;

    fn layer(&self, inner: S) -> Self::Service {
        LazyDecompression { inner }
    }
}

/// Makes the decoder's body an axum body again, for inner layers that take only that.
type AsAxumBody = fn(axum::http::Request<DecompressionBody<Body>>) -> Request;

/// The decoder in front of the inner service.
type Decoding<S> = RequestDecompression<MapRequest<S, AsAxumBody>>;

/// The service: the inner one, put behind the decoder for the requests that need it.
#[derive(Debug, Clone)]
pub(crate) struct LazyDecompression<S> {
    inner: S,
}

impl<S> Service<Request> for LazyDecompression<S>
where
    S: Service<Request, Response = Response> + Clone,
{
    type Response = Response;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future, <Decoding<S> as Service<Request>>::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let Some(encoding) = request.headers().get(header::CONTENT_ENCODING) else {
            return ResponseFuture::Plain {
                future: self.inner.call(request),
            };
        };
        // Compared as tower-http compares: the exact bytes, case and all.
        if !matches!(encoding.as_bytes(), b"gzip" | b"identity") {
            return ResponseFuture::Refused {
                response: Some(ApiError::UnsupportedContentEncoding.into_response()),
            };
        }
        // The ready service goes behind the decoder; a clone stays for the next request.
        let inner = self.inner.clone();
        let ready = std::mem::replace(&mut self.inner, inner);
        let as_axum_body: AsAxumBody = |request| request.map(Body::new);
        let mut decoding =
            RequestDecompressionLayer::new().layer(MapRequest::new(ready, as_axum_body));
        ResponseFuture::Decoding {
            future: decoding.call(request),
        }
    }
}

pin_project! {
    /// The inner service's answer, or the decoder's with its body made an axum body again.
    #[project = Projected]
    pub(crate) enum ResponseFuture<P, D> {
        Plain { #[pin] future: P },
        Decoding { #[pin] future: D },
        /// Answered without the inner service; taken when polled.
        Refused { response: Option<Response> },
    }
}

impl<P, D, B, E> Future for ResponseFuture<P, D>
where
    P: Future<Output = Result<Response, E>>,
    D: Future<Output = Result<axum::http::Response<B>, E>>,
    B: axum::body::HttpBody<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            Projected::Plain { future } => future.poll(cx),
            Projected::Decoding { future } => future
                .poll(cx)
                .map(|result| result.map(|response| response.map(Body::new))),
            Projected::Refused { response } => {
                Poll::Ready(Ok(response.take().expect("polled after completion")))
            }
        }
    }
}
