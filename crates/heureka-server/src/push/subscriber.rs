//! One subscriber's push stream: the frames its start decided (a snapshot, or the deltas it
//! missed), then every live delta it follows, a keep-alive comment when it has been sent
//! nothing for a keep-alive interval, and its end when it falls more than the channel's
//! capacity behind (it resumes when it reconnects). Whatever the stream holds for its
//! lifetime (its budget permit, its metrics gauge, its place among the consumers) is dropped
//! with it.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Sleep;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::Stream;

use super::feed::{PushFeed, Start};
use super::message::{Follows, KEEP_ALIVE};
use crate::clock;

/// The frames of one stream, as the response body sends them.
pub(crate) struct Subscriber {
    first: VecDeque<Bytes>,
    live: BroadcastStream<Arc<super::message::Delta>>,
    /// Live deltas up to this number were covered by `first`.
    covered: u64,
    follows: Follows,
    keep_alive: Pin<Box<Sleep>>,
    keep_alive_interval: Duration,
    feed: Arc<PushFeed>,
    ended: bool,
    /// Held for as long as the stream lives.
    _held: Box<dyn Send + Sync>,
}

impl Subscriber {
    pub(crate) fn new(
        start: Start,
        follows: Follows,
        keep_alive_interval: Duration,
        feed: Arc<PushFeed>,
        held: Box<dyn Send + Sync>,
    ) -> Subscriber {
        Subscriber {
            first: start.first.into(),
            live: BroadcastStream::new(start.receiver),
            covered: start.covered,
            follows,
            keep_alive: Box::pin(tokio::time::sleep(keep_alive_interval)),
            keep_alive_interval,
            feed,
            ended: false,
            _held: held,
        }
    }

    fn sent_something(&mut self) {
        let next = clock::instant() + self.keep_alive_interval;
        self.keep_alive.as_mut().reset(next);
    }
}

impl Stream for Subscriber {
    type Item = Bytes;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if self.ended {
            return Poll::Ready(None);
        }
        if let Some(frame) = self.first.pop_front() {
            self.sent_something();
            return Poll::Ready(Some(frame));
        }
        loop {
            match Pin::new(&mut self.live).poll_next(cx) {
                Poll::Ready(Some(Ok(delta))) => {
                    if delta.id.seq <= self.covered {
                        continue;
                    }
                    let Some(frame) = delta.frame_for(&self.follows) else {
                        continue;
                    };
                    self.sent_something();
                    return Poll::Ready(Some(frame));
                }
                // Fallen behind, or the feed is gone: the client resumes from its last id.
                Poll::Ready(Some(Err(BroadcastStreamRecvError::Lagged(_)))) | Poll::Ready(None) => {
                    self.ended = true;
                    return Poll::Ready(None);
                }
                Poll::Pending => break,
            }
        }
        match self.keep_alive.as_mut().poll(cx) {
            Poll::Ready(()) => {
                self.sent_something();
                Poll::Ready(Some(Bytes::from_static(KEEP_ALIVE)))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.feed.ended();
    }
}

#[cfg(test)]
mod tests;
