//! The event stream (`docs/events.md`): registry changes as events, published on one feed
//! (`feed.rs`) and read by every subscriber: the SSE endpoint (`stream.rs`, within the stream
//! budget of `budget.rs`) and the webhooks (`webhooks.rs`).

pub(crate) mod budget;
pub(crate) mod feed;
pub(crate) mod stream;
pub(crate) mod webhooks;

pub(crate) use feed::{flush_renewals_every_second, Events};
