//! Prometheus metrics, served at `/actuator/prometheus` and `/metrics` (`handlers/actuator.rs`).
//!
//! Two kinds of numbers, kept apart on purpose:
//!
//! * **Counted as they happen**: registry changes (as a sink of the write path, `store.rs`),
//!   HTTP requests (from `http/observe.rs`), event-stream subscribers.
//! * **Read at scrape time** from the state that already holds them: instances by application
//!   and status, the self-preservation numbers, readiness, response-cache rebuilds, and every
//!   peer's replication queue. Nothing on a request's path maintains a copy of them.
//!
//! Each server has its own `prometheus_client::Registry` (no process-global recorder), so
//! several servers in one process (the integration tests) never mix their numbers.
//!
//! **Namespaces** (`namespaces/`): one registry of metrics for the node. The registry's
//! numbers (write counters, instances, self-preservation) are per namespace: a namespace
//! other than `default` adds its series with a `namespace` label, while `default`'s keep the
//! labels they had before namespaces (so existing queries and alerts read the default
//! namespace; `namespace=""` selects it in PromQL). Bounded by `heureka.namespaces.max`.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use axum::extract::MatchedPath;

use heureka_core::{Change, ChangeKind, Origin, SelfPreservation};
use parking_lot::{Mutex, RwLock};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeLabelSet, EncodeLabelValue, EncodeMetric, LabelValueEncoder,
};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

use crate::replication::PeerState;
use crate::store::{ChangeSink, Store};

/// Upper bounds of the request-latency buckets, in seconds: a heartbeat takes tens of
/// microseconds, a full fetch of a large registry milliseconds, a slow client seconds.
const LATENCY_BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.5,
];

/// The labels of one HTTP request: the route template (never the raw path, so an unbounded
/// set of instance ids cannot create an unbounded set of series), method and status code.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RequestLabels {
    pub(crate) method: &'static str,
    pub(crate) route: RouteLabel,
    pub(crate) status: u16,
}

/// One request series, resolved into the family at its first observation and kept: a
/// histogram's clone shares its counts, so the kept one and the family's are the same series
/// (which appears in a scrape only once observed, as any other).
#[derive(Debug)]
pub(crate) struct KeptSeries {
    labels: RequestLabels,
    histogram: OnceLock<Histogram>,
}

impl KeptSeries {
    pub(crate) fn new(labels: RequestLabels) -> KeptSeries {
        KeptSeries {
            labels,
            histogram: OnceLock::new(),
        }
    }

    pub(crate) fn labels(&self) -> &RequestLabels {
        &self.labels
    }
}

/// The route template a request matched, as the router holds it (shared, so a request copies
/// a pointer, not the text), or `unmatched`. The fast lane (`fast_lane.rs`) names the template
/// of the route it stands in for, so its heartbeats count in the same series.
#[derive(Clone, Debug)]
pub(crate) enum RouteLabel {
    Matched(MatchedPath),
    Template(Arc<str>),
    Unmatched,
}

impl RouteLabel {
    fn as_str(&self) -> &str {
        match self {
            RouteLabel::Matched(path) => path.as_str(),
            RouteLabel::Template(template) => template,
            RouteLabel::Unmatched => "unmatched",
        }
    }
}

impl PartialEq for RouteLabel {
    fn eq(&self, other: &RouteLabel) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for RouteLabel {}

impl Hash for RouteLabel {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl EncodeLabelValue for RouteLabel {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> Result<(), std::fmt::Error> {
        EncodeLabelValue::encode(&self.as_str(), encoder)
    }
}

/// A server's metrics.
#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    /// What the scrape-time collector reports, filled by [`Metrics::encode`] just before
    /// encoding.
    snapshot: Arc<Mutex<Snapshot>>,
    /// Held for a whole scrape, so that two scrapes at once cannot swap snapshots midway.
    scrape: Mutex<()>,
    /// The write counters' families, for a namespace created later.
    write_families: WriteFamilies,
    /// The default namespace's write counters.
    writes: WriteCounters,
    /// Each namespace's store (`default`'s first), read at scrape time.
    namespaces: RwLock<Vec<(String, Weak<Store>)>>,
    requests: Family<RequestLabels, Histogram>,
    event_stream_subscribers: Gauge,
    rate_limited: Family<[(&'static str, &'static str); 1], Counter>,
    /// The series of `rate_limited` by fetch, resolved at their first count: past the rate,
    /// every fetch counts, and hashing its label into the family cost a fetch a twentieth.
    rate_limited_kept: [(&'static str, OnceLock<Counter>); 3],
    event_streams_refused: Counter,
    push_subscribers: Gauge,
    push_streams_refused: Counter,
    health_checks: HealthCheckMetrics,
    persistence: PersistenceMetrics,
    xds: XdsMetrics,
    dns: DnsMetrics,
    prometheus_sd: PrometheusSdMetrics,
}

/// The xDS server (`xds/`): streams open, responses sent, NACKs, streams refused.
#[derive(Debug)]
pub(crate) struct XdsMetrics {
    pub(crate) streams: Gauge,
    pub(crate) responses: Counter,
    pub(crate) nacks: Counter,
    pub(crate) refused: Counter,
}

impl XdsMetrics {
    fn register(registry: &mut Registry) -> XdsMetrics {
        let metrics = XdsMetrics {
            streams: Gauge::default(),
            responses: Counter::default(),
            nacks: Counter::default(),
            refused: Counter::default(),
        };
        registry.register(
            "heureka_xds_streams",
            "ADS streams open on the xDS port",
            metrics.streams.clone(),
        );
        registry.register(
            "heureka_xds_responses",
            "xDS discovery responses sent",
            metrics.responses.clone(),
        );
        registry.register(
            "heureka_xds_nacks",
            "xDS responses a client rejected (NACK)",
            metrics.nacks.clone(),
        );
        registry.register(
            "heureka_xds_streams_refused",
            "ADS streams refused: over heureka.xds.max-streams",
            metrics.refused.clone(),
        );
        metrics
    }
}

/// Prometheus HTTP SD (`prometheus_sd/`): answers by how they were served, and the targets in
/// the last one built.
#[derive(Debug)]
struct PrometheusSdMetrics {
    answers: Family<[(&'static str, &'static str); 1], Counter>,
    targets: Gauge,
}

impl PrometheusSdMetrics {
    fn register(registry: &mut Registry) -> PrometheusSdMetrics {
        let answers = Family::<[(&'static str, &'static str); 1], Counter>::default();
        registry.register(
            "heureka_prometheus_sd_answers",
            "GET {base}/prometheus/sd answers, by how (built: for a new registry version or query; reused: kept; not_modified: 304 to If-None-Match)",
            answers.clone(),
        );
        let targets = Gauge::default();
        registry.register(
            "heureka_prometheus_sd_targets",
            "Targets in the last Prometheus SD answer built",
            targets.clone(),
        );
        PrometheusSdMetrics { answers, targets }
    }
}

/// Persistence (`persistence.rs`): batches written, their latency and size, what waits.
#[derive(Debug)]
struct PersistenceMetrics {
    batches: Counter,
    failed: Counter,
    records: Counter,
    latency: Histogram,
    pending: Gauge,
}

impl PersistenceMetrics {
    fn register(registry: &mut Registry) -> PersistenceMetrics {
        let batches = Counter::default();
        registry.register(
            "heureka_persistence_batches",
            "Batches of registry writes synced to disk",
            batches.clone(),
        );
        let failed = Counter::default();
        registry.register(
            "heureka_persistence_failed_batches",
            "Batches that did not reach the disk (retried at the next flush)",
            failed.clone(),
        );
        let records = Counter::default();
        registry.register(
            "heureka_persistence_records",
            "Instance records written or deleted on disk",
            records.clone(),
        );
        let latency = Histogram::new(PROBE_BUCKETS);
        registry.register_with_unit(
            "heureka_persistence_batch",
            "Time a batch took to write and sync",
            Unit::Seconds,
            latency.clone(),
        );
        let pending = Gauge::default();
        registry.register(
            "heureka_persistence_pending_records",
            "Instances changed and acknowledged, not yet on disk",
            pending.clone(),
        );
        PersistenceMetrics {
            batches,
            failed,
            records,
            latency,
            pending,
        }
    }
}

/// The server's health checks (`health_checks.rs`): probes by outcome and their latency,
/// whether the guard holds, and how many of this node's instances are failing.
#[derive(Debug)]
struct HealthCheckMetrics {
    passed: Counter,
    failed: Counter,
    /// Not probed: the address is outside `heureka.health-checks.allowed-networks`.
    refused: Counter,
    latency: Histogram,
    suspended: Gauge,
    failing: Gauge,
}

impl HealthCheckMetrics {
    fn register(registry: &mut Registry) -> HealthCheckMetrics {
        let probes = Family::<[(&'static str, &'static str); 1], Counter>::default();
        registry.register(
            "heureka_health_checks",
            "Health-check probes this server made, by outcome (passed, failed; refused: not made, the address is outside heureka.health-checks.allowed-networks)",
            probes.clone(),
        );
        let latency = Histogram::new(PROBE_BUCKETS);
        registry.register_with_unit(
            "heureka_health_check_duration",
            "Time a health-check probe took to pass or fail",
            Unit::Seconds,
            latency.clone(),
        );
        let suspended = Gauge::default();
        registry.register(
            "heureka_health_checks_suspended",
            "1 while most probes fail at once and this server suspects its own network, else 0",
            suspended.clone(),
        );
        let failing = Gauge::default();
        registry.register(
            "heureka_health_check_failing_instances",
            "Instances this server checks whose verdict is failing (they read DOWN)",
            failing.clone(),
        );
        let passed = probes.get_or_create(&[("outcome", "passed")]).clone();
        let failed = probes.get_or_create(&[("outcome", "failed")]).clone();
        let refused = probes.get_or_create(&[("outcome", "refused")]).clone();
        HealthCheckMetrics {
            passed,
            failed,
            refused,
            latency,
            suspended,
            failing,
        }
    }
}

/// Upper bounds of the probe-latency buckets, in seconds: a local health endpoint answers in
/// milliseconds, a probe times out in seconds.
const PROBE_BUCKETS: [f64; 10] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0];

/// A write counter's labels: `origin` where it has one, then `namespace` outside `default`.
type WriteLabels = Vec<(&'static str, String)>;

/// The write path's counters, one family each; a namespace's are resolved from them.
#[derive(Debug, Clone)]
struct WriteFamilies {
    registrations: Family<WriteLabels, Counter>,
    renewals: Family<WriteLabels, Counter>,
    cancels: Family<WriteLabels, Counter>,
    evictions: Family<WriteLabels, Counter>,
    takeovers: Family<WriteLabels, Counter>,
}

impl WriteFamilies {
    fn register(registry: &mut Registry) -> WriteFamilies {
        let mut family = |name: &str, help: &str| {
            let family = Family::<WriteLabels, Counter>::default();
            registry.register(name, help, family.clone());
            family
        };
        WriteFamilies {
            registrations: family(
                "heureka_registrations",
                "Instances registered (re-registrations included), by who made the write",
            ),
            renewals: family(
                "heureka_renewals",
                "Successful lease renewals (heartbeats), by who made the write",
            ),
            cancels: family(
                "heureka_cancels",
                "Leases cancelled (deregistrations), by who made the write",
            ),
            evictions: family("heureka_evictions", "Expired leases evicted"),
            takeovers: family(
                "heureka_takeovers",
                "Client registrations that moved a live instance to another endpoint",
            ),
        }
    }
}

/// One namespace's write counters, resolved once so that counting is one atomic add.
#[derive(Debug)]
pub(crate) struct WriteCounters {
    registrations: ByOrigin,
    renewals: ByOrigin,
    cancels: ByOrigin,
    evictions: Counter,
    takeovers: Counter,
}

impl WriteCounters {
    /// `namespace` is None for `default`, whose series have no `namespace` label.
    fn resolve(families: &WriteFamilies, namespace: Option<&str>) -> WriteCounters {
        let labels = |origin: Option<&'static str>| -> WriteLabels {
            let origin = origin.map(|origin| ("origin", origin.to_owned()));
            let namespace = namespace.map(|name| ("namespace", name.to_owned()));
            origin.into_iter().chain(namespace).collect()
        };
        // One lookup per statement: a family's lookup holds its lock until the statement
        // ends, and a second one creating a series would wait for it.
        let counter = |family: &Family<WriteLabels, Counter>, labels: WriteLabels| {
            let counter = family.get_or_create(&labels).clone();
            counter
        };
        let by_origin = |family: &Family<WriteLabels, Counter>| {
            let client = counter(family, labels(Some("client")));
            let peer = counter(family, labels(Some("peer")));
            ByOrigin { client, peer }
        };
        WriteCounters {
            registrations: by_origin(&families.registrations),
            renewals: by_origin(&families.renewals),
            cancels: by_origin(&families.cancels),
            evictions: counter(&families.evictions, labels(None)),
            takeovers: counter(&families.takeovers, labels(None)),
        }
    }

    /// Counts one change of the write path; called under the registry lock, so it only adds.
    fn count(&self, change: &Change) {
        match change.kind {
            ChangeKind::Registered => {
                self.registrations.inc(change.origin);
                if change.takeover.is_some() {
                    self.takeovers.inc();
                }
            }
            ChangeKind::Renewed => self.renewals.inc(change.origin),
            ChangeKind::Cancelled => self.cancels.inc(change.origin),
            ChangeKind::Evicted => {
                self.evictions.inc();
            }
            ChangeKind::StatusChanged
            | ChangeKind::StatusOverridden
            | ChangeKind::StatusOverrideRemoved
            | ChangeKind::MetadataUpdated
            | ChangeKind::HealthChanged
            | ChangeKind::Restamped => {}
        }
    }
}

impl ChangeSink for WriteCounters {
    fn publish(&self, change: &Change, _: &heureka_core::Registry) {
        self.count(change);
    }
}

/// One counter per origin of a write.
#[derive(Debug)]
struct ByOrigin {
    client: Counter,
    peer: Counter,
}

impl ByOrigin {
    fn inc(&self, origin: Origin) {
        match origin {
            Origin::Client => self.client.inc(),
            Origin::Peer => self.peer.inc(),
        };
    }
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let mut registry = Registry::default();
        let write_families = WriteFamilies::register(&mut registry);
        let writes = WriteCounters::resolve(&write_families, None);
        let requests = Family::<RequestLabels, Histogram>::new_with_constructor(
            (|| Histogram::new(LATENCY_BUCKETS)) as fn() -> Histogram,
        );
        registry.register_with_unit(
            "heureka_http_request_duration",
            "HTTP requests by route template, method and status code: time to the response head",
            Unit::Seconds,
            requests.clone(),
        );
        let event_stream_subscribers = Gauge::default();
        registry.register(
            "heureka_event_stream_subscribers",
            "Clients connected to the event stream",
            event_stream_subscribers.clone(),
        );
        let rate_limited = Family::<[(&'static str, &'static str); 1], Counter>::default();
        registry.register(
            "heureka_rate_limited_fetches",
            "Registry fetches over eureka.server.rate-limiter-* rates, by fetch (full, delta, \
             application); refused with 503 only when rate-limiter-enabled",
            rate_limited.clone(),
        );
        let event_streams_refused = Counter::default();
        registry.register(
            "heureka_event_streams_refused",
            "Event streams refused with 429: over heureka.events.max-streams or -per-client",
            event_streams_refused.clone(),
        );
        let push_subscribers = Gauge::default();
        registry.register(
            "heureka_push_subscribers",
            "Clients following the push stream (GET {base}/push)",
            push_subscribers.clone(),
        );
        let push_streams_refused = Counter::default();
        registry.register(
            "heureka_push_streams_refused",
            "Push streams refused with 429: over heureka.push.max-subscribers or -per-client",
            push_streams_refused.clone(),
        );
        let health_checks = HealthCheckMetrics::register(&mut registry);
        let persistence = PersistenceMetrics::register(&mut registry);
        let xds = XdsMetrics::register(&mut registry);
        let dns = DnsMetrics::register(&mut registry);
        let prometheus_sd = PrometheusSdMetrics::register(&mut registry);
        let snapshot = Arc::new(Mutex::new(Snapshot::default()));
        registry.register_collector(Box::new(ScrapeTime(snapshot.clone())));
        Metrics {
            registry,
            snapshot,
            scrape: Mutex::new(()),
            write_families,
            writes,
            namespaces: RwLock::new(Vec::new()),
            requests,
            event_stream_subscribers,
            rate_limited,
            rate_limited_kept: ["full", "delta", "application"]
                .map(|fetch| (fetch, OnceLock::new())),
            event_streams_refused,
            push_subscribers,
            push_streams_refused,
            health_checks,
            persistence,
            xds,
            dns,
            prometheus_sd,
        }
    }

    /// The write counters of namespace `name` (not `default`, whose are this sink's own),
    /// labelled with it: a sink of its store.
    pub(crate) fn namespace_counters(&self, name: &str) -> Arc<WriteCounters> {
        Arc::new(WriteCounters::resolve(&self.write_families, Some(name)))
    }

    /// Reads namespace `name`'s registry at every scrape from now on (`default` first).
    pub(crate) fn watch_namespace(&self, name: &str, store: &Arc<Store>) {
        self.namespaces
            .write()
            .push((name.to_owned(), Arc::downgrade(store)));
    }

    /// Every namespace's store still open, `default` first.
    pub(crate) fn namespace_stores(&self) -> Vec<(String, Arc<Store>)> {
        self.namespaces
            .read()
            .iter()
            .filter_map(|(name, store)| Some((name.clone(), store.upgrade()?)))
            .collect()
    }

    /// Counts one Prometheus SD answer (`built`, `reused`, `not_modified`), with its targets
    /// when it was built.
    pub(crate) fn prometheus_sd_answer(&self, how: &'static str, targets: Option<usize>) {
        let sd = &self.prometheus_sd;
        sd.answers.get_or_create(&[("answer", how)]).inc();
        if let Some(targets) = targets {
            sd.targets.set(i64::try_from(targets).unwrap_or(i64::MAX));
        }
    }

    /// Counts one DNS query answered (`dns/`), by outcome.
    pub(crate) fn dns_query(&self, outcome: &'static str) {
        self.dns
            .queries
            .get_or_create(&[("outcome", outcome)])
            .inc();
    }

    /// Counts one DNS answer cut to fit a UDP message.
    pub(crate) fn dns_truncated(&self) {
        self.dns.truncated.inc();
    }

    /// Counts one persistence batch of `records` rows.
    pub(crate) fn persistence_batch(&self, records: usize, elapsed: Duration, written: bool) {
        let persistence = &self.persistence;
        if written {
            persistence.batches.inc();
            persistence.records.inc_by(records as u64);
        } else {
            persistence.failed.inc();
        }
        persistence.latency.observe(elapsed.as_secs_f64());
    }

    /// Instances changed and not yet on disk.
    pub(crate) fn persistence_pending(&self, pending: usize) {
        self.persistence.pending.set(pending as i64);
    }

    /// Counts one health-check probe.
    pub(crate) fn health_check(&self, passed: bool, seconds: f64) {
        let checks = &self.health_checks;
        if passed {
            checks.passed.inc();
        } else {
            checks.failed.inc();
        }
        checks.latency.observe(seconds);
    }

    /// Counts one probe not made: the instance's address is outside the allowed networks.
    pub(crate) fn health_check_refused(&self) {
        self.health_checks.refused.inc();
    }

    /// The health checks' state after a round.
    pub(crate) fn health_checks_state(&self, suspended: bool, failing: usize) {
        self.health_checks.suspended.set(i64::from(suspended));
        self.health_checks.failing.set(failing as i64);
    }

    /// Counts a registry fetch over the rate limiter's rate, refused or not.
    pub(crate) fn rate_limited(&self, fetch: &'static str) {
        let series = || self.rate_limited.get_or_create(&[("fetch", fetch)]).clone();
        match self
            .rate_limited_kept
            .iter()
            .find(|(name, _)| *name == fetch)
        {
            Some((_, kept)) => kept.get_or_init(series).inc(),
            None => series().inc(),
        };
    }

    /// Records one answered HTTP request.
    /// [`Metrics::observe_request`] into a series resolved once and kept: the fast lane's
    /// renewed heartbeats skip hashing their labels into the family on every request.
    pub(crate) fn observe_kept(&self, kept: &KeptSeries, elapsed: Duration) {
        kept.histogram
            .get_or_init(|| self.requests.get_or_create(&kept.labels).clone())
            .observe(elapsed.as_secs_f64());
    }

    pub(crate) fn observe_request(&self, labels: &RequestLabels, elapsed: Duration) {
        self.requests
            .get_or_create(labels)
            .observe(elapsed.as_secs_f64());
    }

    /// Counts an event-stream subscriber for as long as the returned guard lives: the event
    /// stream holds one per connected client and drops it when the client goes.
    pub(crate) fn event_stream_subscriber(&self) -> SubscriberGuard {
        self.event_stream_subscribers.inc();
        SubscriberGuard(self.event_stream_subscribers.clone())
    }

    /// Records an event stream refused for its budget.
    pub(crate) fn event_stream_refused(&self) {
        self.event_streams_refused.inc();
    }

    /// Counts a push subscriber for as long as the returned guard lives.
    pub(crate) fn push_subscriber(&self) -> SubscriberGuard {
        self.push_subscribers.inc();
        SubscriberGuard(self.push_subscribers.clone())
    }

    /// Records a push stream refused for its budget.
    pub(crate) fn push_stream_refused(&self) {
        self.push_streams_refused.inc();
    }

    /// The xDS server's numbers (`xds/`).
    pub(crate) fn xds(&self) -> &XdsMetrics {
        &self.xds
    }

    /// Counts an open ADS stream for as long as the returned guard lives.
    pub(crate) fn xds_stream(&self) -> SubscriberGuard {
        self.xds.streams.inc();
        SubscriberGuard(self.xds.streams.clone())
    }

    /// The text exposition of every metric, the scrape-time ones from the snapshot `take`
    /// takes once this scrape holds the scrape lock (so overlapping scrapes are served in the
    /// order their numbers were read). OpenMetrics when `openmetrics`, else Prometheus'
    /// classic text format 0.0.4.
    pub(crate) fn encode(&self, take: impl FnOnce() -> Snapshot, openmetrics: bool) -> String {
        let _one_at_a_time = self.scrape.lock();
        *self.snapshot.lock() = take();
        let mut text = String::new();
        // Writing to a String cannot fail; an encoder error would be a bug in a metric.
        let encoded = if openmetrics {
            prometheus_client::encoding::text::encode(&mut text, &self.registry)
        } else {
            prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry)
        };
        if let Err(error) = encoded {
            tracing::error!(%error, "metrics could not be encoded");
        }
        text
    }
}

/// Decrements the subscriber gauge when dropped. See [`Metrics::event_stream_subscriber`].
#[derive(Debug)]
pub(crate) struct SubscriberGuard(Gauge);

impl Drop for SubscriberGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// The numbers read from the state at scrape time.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    /// Each namespace's registry numbers, `default` first.
    pub(crate) namespaces: Vec<NamespaceNumbers>,
    pub(crate) ready: bool,
    /// `(document, format, encoding, builds)`.
    pub(crate) cache_builds: Vec<(&'static str, &'static str, &'static str, u64)>,
    pub(crate) peers: Vec<PeerState>,
    /// Consumers within the retention, and those behind (`consumers.rs`).
    pub(crate) consumers: (u64, u64),
    /// Each remote region (`regions/`), in configuration order.
    pub(crate) regions: Vec<RegionNumbers>,
}

/// One namespace's registry numbers at scrape time.
#[derive(Debug)]
pub(crate) struct NamespaceNumbers {
    /// None for `default`, whose series have no `namespace` label.
    pub(crate) name: Option<String>,
    /// `(application, status, instances)`.
    pub(crate) instances: Vec<(String, &'static str, u64)>,
    pub(crate) self_preservation: SelfPreservation,
}

impl NamespaceNumbers {
    /// `extra` with this namespace's label after them, if it has one.
    fn labels<'a>(&'a self, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut labels = extra.to_vec();
        if let Some(name) = &self.name {
            labels.push(("namespace", name.as_str()));
        }
        labels
    }
}

/// One remote region's numbers at scrape time.
#[derive(Debug, Default)]
pub(crate) struct RegionNumbers {
    pub(crate) name: String,
    /// Instances served from it now (none while starting or dropped).
    pub(crate) instances: u64,
    /// Since its last successful fetch; None before the first.
    pub(crate) lag_seconds: Option<f64>,
    /// Every state's name and whether it is the region's.
    pub(crate) states: Vec<(&'static str, bool)>,
    /// Fetches by kind (`full|delta`) and outcome (`ok|failed|mismatch`).
    pub(crate) fetches: Vec<(&'static str, &'static str, u64)>,
}

/// Encodes the [`Snapshot`] the scrape just took.
#[derive(Debug)]
struct ScrapeTime(Arc<Mutex<Snapshot>>);

impl Collector for ScrapeTime {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let snapshot = self.0.lock();
        let mut family = encoder.encode_descriptor(
            "heureka_instances",
            "Registered instances by application and status (expired, not yet evicted included)",
            None,
            MetricType::Gauge,
        )?;
        for namespace in &snapshot.namespaces {
            for (app, status, count) in &namespace.instances {
                let labels = namespace.labels(&[("application", app.as_str()), ("status", status)]);
                ConstGauge::new(*count as i64).encode(family.encode_family(&labels)?)?;
            }
        }
        encode_self_preservation(&mut encoder, &snapshot.namespaces)?;
        gauge(
            &mut encoder,
            "heureka_consumers",
            "Clients that fetch the registry from this server periodically (one-off reads left out), seen within heureka.consumers.retention",
            snapshot.consumers.0 as i64,
        )?;
        gauge(
            &mut encoder,
            "heureka_consumers_behind",
            "Consumers holding an older registry version that have not fetched for heureka.consumers.behind-after",
            snapshot.consumers.1 as i64,
        )?;
        gauge(
            &mut encoder,
            "heureka_ready",
            "1 once the start-up sync is done and registry reads are served, else 0",
            i64::from(snapshot.ready),
        )?;
        let mut rebuilds = encoder.encode_descriptor(
            "heureka_response_cache_rebuilds",
            "Response bodies built (by document, format and encoding) because the registry changed or the entry aged",
            None,
            MetricType::Counter,
        )?;
        for (document, format, encoding, count) in &snapshot.cache_builds {
            let labels = [
                ("document", *document),
                ("format", *format),
                ("encoding", *encoding),
            ];
            ConstCounter::new(*count).encode(rebuilds.encode_family(&labels)?)?;
        }
        encode_peers(&mut encoder, &snapshot.peers)?;
        encode_regions(&mut encoder, &snapshot.regions)
    }
}

/// The self-preservation numbers of each namespace.
fn encode_self_preservation(
    encoder: &mut DescriptorEncoder<'_>,
    namespaces: &[NamespaceNumbers],
) -> Result<(), std::fmt::Error> {
    type Read = fn(&SelfPreservation) -> i64;
    let series: [(&str, &str, Read); 4] = [
        (
            "heureka_renews_last_minute",
            "Renewals counted in the last complete minute",
            |numbers| numbers.renews_last_min as i64,
        ),
        (
            "heureka_renews_threshold",
            "Renewals per minute below which self-preservation stops eviction",
            |numbers| i64::from(numbers.renews_threshold),
        ),
        (
            "heureka_expected_clients",
            "Clients expected to send renewals (the threshold's basis)",
            |numbers| i64::from(numbers.expected_clients),
        ),
        (
            "heureka_self_preservation_active",
            "1 while self-preservation holds eviction back, else 0",
            |numbers| i64::from(!numbers.lease_expiration_enabled),
        ),
    ];
    for (name, help, read) in series {
        let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
        for namespace in namespaces {
            let labels = namespace.labels(&[]);
            let value = read(&namespace.self_preservation);
            ConstGauge::new(value).encode(family.encode_family(&labels)?)?;
        }
    }
    Ok(())
}

/// Per-region series, labelled by the region's name: only when regions are configured.
fn encode_regions(
    encoder: &mut DescriptorEncoder<'_>,
    regions: &[RegionNumbers],
) -> Result<(), std::fmt::Error> {
    if regions.is_empty() {
        return Ok(());
    }
    let mut family = encoder.encode_descriptor(
        "heureka_region_instances",
        "Instances served from the remote region (none while it is starting or dropped)",
        None,
        MetricType::Gauge,
    )?;
    for region in regions {
        let labels = [("region", region.name.as_str())];
        ConstGauge::new(region.instances as i64).encode(family.encode_family(&labels)?)?;
    }
    let mut family = encoder.encode_descriptor(
        "heureka_region_lag",
        "Time since the remote region's last successful fetch (absent before the first)",
        Some(&Unit::Seconds),
        MetricType::Gauge,
    )?;
    for region in regions {
        let Some(lag) = region.lag_seconds else {
            continue;
        };
        let labels = [("region", region.name.as_str())];
        ConstGauge::new(lag).encode(family.encode_family(&labels)?)?;
    }
    let mut family = encoder.encode_descriptor(
        "heureka_region_state",
        "1 for the remote region's state (starting, ready, stale, dropped), 0 for the others",
        None,
        MetricType::Gauge,
    )?;
    for region in regions {
        for (state, current) in &region.states {
            let labels = [("region", region.name.as_str()), ("state", state)];
            ConstGauge::new(i64::from(*current)).encode(family.encode_family(&labels)?)?;
        }
    }
    let mut family = encoder.encode_descriptor(
        "heureka_region_fetches",
        "Fetches of the remote region by kind (full, delta) and outcome (ok, failed, mismatch)",
        None,
        MetricType::Counter,
    )?;
    for region in regions {
        for (kind, outcome, count) in &region.fetches {
            let labels = [
                ("region", region.name.as_str()),
                ("kind", kind),
                ("outcome", outcome),
            ];
            ConstCounter::new(*count).encode(family.encode_family(&labels)?)?;
        }
    }
    Ok(())
}

fn gauge(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    value: i64,
) -> Result<(), std::fmt::Error> {
    let metric = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    ConstGauge::new(value).encode(metric)
}

/// Per-peer replication series, labelled by the peer's service URL.
fn encode_peers(
    encoder: &mut DescriptorEncoder<'_>,
    peers: &[PeerState],
) -> Result<(), std::fmt::Error> {
    let per_peer = |encoder: &mut DescriptorEncoder<'_>,
                    name: &str,
                    help: &str,
                    unit: Option<&Unit>,
                    kind: MetricType,
                    value: &dyn Fn(&PeerState) -> Option<f64>|
     -> Result<(), std::fmt::Error> {
        let mut family = encoder.encode_descriptor(name, help, unit, kind)?;
        for peer in peers {
            let Some(value) = value(peer) else { continue };
            let labels = [("peer", peer.url.as_str())];
            let metric = family.encode_family(&labels)?;
            match kind {
                MetricType::Counter => ConstCounter::new(value as u64).encode(metric)?,
                _ => ConstGauge::new(value).encode(metric)?,
            }
        }
        Ok(())
    };
    per_peer(
        encoder,
        "heureka_replication_peer_up",
        "1 while the last batch sent to the peer was delivered, else 0",
        None,
        MetricType::Gauge,
        &|peer| Some(f64::from(u8::from(peer.up))),
    )?;
    per_peer(
        encoder,
        "heureka_replication_queue_depth",
        "Replication tasks waiting to be sent to the peer",
        None,
        MetricType::Gauge,
        &|peer| Some(peer.queue_depth as f64),
    )?;
    per_peer(
        encoder,
        "heureka_replication_lag",
        "How long the oldest task of the last delivered batch had waited",
        Some(&Unit::Seconds),
        MetricType::Gauge,
        &|peer| peer.replication_lag_ms.map(|ms| ms as f64 / 1000.0),
    )?;
    per_peer(
        encoder,
        "heureka_replication_failures",
        "Batches the peer did not accept (unreachable, congested or refused)",
        None,
        MetricType::Counter,
        &|peer| Some(peer.failures as f64),
    )?;
    per_peer(
        encoder,
        "heureka_replication_dropped_tasks",
        "Replication tasks dropped because the peer's queue was full or they expired",
        None,
        MetricType::Counter,
        &|peer| Some(peer.dropped_tasks as f64),
    )?;
    per_peer(
        encoder,
        "heureka_replication_tasks_sent",
        "Replication tasks delivered to the peer",
        None,
        MetricType::Counter,
        &|peer| Some(peer.tasks_sent as f64),
    )
}

impl ChangeSink for Metrics {
    /// Counts one change of the default namespace's write path.
    fn publish(&self, change: &Change, _: &heureka_core::Registry) {
        self.writes.count(change);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_stream_subscriber_is_counted_while_its_guard_lives() {
        let metrics = Metrics::new();
        let first = metrics.event_stream_subscriber();
        let second = metrics.event_stream_subscriber();
        assert_eq!(metrics.event_stream_subscribers.get(), 2);
        drop(first);
        assert_eq!(metrics.event_stream_subscribers.get(), 1);
        drop(second);
        assert_eq!(metrics.event_stream_subscribers.get(), 0);
    }
}

/// The DNS server (`dns/`): queries by outcome, and answers truncated to fit UDP.
#[derive(Debug)]
struct DnsMetrics {
    queries: Family<[(&'static str, &'static str); 1], Counter>,
    truncated: Counter,
}

impl DnsMetrics {
    fn register(registry: &mut Registry) -> DnsMetrics {
        let queries = Family::<[(&'static str, &'static str); 1], Counter>::default();
        registry.register(
            "heureka_dns_queries",
            "DNS queries answered, by outcome (answered, empty, nxdomain, refused, rate_limited)",
            queries.clone(),
        );
        let truncated = Counter::default();
        registry.register(
            "heureka_dns_truncated_answers",
            "DNS answers cut to fit a UDP message (TC set: the client retries over TCP)",
            truncated.clone(),
        );
        DnsMetrics { queries, truncated }
    }
}
