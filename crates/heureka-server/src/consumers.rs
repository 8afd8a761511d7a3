//! Who fetches the registry from this node (`heureka.consumers.*`): per consumer, when it
//! first and last fetched (full and delta) and the registry version its last fetch returned.
//! What `{base}/consumers`, the dashboard, the `heureka_consumers*` metrics and a drain's
//! progress read.
//!
//! A consumer is told apart by its address and what it calls itself (`DiscoveryIdentity-*`
//! headers, else its `User-Agent`); two clients on one host that send the same are one
//! consumer. Other Eureka servers (`DiscoveryIdentity-Name: DefaultServer`, the peer user, a
//! replication sender) are not consumers, and the dashboard does not book its reads
//! (`handlers/apps.rs`). The table is bounded: consumers quiet for longer than the retention
//! age out, and at the cap the quietest makes room.
//!
//! Only a consumer that fetches periodically is waited for by a drain and counted by the
//! metrics; the others made one-off reads (a `curl`, a probe, `heureka apps`, a browser) and
//! are listed apart as readers, since they will never fetch the change a drain waits for. A
//! consumer fetches periodically once any of its fetches is recognisably a Eureka client's
//! ([`eureka_client`]: a delta, Eureka's identity headers, no `User-Agent`, Spring's or
//! fargo's headers), so that a client is waited for from its first full fetch, or once it
//! has fetched three times at a steady pace ([`steady`]), whatever it is.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use axum::http::{header, HeaderMap, HeaderName, HeaderValue};
use heureka_core::Millis;
use heureka_wire::ConsumerView;
use parking_lot::Mutex;

use crate::config::ConsumersConfig;
use crate::http::negotiate::mentions;

/// Which fetch a consumer made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fetch {
    Full,
    Delta,
}

#[derive(Clone, Debug)]
struct Consumer {
    first_seen: Millis,
    last_full: Option<Millis>,
    last_delta: Option<Millis>,
    version: u64,
    /// It fetches periodically: a drain waits for it. Once set, kept.
    periodic: bool,
    /// The time between its last two fetches, to recognise a steady pace.
    last_gap: Option<Millis>,
    /// Its push streams open on this node (`push/`): it follows the push while any is.
    push_streams: u32,
}

impl Consumer {
    fn last_fetch(&self) -> Millis {
        self.last_full
            .max(self.last_delta)
            .unwrap_or(self.first_seen)
    }

    /// Whether it is still a consumer at `now`: it fetched within `retention_ms`, or follows
    /// the push (a push stream of it is open, however long since it last acknowledged: a quiet
    /// registry sends it nothing to acknowledge).
    fn current(&self, now: Millis, retention_ms: Millis) -> bool {
        self.push_streams > 0 || now - self.last_fetch() <= retention_ms
    }
}

/// A consumer's place in the table: its address and what it calls itself.
pub(crate) type ConsumerKey = (IpAddr, String);

/// The consumers of this node.
#[derive(Debug)]
pub(crate) struct Consumers {
    table: Mutex<HashMap<ConsumerKey, Consumer>>,
    max: usize,
    retention_ms: Millis,
    /// A drain waits for consumers that fetched within this.
    pub(crate) active_within_ms: Millis,
    /// The metric counts consumers behind that have not fetched for this long.
    pub(crate) behind_after_ms: Millis,
}

fn millis(duration: Duration) -> Millis {
    Millis::try_from(duration.as_millis()).unwrap_or(Millis::MAX)
}

impl Consumers {
    pub(crate) fn new(config: &ConsumersConfig) -> Consumers {
        Consumers {
            table: Mutex::new(HashMap::new()),
            max: config.max.max(1),
            retention_ms: millis(config.retention),
            active_within_ms: millis(config.active_within),
            behind_after_ms: millis(config.behind_after),
        }
    }

    /// Books a fetch that returned (at least) registry `version`, and returns the consumer's
    /// key. A request from another server is not a consumer's and is not booked. A push
    /// stream's start is booked as a full fetch (its snapshot is one), and a push
    /// acknowledgment as a delta (only a client holding a copy acknowledges).
    pub(crate) fn record(
        &self,
        address: IpAddr,
        headers: &HeaderMap,
        fetch: Fetch,
        version: u64,
        now: Millis,
    ) -> Option<ConsumerKey> {
        let caller = Caller::of(headers);
        if caller.is_server() {
            return None;
        }
        let client = fetch == Fetch::Delta || caller.eureka_client() || !caller.one_off_tool();
        let key = (address, caller.agent());
        let booked = key.clone();
        let mut table = self.table.lock();
        // One look-up of the key in the usual case, a consumer fetching again.
        if table.len() >= self.max && !table.contains_key(&key) {
            self.make_room(&mut table, now);
        }
        let consumer = match table.entry(key) {
            Entry::Occupied(occupied) => {
                let consumer = occupied.into_mut();
                let gap = now - consumer.last_fetch();
                consumer.periodic |= consumer.last_gap.is_some_and(|last| steady(last, gap));
                consumer.last_gap = Some(gap);
                consumer
            }
            Entry::Vacant(vacant) => vacant.insert(Consumer {
                first_seen: now,
                last_full: None,
                last_delta: None,
                version,
                periodic: false,
                last_gap: None,
                push_streams: 0,
            }),
        };
        consumer.periodic |= client;
        match fetch {
            Fetch::Full => consumer.last_full = Some(now),
            Fetch::Delta => consumer.last_delta = Some(now),
        }
        consumer.version = consumer.version.max(version);
        Some(booked)
    }

    /// A push stream of the consumer booked as `key` opened (`true`) or ended (`false`).
    pub(crate) fn following(&self, key: &ConsumerKey, open: bool) {
        let mut table = self.table.lock();
        if let Some(consumer) = table.get_mut(key) {
            consumer.push_streams = match open {
                true => consumer.push_streams + 1,
                false => consumer.push_streams.saturating_sub(1),
            };
        }
    }

    /// Ages out the quiet, then, if still full, drops the quietest, a push follower last.
    fn make_room(&self, table: &mut HashMap<ConsumerKey, Consumer>, now: Millis) {
        table.retain(|_, consumer| consumer.current(now, self.retention_ms));
        if table.len() >= self.max {
            let quietest = table
                .iter()
                .min_by_key(|(_, consumer)| (consumer.push_streams > 0, consumer.last_fetch()))
                .map(|(key, _)| key.clone());
            if let Some(key) = quietest {
                table.remove(&key);
            }
        }
    }

    /// Every consumer within the retention, most recent fetch first, against the node's
    /// `current` version: those that fetch periodically, then the one-off readers.
    pub(crate) fn views(
        &self,
        node: &str,
        current: u64,
        now: Millis,
    ) -> (Vec<ConsumerView>, Vec<ConsumerView>) {
        let mut table = self.table.lock();
        table.retain(|_, consumer| consumer.current(now, self.retention_ms));
        let (mut periodic, mut readers) = (Vec::new(), Vec::new());
        for ((address, agent), consumer) in table.iter() {
            let view = ConsumerView {
                address: address.to_string(),
                agent: agent.clone(),
                node: node.to_owned(),
                first_seen: consumer.first_seen,
                last_full: consumer.last_full,
                last_delta: consumer.last_delta,
                last_fetch: consumer.last_fetch(),
                version: consumer.version,
                behind: current.saturating_sub(consumer.version),
                confirmed: None,
                push: consumer.push_streams > 0,
            };
            if consumer.periodic {
                periodic.push(view);
            } else {
                readers.push(view);
            }
        }
        for views in [&mut periodic, &mut readers] {
            views.sort_by(|a, b| {
                b.last_fetch
                    .cmp(&a.last_fetch)
                    .then(a.address.cmp(&b.address))
            });
        }
        (periodic, readers)
    }

    /// For the metrics: consumers within the retention that fetch periodically, and those of
    /// them behind `current` that have not fetched for `behind-after` (a one-off reader is
    /// always behind sooner or later, and says nothing about the clients).
    pub(crate) fn counts(&self, current: u64, now: Millis) -> (u64, u64) {
        let table = self.table.lock();
        let live = table
            .values()
            .filter(|consumer| consumer.periodic && consumer.current(now, self.retention_ms));
        live.fold((0, 0), |(all, behind), consumer| {
            let late =
                consumer.version < current && now - consumer.last_fetch() > self.behind_after_ms;
            (all + 1, behind + u64::from(late))
        })
    }
}

/// The header Eureka's clients and servers name themselves in.
pub(crate) const IDENTITY: HeaderName = HeaderName::from_static("discoveryidentity-name");

/// Eureka's client's version and id beside [`IDENTITY`].
const IDENTITY_VERSION: HeaderName = HeaderName::from_static("discoveryidentity-version");
const IDENTITY_ID: HeaderName = HeaderName::from_static("discoveryidentity-id");

/// What a fetch's headers say of its client, read in one pass: a look-up by name for each
/// question cost a fetch more than the rest of its booking. Each field holds the first value
/// of its header, as `HeaderMap::get` would return it.
#[derive(Default)]
struct Caller<'h> {
    identity: Option<&'h HeaderValue>,
    identity_version: Option<&'h HeaderValue>,
    identity_id: Option<&'h HeaderValue>,
    user_agent: Option<&'h HeaderValue>,
    content_type: bool,
    /// Any `Accept` of `application/*+json`.
    spring_accept: bool,
}

impl<'h> Caller<'h> {
    fn of(headers: &'h HeaderMap) -> Caller<'h> {
        let mut caller = Caller::default();
        for (name, value) in headers {
            let first = if name == header::USER_AGENT {
                &mut caller.user_agent
            } else if name == header::ACCEPT {
                caller.spring_accept |=
                    value.to_str().is_ok() && mentions(value.as_bytes(), b"*+json");
                continue;
            } else if name == header::CONTENT_TYPE {
                caller.content_type = true;
                continue;
            } else if name == IDENTITY {
                &mut caller.identity
            } else if name == IDENTITY_VERSION {
                &mut caller.identity_version
            } else if name == IDENTITY_ID {
                &mut caller.identity_id
            } else {
                continue;
            };
            first.get_or_insert(value);
        }
        caller
    }

    /// Another Eureka server's fetch (Java's and Heureka's replication clients say so).
    fn is_server(&self) -> bool {
        let named_server = self
            .identity
            .is_some_and(|name| name.as_bytes().eq_ignore_ascii_case(b"DefaultServer"));
        let replicating = self.user_agent.is_some_and(|agent| {
            agent
                .as_bytes()
                .starts_with(b"Java-EurekaClient-Replication")
        });
        named_server || replicating
    }

    /// A fetch only a Eureka client makes, so that its consumer fetches periodically from its
    /// first full fetch on (`docs/deploy.md` lists who sends what):
    /// * Eureka's identity headers (`DiscoveryIdentity-Name`: Netflix's Java client);
    /// * no `User-Agent` at all: py-eureka-client, eureka-js-client and Heureka's own client
    ///   send none, while curl, wget, browsers, probes and `heureka` do;
    /// * a `Content-Type` on the GET (Spring's RestClient and WebClient transports, fargo) or
    ///   an `Accept` of `application/*+json` (Spring's RestTemplate transport, which asks for
    ///   what its Jackson converter reads).
    ///
    /// A delta is the fourth sign, checked by the caller: only a client holding a copy asks
    /// what changed.
    fn eureka_client(&self) -> bool {
        self.identity.is_some()
            || self.user_agent.is_none()
            || self.content_type
            || self.spring_accept
    }

    /// Whether the fetch comes from a tool of [`ONE_OFF_AGENTS`]: an entry ending in `/`
    /// starts the agent, any other is the whole agent.
    fn one_off_tool(&self) -> bool {
        self.user_agent.is_some_and(|agent| {
            let agent = agent.as_bytes();
            ONE_OFF_AGENTS.iter().any(|tool| match tool.ends_with('/') {
                true => agent.starts_with(tool.as_bytes()),
                false => agent == tool.as_bytes(),
            })
        })
    }

    /// What a consumer calls itself: Eureka's identity headers when it sends them, else its
    /// `User-Agent`; at most 200 bytes, so that a client cannot grow the table's keys.
    fn agent(&self) -> String {
        fn text(value: Option<&HeaderValue>) -> Option<&str> {
            value.and_then(|value| value.to_str().ok())
        }
        let mut agent = match text(self.identity) {
            Some(name) => {
                let version = text(self.identity_version).unwrap_or("?");
                match text(self.identity_id) {
                    Some(id) => format!("{name}/{version} ({id})"),
                    None => format!("{name}/{version}"),
                }
            }
            None => text(self.user_agent).unwrap_or("unknown").to_owned(),
        };
        let mut end = agent.len().min(200);
        while !agent.is_char_boundary(end) {
            end -= 1;
        }
        agent.truncate(end);
        agent
    }
}

/// Agents of tools that read once when someone runs them (or a probe that reads now and
/// then): their first fetch is a one-off read, listed apart and not waited for by a drain,
/// until they fetch at a steady pace. Any other agent counts as a consumer from its first
/// fetch: a drain waits for a client it does not recognise rather than report a consumer
/// confirmed that may still route to the instance.
const ONE_OFF_AGENTS: [&str; 10] = [
    "curl/",
    "Wget/",
    "HTTPie/",
    "PostmanRuntime/",
    "insomnia/",
    "Mozilla/",
    "heureka-cli/",
    "kube-probe/",
    "python-requests/",
    // Node's built-in fetch, whose agent is this one word (eureka-js-client sends none).
    "node",
];

/// Whether two successive gaps between fetches are a steady pace: each at least a second (a
/// burst of reads is no refresh interval) and within a quarter of each other (a timer's
/// jitter, not a person running a command now and then).
fn steady(last: Millis, gap: Millis) -> bool {
    let (short, long) = (last.min(gap), last.max(gap));
    short >= 1_000 && (long - short) * 4 <= long
}

#[cfg(test)]
mod tests;
