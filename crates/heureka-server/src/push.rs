//! Push (`docs/push.md`): every write's changes sent to the consumers that follow them, as
//! Server-Sent Events at `GET {base}/push`, so that a consumer stops calling an instance within
//! a second of the registry no longer serving it `UP` instead of after its next fetch.
//!
//! * `message.rs` — a `delta` (one write's changes, Eureka's delta document) and a `snapshot`
//!   (the followed applications, Eureka's full document), each as the SSE frame it is sent as;
//!   stream ids.
//! * `feed.rs` — the feed: a [`ChangeSink`](crate::store::ChangeSink) that makes one delta per
//!   write under the registry lock, fans it out on a broadcast channel and keeps the last
//!   `heureka.push.replay` for streams that resume; how a stream starts (snapshot, or the
//!   deltas it missed).
//! * `subscriber.rs` — one subscriber's stream: what it is sent first, then the live deltas
//!   it follows, keep-alive comments, and its end when it falls behind.
//!
//! The handler is `handlers/push.rs`; the budget of open streams is `events/budget.rs`'s.

pub(crate) mod feed;
pub(crate) mod message;
pub(crate) mod subscriber;

pub(crate) use feed::PushFeed;
