//! A cached body: the shared buffers of a document, sent back to back without copying.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};

/// A cached body: shared buffers sent back to back, so a plain document is its runs' bytes as
/// they are kept, never copied into one buffer per version or per request.
#[derive(Clone, Debug)]
pub(crate) struct CachedBody {
    pub(super) parts: Arc<[Bytes]>,
    len: u64,
}

impl CachedBody {
    pub(crate) fn of(parts: Vec<Bytes>) -> CachedBody {
        let len = parts.iter().map(|part| part.len() as u64).sum();
        CachedBody {
            parts: parts.into(),
            len,
        }
    }

    /// The body for a response: its exact length is known, so it goes out with a
    /// `Content-Length`, as a single buffer would.
    pub(crate) fn into_http_body(self) -> axum::body::Body {
        axum::body::Body::new(PartsBody {
            parts: self.parts,
            next: 0,
            remaining: self.len,
        })
    }

    #[cfg(test)]
    pub(crate) fn to_vec(&self) -> Vec<u8> {
        self.parts.concat()
    }
}

/// [`CachedBody`] being sent: one frame per part.
struct PartsBody {
    parts: Arc<[Bytes]>,
    next: usize,
    remaining: u64,
}

impl hyper::body::Body for PartsBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        while let Some(part) = self.parts.get(self.next).cloned() {
            self.next += 1;
            if !part.is_empty() {
                self.remaining -= part.len() as u64;
                return Poll::Ready(Some(Ok(Frame::data(part))));
            }
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}
