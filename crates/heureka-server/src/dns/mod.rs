//! DNS (`heureka.dns.*`, `docs/dns.md`): the local registry's UP instances answered as A,
//! AAAA and SRV records under one domain, over UDP and TCP, with hickory's serving loops and
//! wire format. Files from the bottom up: `names.rs` (what a name asks), `endpoints.rs` (what
//! the registry's read documents hold for it), `cache.rs` (those, kept per application version,
//! and the zone of each address), `order.rs` (zone first, then a rotation),
//! `answer.rs` (the DNS rules, pure), `limiter.rs` (a token bucket per source),
//! `counters.rs` (the numbers `status()` shows), `handler.rs` (one query, from socket to
//! answer) and `service.rs` (binding, start and stop).

mod answer;
mod cache;
mod counters;
mod endpoints;
mod handler;
mod limiter;
mod names;
mod order;
mod service;

pub(crate) use self::counters::DnsStatus;
pub(crate) use self::service::Dns;
