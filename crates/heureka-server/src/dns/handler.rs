//! One query, from hickory's serving loops to the answer sent: the rate limit, the question
//! read, the registry read under the store's lock (short, before any `.await`), the answer
//! built by `answer.rs`, then sent with EDNS as asked. hickory encodes it and truncates it
//! (TC) when it exceeds 512 bytes, or the EDNS size the client offered (at most
//! [`MAX_UDP_PAYLOAD`]), over UDP; over TCP the whole answer goes.

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hickory_proto::op::{Edns, Header, HeaderCounts, Metadata, OpCode, ResponseCode};
use hickory_proto::rr::{DNSClass, Name};
use hickory_server::net::runtime::Time;
use hickory_server::server::{Request, RequestHandler, ResponseHandler, ResponseInfo};
use hickory_server::zone_handler::MessageResponseBuilder;
use parking_lot::Mutex;

use super::answer::{self, Answer, Found, Outcome, Zone};
use super::cache::EndpointCache;
use super::counters::Counters;
use super::limiter::SourceLimiter;
use super::names::{self, Asked};
use super::order::arrange;
use crate::log_budget::LogBudget;
use crate::metrics::Metrics;
use crate::store::Store;

/// The largest UDP answer sent whatever the client offers: DNS flag day 2020's 1232 bytes,
/// which fits an IPv6 packet on any path without fragmenting.
pub(crate) const MAX_UDP_PAYLOAD: u16 = 1232;

/// Lines a minute about sources over the rate limit.
pub(crate) const RATE_LIMITED_LOGGED_PER_MINUTE: u32 = 10;

#[derive(Debug)]
pub(crate) struct Handler {
    pub(crate) store: Arc<Store>,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) zone: Zone,
    pub(crate) limiter: Mutex<SourceLimiter>,
    /// Each application's endpoints as of its version, and the zone of each address.
    pub(crate) cache: Mutex<EndpointCache>,
    /// Queries answered so far, which rotates the order of each answer.
    pub(crate) turn: AtomicUsize,
    pub(crate) rate_limited_log: Mutex<LogBudget>,
}

#[async_trait::async_trait]
impl RequestHandler for Handler {
    async fn handle_request<R: ResponseHandler, T: Time>(
        &self,
        request: &Request,
        mut response_handle: R,
    ) -> ResponseInfo {
        let answer = self.decide(request);
        let edns = request.edns.as_ref().map(|asked| {
            let mut edns = Edns::new();
            edns.set_max_payload(asked.max_payload().min(MAX_UDP_PAYLOAD));
            edns
        });
        let mut metadata = Metadata::response_from_request(&request.metadata);
        metadata.response_code = answer.code;
        metadata.authoritative =
            answer.outcome != Outcome::Refused && answer.outcome != Outcome::RateLimited;
        let response = MessageResponseBuilder::new(&request.queries, edns.as_ref()).build(
            metadata,
            answer.answers.iter(),
            [],
            answer.soa.iter(),
            answer.additionals.iter(),
        );
        // Counted before it is sent, so that whoever holds the answer sees it counted.
        self.counters.count(answer.outcome);
        self.metrics.dns_query(answer.outcome.as_str());
        match response_handle.send_response(response).await {
            Ok(info) => {
                if info.truncation {
                    self.counters.truncated();
                    self.metrics.dns_truncated();
                }
                info
            }
            Err(error) => {
                tracing::debug!(%error, "DNS answer not sent");
                metadata.response_code = ResponseCode::ServFail;
                ResponseInfo::from(Header {
                    metadata,
                    counts: HeaderCounts::default(),
                })
            }
        }
    }
}

impl Handler {
    /// The answer to `request`. Holds the store's lock only while reading the application
    /// asked about.
    fn decide(&self, request: &Request) -> Answer {
        let source = request.src().ip();
        if !self.limiter.lock().admit(source, self.store.now()) {
            self.log_rate_limited(source);
            let mut refused = answer::refused(ResponseCode::Refused);
            refused.outcome = Outcome::RateLimited;
            return refused;
        }
        if request.metadata.op_code != OpCode::Query {
            return answer::refused(ResponseCode::NotImp);
        }
        let Ok(info) = request.request_info() else {
            return answer::refused(ResponseCode::FormErr);
        };
        if info.query.query_class() != DNSClass::IN {
            return answer::refused(ResponseCode::Refused);
        }
        let qname = Name::from(info.query.name());
        let asked = names::asked(&qname, &self.zone.domain);
        let app = match &asked {
            Asked::Addresses { app } | Asked::Service { app, .. } | Asked::Host { app, .. } => {
                Some(app.as_str())
            }
            Asked::Outside | Asked::Apex | Asked::Nothing => None,
        };
        let turn = self.turn.fetch_add(1, Ordering::Relaxed);
        let (endpoints, asker_zone, serial) = {
            let registry = self.store.read();
            let mut cache = self.cache.lock();
            let endpoints = app.and_then(|app| cache.up(&registry, app));
            let zoned = endpoints
                .as_ref()
                .is_some_and(|endpoints| endpoints.iter().any(|e| e.zone.is_some()));
            let asker_zone = zoned
                .then(|| {
                    cache
                        .zone_of(&registry, source, self.store.instant())
                        .map(str::to_owned)
                })
                .flatten();
            // The SOA's serial: the registry's version, wrapping as serials do (RFC 1982).
            (endpoints, asker_zone, registry.version() as u32)
        };
        let found = Found {
            endpoints: endpoints
                .as_deref()
                .map(|endpoints| arrange(endpoints, asker_zone.as_deref(), turn)),
            asker_zone: asker_zone.as_deref(),
            serial,
        };
        answer::answer(&self.zone, &asked, &qname, info.query.query_type(), &found)
    }

    fn log_rate_limited(&self, source: IpAddr) {
        let mut budget = self.rate_limited_log.lock();
        if let Some(unlogged) = budget.take(self.store.instant()) {
            drop(budget);
            tracing::warn!(
                %source,
                unlogged,
                "DNS queries refused: over heureka.dns.rate-limit from this address"
            );
        }
    }
}
