//! What the HTTP side shares, grouped by concern: the store, the response caches, the
//! subsystems, and the few settings handlers consult. `AppState::new` builds them and lists
//! where every registry change goes. Only the HTTP side (handlers, `http/`, routes) depends on this module; the
//! subsystems depend on the store, not on each other through here.

use std::sync::Arc;
use std::time::Duration;

use heureka_core::{LeaseExpiry, Limits, Millis, Registry, RegistryPolicy};
use heureka_wire::Format;

use crate::audit::Audit;
use crate::cache::{DeltaCache, Encoding, FullFetchCache, MergedCache, SelectionCache};
use crate::clock::Clock;
use crate::config::{Config, EventStreamConfig, Exposure, PushConfig, ShowDetails};
use crate::events::budget::StreamBudget;
use crate::events::Events;
use crate::metrics::{Metrics, NamespaceNumbers, RegionNumbers, Snapshot};
use crate::persistence::{FileError, Persistence};
use crate::prometheus_sd::PrometheusSd;
use crate::push::PushFeed;
use crate::regions::{
    FetchKind, Outcome, Phase, RegionClient, RegionFetchers, Regions, RegionsSettings,
};
use crate::replication::{OwnAddress, Replication, Replicator, RestoreCheck};
use crate::store::{ChangeSink, Store};

pub(crate) mod security;

pub(crate) use self::security::Security;

pub(crate) type SharedState = Arc<AppState>;

/// Everything a request may need, grouped by concern. Built once by [`AppState::new`].
#[derive(Debug)]
pub(crate) struct AppState {
    /// The namespace this state is (`namespaces/`): `default` for the unprefixed API. Each
    /// namespace has its own state; what the node shares (security, metrics, the audit
    /// trail, the dashboard's page, DNS, xDS) is the same `Arc` in each.
    pub(crate) namespace: String,
    /// The registry and the time: every read, write and `now` goes through it.
    pub(crate) store: Arc<Store>,
    /// The encoded documents registry fetches are served from.
    pub(crate) caches: Caches,
    /// The peers, their queues and the client that talks to them.
    pub(crate) replication: Arc<Replication>,
    /// The event stream and the subscriptions open on it.
    pub(crate) events: EventState,
    /// Who may do what: the users, the peers' credentials, the origins and host names a browser
    /// may use (`state/security.rs`).
    pub(crate) security: Arc<Security>,
    /// What the node shows of itself: metrics, the audit trail, its consumers, the access
    /// log, the dashboard and the actuator.
    pub(crate) observe: Observe,
    /// The server's health checks of instances: this node's tag and the latest probes.
    pub(crate) health_checks: Arc<crate::health_checks::HealthChecks>,
    /// This node: how it names itself, when it started, its registry on disk, and the
    /// registry settings handlers check before taking the lock.
    pub(crate) node: Node,
    /// The remote regions fetched and served beside the local registry (`regions/`); empty
    /// when none is configured, and then no read looks at it further.
    pub(crate) regions: Arc<Regions>,
    /// The xDS server's shared part (`xds/`): a change sink waking its streams, and its status.
    pub(crate) xds: Arc<crate::xds::Xds>,
    /// The DNS server (`dns/`): bound by `serve.rs` when `heureka.dns.enabled`; its
    /// `status()` whether or not it runs.
    pub(crate) dns: Arc<crate::dns::Dns>,
}

/// The response caches: each body is built at most once per registry version (`cache/`).
#[derive(Debug)]
pub(crate) struct Caches {
    /// Pre-encoded, pre-compressed full documents, per application, keyed by version.
    pub(crate) full_fetch: FullFetchCache,
    /// Pre-encoded, pre-compressed delta documents, keyed by registry version.
    pub(crate) delta: DeltaCache,
    /// Encoded single-application and VIP documents, keyed by the version they depend on.
    pub(crate) selections: SelectionCache,
    /// Full and delta documents that include remote regions, keyed on both versions.
    pub(crate) merged: MergedCache,
    /// Prometheus HTTP SD answers, kept per version and query, with the endpoint's switch
    /// and counts (`prometheus_sd/`).
    pub(crate) prometheus_sd: PrometheusSd,
}

/// The event stream (`events/`) and the streams clients hold open on it.
#[derive(Debug)]
pub(crate) struct EventState {
    /// The event stream's channel, the renewal counts and the dashboard's `lastn` lists.
    pub(crate) feed: Arc<Events>,
    /// How many event streams are open, in all and per client, against their limits.
    pub(crate) open_streams: Arc<StreamBudget>,
    /// `heureka.events.*`: the keep-alive, send timeout and age of event streams.
    pub(crate) stream_settings: EventStreamConfig,
    /// The push (`push/`): its feed, its budget of open streams, and `heureka.push.*`.
    pub(crate) push: Arc<PushFeed>,
    pub(crate) push_streams: Arc<StreamBudget>,
    pub(crate) push_settings: PushConfig,
}

/// What the node shows of itself, and how.
#[derive(Debug)]
pub(crate) struct Observe {
    /// The Prometheus metrics, counted on the write path and by the observing layer.
    pub(crate) metrics: Arc<Metrics>,
    /// Whether the Prometheus endpoints are served, and so whether requests are timed.
    pub(crate) metrics_enabled: bool,
    /// `heureka.access-log` / `server.tomcat.accesslog.enabled`: one log line per request.
    pub(crate) access_log: bool,
    /// The audit trail: administrative acts and refusals, logged, kept and published.
    pub(crate) audit: Arc<Audit>,
    /// Who fetches this namespace's registry from this node (`consumers.rs`).
    pub(crate) consumers: crate::consumers::Consumers,
    /// What the dashboard shows that no other part of the state holds.
    pub(crate) dashboard: Arc<crate::dashboard::DashboardInfo>,
    /// `management.endpoints.web.base-path`: where the actuator's endpoints are served.
    pub(crate) actuator_base_path: String,
    /// Which actuator endpoints are served.
    pub(crate) exposed: Exposure,
    /// `management.endpoint.health.show-details`.
    pub(crate) show_details: ShowDetails,
}

/// This node, and the few registry settings request handlers read, resolved once at start-up;
/// the persistence and the rate limiter are the namespace's own.
#[derive(Debug)]
pub(crate) struct Node {
    /// This process's tag on its writes' stamps (`heureka_core::Hlc`), in every namespace.
    pub(crate) tag: u32,
    /// How this node names itself in the consumers' documents: `host:port`.
    pub(crate) name: String,
    /// `spring.application.name`: the app this server (and its peers) register as.
    pub(crate) application_name: String,
    /// When the server started, on its clock.
    pub(crate) started_at: Millis,
    /// The registry kept on disk, when `heureka.persistence.dir` is set.
    pub(crate) persistence: Option<Arc<Persistence>>,
    /// `heureka.limits.*`, for the checks made before the registry lock.
    pub(crate) limits: Limits,
    /// `eureka.server.disable-delta`: delta fetches answer 403.
    pub(crate) disable_delta: bool,
    /// `heureka.refuse-takeovers`: a client may not move a live instance to another endpoint.
    pub(crate) refuse_takeovers: bool,
    /// Eureka's rate limiter on registry fetches (`rate_limiter.rs`), one per namespace: one
    /// team's fetch storm does not throttle another's clients.
    pub(crate) rate_limiter: crate::rate_limiter::RateLimiter,
}

impl AppState {
    /// `port` is the port actually listened on (`server.port` may be 0), by which this
    /// server recognises itself among the configured peers.
    ///
    /// With `heureka.persistence.dir` set, the registry kept there is restored first; only a
    /// store another process holds open is an error.
    pub(crate) fn new(config: &Config, clock: Clock, port: u16) -> Result<SharedState, FileError> {
        let now = clock.now_millis();
        let mut registry = Registry::new(registry_policy(config), now);
        let tag = node_tag();
        registry.set_node_tag(tag);
        let metrics = Arc::new(Metrics::new());
        let persistence = match &config.heureka.persistence.dir {
            Some(dir) => Some(Arc::new(Persistence::open(
                &config.heureka.persistence,
                dir,
                &mut registry,
                now,
                config.heureka.replication.tombstone_retention_ms as i64,
                metrics.clone(),
            )?)),
            None => None,
        };
        // Open with Spring's default-open-for-traffic-count, or with what was restored, so
        // that self-preservation expects the restored instances' renewals; the start-up sync
        // opens again with what it found.
        let restored = u32::try_from(registry.registry_size()).unwrap_or(u32::MAX);
        registry.open_for_traffic(
            config.registry.default_open_for_traffic_count.max(restored),
            now,
        );
        let replication = Arc::new(Replication::new(
            config,
            OwnAddress::from_config(config, port),
        ));
        if restored > 0 {
            replication.restored_from_store();
        }
        let events = Arc::new(Events::new(config));
        let push = Arc::new(PushFeed::new(&config.heureka.push));
        // Where every change goes, in this order, under the registry lock (`store.rs`).
        let mut sinks: Vec<Arc<dyn ChangeSink>> = vec![
            replication.clone(),
            events.clone(),
            push.clone(),
            metrics.clone(),
        ];
        if let Some(persistence) = &persistence {
            sinks.push(persistence.clone());
        }
        let xds = Arc::new(crate::xds::Xds::new(
            &config.heureka.xds,
            &config.client.region,
            metrics.clone(),
        ));
        sinks.push(xds.clone());
        let store = Arc::new(Store::new(registry, clock, sinks));
        metrics.watch_namespace(crate::namespace_name::DEFAULT, &store);
        let audit = Arc::new(Audit::new(
            &config.heureka.audit,
            store.clone(),
            events.clone(),
        ));
        Ok(Arc::new(AppState {
            namespace: crate::namespace_name::DEFAULT.to_owned(),
            store,
            caches: Caches::new(config, now),
            replication,
            events: EventState {
                feed: events,
                open_streams: Arc::new(StreamBudget::for_events(&config.heureka.events)),
                stream_settings: config.heureka.events.clone(),
                push,
                push_streams: Arc::new(StreamBudget::for_push(&config.heureka.push)),
                push_settings: config.heureka.push.clone(),
            },
            security: Arc::new(Security::from_config(config, port)),
            observe: Observe {
                metrics,
                metrics_enabled: config.management.exposed.prometheus,
                access_log: config.management.access_log,
                audit,
                consumers: crate::consumers::Consumers::new(&config.heureka.consumers),
                dashboard: Arc::new(crate::dashboard::DashboardInfo::new(config, port, now)),
                actuator_base_path: config.management.base_path.clone(),
                exposed: config.management.exposed,
                show_details: config.management.show_details,
            },
            health_checks: Arc::new(crate::health_checks::HealthChecks::new(
                &config.heureka.health_checks,
                tag,
            )),
            node: Node {
                tag,
                name: format!(
                    "{}:{port}",
                    crate::own_instance::own_instance(config, port, now).host_name
                ),
                application_name: config.application_name.to_uppercase(),
                started_at: now,
                persistence,
                limits: limits(config),
                disable_delta: config.eureka_server.disable_delta,
                refuse_takeovers: config.heureka.refuse_takeovers,
                rate_limiter: crate::rate_limiter::RateLimiter::new(
                    config.eureka_server.rate_limiter.clone(),
                ),
            },
            regions: Arc::new(Regions::new(RegionsSettings::from_config(config))),
            xds,
            dns: Arc::new(crate::dns::Dns::new(config)),
        }))
    }
}

/// What a namespace other than `default` is: [`AppState::in_namespace`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NamespaceKind {
    /// A namespace in use: replicated to the peers, kept on disk when persistence is on.
    Created,
    /// The stand-in for names not created yet: no peers, nothing on disk, never written.
    Vacant,
}

impl AppState {
    /// The state of namespace `name` (valid, lower-case, not `default`): a registry, caches,
    /// replication, events, push, consumers and health checks of its own, its store under
    /// `{heureka.persistence.dir}/namespaces/{name}`; the node's security, metrics, audit
    /// trail, dashboard page, DNS and xDS shared with this (the default namespace's) state.
    /// Remote regions are served in the default namespace only.
    pub(crate) fn in_namespace(
        &self,
        config: &Config,
        name: &str,
        kind: NamespaceKind,
    ) -> Result<SharedState, FileError> {
        let now = self.store.now();
        let limits = limits_in(config, name);
        let mut registry = Registry::new(
            RegistryPolicy {
                limits: limits.clone(),
                ..registry_policy(config)
            },
            now,
        );
        registry.set_node_tag(self.node.tag);
        let metrics = self.observe.metrics.clone();
        let persistence = match (&config.heureka.persistence.dir, kind) {
            (Some(dir), NamespaceKind::Created) => Some(Arc::new(Persistence::open(
                &config.heureka.persistence,
                &namespace_dir(dir, name),
                &mut registry,
                now,
                config.heureka.replication.tombstone_retention_ms as i64,
                metrics.clone(),
            )?)),
            _ => None,
        };
        let restored = u32::try_from(registry.registry_size()).unwrap_or(u32::MAX);
        registry.open_for_traffic(
            config.registry.default_open_for_traffic_count.max(restored),
            now,
        );
        let segment = format!("{}/{name}", config.heureka.namespaces.path_prefix);
        let replication = Arc::new(
            self.replication
                .in_namespace(&segment, kind == NamespaceKind::Created),
        );
        if restored > 0 {
            replication.restored_from_store();
        }
        let events = Arc::new(Events::new(config));
        if kind == NamespaceKind::Created {
            self.observe.audit.add_namespace(name, &events);
        }
        let push = Arc::new(PushFeed::new(&config.heureka.push));
        let mut sinks: Vec<Arc<dyn ChangeSink>> =
            vec![replication.clone(), events.clone(), push.clone()];
        if kind == NamespaceKind::Created {
            sinks.push(metrics.namespace_counters(name));
        }
        if let Some(persistence) = &persistence {
            sinks.push(persistence.clone());
        }
        let store = Arc::new(Store::new(registry, self.store.clock(), sinks));
        if kind == NamespaceKind::Created {
            metrics.watch_namespace(name, &store);
        }
        Ok(Arc::new(AppState {
            namespace: name.to_owned(),
            store,
            caches: Caches::new(config, now),
            replication,
            events: EventState {
                feed: events,
                open_streams: self.events.open_streams.clone(),
                stream_settings: self.events.stream_settings.clone(),
                push,
                push_streams: self.events.push_streams.clone(),
                push_settings: self.events.push_settings.clone(),
            },
            security: self.security.clone(),
            observe: Observe {
                metrics,
                metrics_enabled: self.observe.metrics_enabled,
                access_log: self.observe.access_log,
                audit: self.observe.audit.clone(),
                consumers: crate::consumers::Consumers::new(&config.heureka.consumers),
                dashboard: self.observe.dashboard.clone(),
                actuator_base_path: self.observe.actuator_base_path.clone(),
                exposed: self.observe.exposed,
                show_details: self.observe.show_details,
            },
            health_checks: Arc::new(crate::health_checks::HealthChecks::new(
                &config.heureka.health_checks,
                self.node.tag,
            )),
            node: Node {
                tag: self.node.tag,
                name: self.node.name.clone(),
                application_name: self.node.application_name.clone(),
                started_at: self.node.started_at,
                persistence,
                limits,
                disable_delta: self.node.disable_delta,
                refuse_takeovers: self.node.refuse_takeovers,
                rate_limiter: crate::rate_limiter::RateLimiter::new(
                    config.eureka_server.rate_limiter.clone(),
                ),
            },
            regions: Arc::new(Regions::new(RegionsSettings::default())),
            xds: self.xds.clone(),
            dns: self.dns.clone(),
        }))
    }
}

/// `heureka.limits.*` in namespace `name`: its own `max-instances`, if it has one.
fn limits_in(config: &Config, name: &str) -> Limits {
    let mut limits = limits(config);
    if let Some(max) = config.heureka.namespaces.max_instances.get(name) {
        limits.max_instances = *max;
    }
    limits
}

/// Where namespace `name`'s registry is kept under `heureka.persistence.dir`.
pub(crate) fn namespace_dir(dir: &str, name: &str) -> String {
    format!("{}/namespaces/{name}", dir.trim_end_matches('/'))
}

impl Caches {
    /// Empty caches whose entries age out after `response-cache-auto-expiration-in-seconds`;
    /// `now`, the server's start, tells its Prometheus SD ETags from an earlier process's.
    fn new(config: &Config, now: Millis) -> Caches {
        let max_age = Duration::from_secs(
            config
                .eureka_server
                .response_cache_auto_expiration_in_seconds,
        );
        Caches {
            full_fetch: FullFetchCache::new(max_age),
            delta: DeltaCache::new(max_age),
            selections: SelectionCache::new(max_age),
            merged: MergedCache::default(),
            prometheus_sd: PrometheusSd::new(config.heureka.prometheus_sd.enabled, now),
        }
    }
}

impl AppState {
    /// Whether the registry is kept on disk, and how that goes.
    pub(crate) fn persistence_view(&self) -> heureka_wire::PersistenceView {
        let Some(persistence) = &self.node.persistence else {
            return Default::default();
        };
        let mut view = persistence.view();
        view.restore_checked = match self.replication.restore_check() {
            RestoreCheck::NotNeeded => None,
            RestoreCheck::Unchecked => Some(false),
            RestoreCheck::Checked => Some(true),
        };
        view
    }

    /// Whether registry reads are served (the start-up sync is done).
    pub(crate) fn is_ready(&self) -> bool {
        self.replication.is_synced()
    }

    /// The handles replication's tasks run on.
    pub(crate) fn replicator(&self) -> Replicator {
        Replicator {
            store: self.store.clone(),
            replication: self.replication.clone(),
            events: self.events.feed.clone(),
        }
    }

    /// The handles the region fetchers run on, with the TLS `https://` regions are reached
    /// with (checked at start-up by `tls::check_client`; the public roots if it fails now).
    pub(crate) fn region_fetchers(&self, config: &Config) -> RegionFetchers {
        let regions = &config.eureka_server.regions;
        let tls = crate::tls::region_client_config(
            config.client.tls.as_ref(),
            regions.trust_store.as_ref(),
        )
        .unwrap_or_else(|error| {
            tracing::error!(%error, "remote regions: https:// regions are verified against the public roots only");
            crate::tls::client_config(None).expect("the public roots always make a configuration")
        });
        RegionFetchers {
            regions: self.regions.clone(),
            client: RegionClient::new(self.regions.settings(), tls),
            store: self.store.clone(),
            events: self.events.feed.clone(),
        }
    }

    /// The handles the health checks run on.
    pub(crate) fn checker(&self, config: &Config) -> crate::health_checks::Checker {
        crate::health_checks::Checker {
            checks: self.health_checks.clone(),
            store: self.store.clone(),
            replication: self.replication.clone(),
            events: self.events.feed.clone(),
            metrics: self.observe.metrics.clone(),
            tls: crate::replication::peer_tls(config),
        }
    }

    /// The start-up line: where the server listens, whether authentication is on and which
    /// peers it replicates to, so an operator reading one line knows what runs.
    pub(crate) fn log_start_up(&self, config: &Config, address: std::net::SocketAddr) {
        let peers: Vec<String> = self
            .replication
            .peers()
            .iter()
            .map(|peer| peer.url.as_str().to_owned())
            .collect();
        let users = config.heureka.users.len();
        let auth = match (&config.security, &self.security.users) {
            (Some(credentials), _) if users == 0 => format!("on (user {})", credentials.name),
            (Some(credentials), _) => format!("on (user {}, {users} more)", credentials.name),
            (None, Some(_)) => format!("on ({users} users)"),
            (None, None) => "off".to_owned(),
        };
        tracing::info!(
            %address,
            base_path = %config.heureka.base_path,
            %auth,
            peers = ?peers,
            self_preservation = config.eureka_server.enable_self_preservation,
            actuator = %config.management.base_path,
            metrics = config.management.exposed.prometheus,
            sources = ?config.sources,
            "heureka is serving the Eureka API"
        );
    }
}

impl AppState {
    /// The numbers the metrics read at scrape time, from every part of the state.
    pub(crate) fn metrics_snapshot(&self) -> Snapshot {
        let state = self;
        let now = state.store.now();
        let version = state.store.read().version();
        let namespaces = state
            .observe
            .metrics
            .namespace_stores()
            .into_iter()
            .map(|(name, store)| namespace_numbers(name, &store))
            .collect();
        Snapshot {
            namespaces,
            ready: state.is_ready(),
            cache_builds: cache_builds(state),
            peers: state.replication.peer_states(),
            consumers: state.observe.consumers.counts(version, now),
            regions: region_numbers(state, now),
        }
    }
}

/// One namespace's instances by application and status, and its self-preservation numbers.
fn namespace_numbers(name: String, store: &Store) -> NamespaceNumbers {
    let registry = store.read();
    let instances = registry
        .status_counts()
        .iter()
        .map(|count| {
            (
                count.app.to_owned(),
                count.status.as_str(),
                count.instances as u64,
            )
        })
        .collect();
    NamespaceNumbers {
        name: (name != crate::namespace_name::DEFAULT).then_some(name),
        instances,
        self_preservation: registry.self_preservation(),
    }
}

/// Each remote region's numbers, in configuration order.
fn region_numbers(state: &AppState, now: Millis) -> Vec<RegionNumbers> {
    let regions = &state.regions;
    (0..regions.settings().regions.len())
        .map(|index| {
            let published = regions.published(index);
            let fetches = FetchKind::ALL
                .iter()
                .flat_map(|kind| {
                    Outcome::ALL.iter().map(|outcome| {
                        let count = published.fetches.get(*kind, *outcome);
                        (kind.as_str(), outcome.as_str(), count)
                    })
                })
                .collect();
            RegionNumbers {
                name: regions.region(index).name.clone(),
                instances: published.served.instance_count() as u64,
                lag_seconds: published
                    .last_success
                    .map(|at| (now - at).max(0) as f64 / 1000.0),
                states: Phase::ALL
                    .iter()
                    .map(|phase| (phase.as_str(), *phase == published.phase))
                    .collect(),
                fetches,
            }
        })
        .collect()
}

/// Bodies each response cache built, by document, format and encoding.
fn cache_builds(state: &AppState) -> Vec<(&'static str, &'static str, &'static str, u64)> {
    let mut builds = Vec::new();
    for format in [Format::Json, Format::Xml] {
        let format_name = match format {
            Format::Json => "json",
            Format::Xml => "xml",
        };
        for encoding in Encoding::ALL {
            builds.push((
                "full",
                format_name,
                encoding.as_str(),
                state.caches.full_fetch.builds(format, encoding),
            ));
            builds.push((
                "delta",
                format_name,
                encoding.as_str(),
                state.caches.delta.builds(format, encoding),
            ));
        }
    }
    builds
}

/// A random tag for this process's writes, so that no other server's carry equal stamps
/// (`heureka_core::Hlc`). std's hasher keys are random per process.
fn node_tag() -> u32 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::process::id()) as u32
}

/// Translates configuration into the registry's own parameter struct; config never reaches core.
fn registry_policy(config: &Config) -> RegistryPolicy {
    let server = &config.eureka_server;
    RegistryPolicy {
        lease_expiry: if config.heureka.legacy_lease_expiry {
            LeaseExpiry::LegacyDoubleDuration
        } else {
            LeaseExpiry::Documented
        },
        enable_self_preservation: server.enable_self_preservation,
        renewal_percent_threshold: server.renewal_percent_threshold,
        expected_client_renewal_interval_secs: server.expected_client_renewal_interval_seconds,
        delta_retention_ms: server.retention_time_in_ms_in_delta_queue as i64,
        expected_number_of_clients_sending_renews: config
            .registry
            .expected_number_of_clients_sending_renews,
        tombstone_retention_ms: config.heureka.replication.tombstone_retention_ms as i64,
        limits: limits(config),
    }
}

/// `heureka.limits.*` as core's limits.
pub(crate) fn limits(config: &Config) -> Limits {
    let limits = &config.heureka.limits;
    Limits {
        max_name_length: limits.max_name_length,
        max_metadata_entries: limits.max_metadata_entries,
        max_metadata_bytes: limits.max_metadata_bytes,
        // Bound to whole seconds within u32 (`config/values.rs`).
        max_lease_duration_secs: u32::try_from(limits.max_lease_duration.as_secs())
            .unwrap_or(u32::MAX),
        max_instances: limits.max_instances,
    }
}
