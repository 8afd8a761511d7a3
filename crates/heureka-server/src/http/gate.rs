//! A layer that lets a request through or answers it at once, before any handler runs: the
//! checks every request passes (`cross_site.rs`, `peers_only.rs`) are a [`Check`] behind it.
//! A service of its own rather than `middleware::from_fn`, which boxes on every request; a
//! check costs a heartbeat a few header look-ups.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use pin_project_lite::pin_project;
use tower::{Layer, Service};

use crate::http::error::ApiError;

/// What a gate asks of each request.
pub(crate) trait Check {
    /// `Err(refusal)` when the request is refused: its answer is sent and nothing else runs.
    /// A check may mark the request for what follows (`http/namespace_creation.rs`).
    fn check(&self, request: &mut Request) -> Result<(), ApiError>;
}

/// The layer of a [`Check`], shared by every connection's service.
pub(crate) struct GateLayer<C>(Arc<C>);

impl<C> GateLayer<C> {
    pub(crate) fn of(check: C) -> GateLayer<C> {
        GateLayer(Arc::new(check))
    }
}

impl<C> Clone for GateLayer<C> {
    fn clone(&self) -> GateLayer<C> {
        GateLayer(self.0.clone())
    }
}

impl<S, C> Layer<S> for GateLayer<C> {
    type Service = Gate<S, C>;

    fn layer(&self, inner: S) -> Gate<S, C> {
        Gate {
            check: self.0.clone(),
            inner,
        }
    }
}

pub(crate) struct Gate<S, C> {
    check: Arc<C>,
    inner: S,
}

impl<S: Clone, C> Clone for Gate<S, C> {
    fn clone(&self) -> Gate<S, C> {
        Gate {
            check: self.check.clone(),
            inner: self.inner.clone(),
        }
    }
}

impl<S, C> Service<Request> for Gate<S, C>
where
    S: Service<Request, Response = Response>,
    C: Check,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Gated<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        match self.check.check(&mut request) {
            Ok(()) => Gated::Passed {
                inner: self.inner.call(request),
            },
            Err(refusal) => Gated::Refused {
                response: Some(refusal.into_response()),
            },
        }
    }
}

pin_project! {
    /// The inner service's answer, or the gate's refusal.
    #[project = GatedProjection]
    pub(crate) enum Gated<F> {
        Passed { #[pin] inner: F },
        Refused { response: Option<Response> },
    }
}

impl<F, E> Future for Gated<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            GatedProjection::Passed { inner } => inner.poll(cx),
            GatedProjection::Refused { response } => {
                Poll::Ready(Ok(response.take().expect("a refusal is answered once")))
            }
        }
    }
}
