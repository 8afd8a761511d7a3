//! `EurekaClient`: the instance's registration and the local registry copy, kept current by
//! background tasks: heartbeat, registry refresh and instance-info replication (§8.1, §8.2,
//! §8.3, §8.5, §8.7), and the push (`push.rs`) where the server has one.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use heureka_core::{Instance, InstanceStatus, Millis};
use heureka_wire::{decode_applications, encode_instance, Format};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::StatusCode;
use tokio::sync::{broadcast, Notify};
use tokio::task::JoinHandle;
use tokio::time::{sleep_until, timeout, Instant};

use crate::cache::LocalRegistry;
use crate::config::ClientConfig;
use crate::error::ClientError;
use crate::events::{ClientEvent, FetchKind, EVENT_BUFFER};
use crate::health::{url_health_check, HealthCheck};
use crate::regions::{regions_query, InstanceRegionChecker};
use crate::registry_copy::{FetchCounts, Mark, RegistryCopy};
use crate::replicator::{OwnInstance, RateLimiter, StatusChange, ON_DEMAND_BURST};
use crate::schedule::supervise;
use crate::streak::Streak;
use crate::transport::Transport;

const JSON: &str = "application/json";

/// A registered instance and its view of the registry.
///
/// [`EurekaClient::start`] (or [`ClientBuilder::start`]) fetches the registry and registers;
/// from then on the lease is renewed every `lease_renewal_interval`, the registry refreshed
/// every `registry_fetch_interval` (and, with `push_enabled`, as the server pushes changes),
/// and every `instance_info_replication_interval` the health check consulted and the instance
/// re-registered if it changed. [`EurekaClient::shutdown`] cancels the registration; dropping
/// the client without it cancels too, as a best effort, if a Tokio runtime is still running.
///
/// As in Java, `register_with_eureka = false` leaves out everything about the own instance
/// (no registration, heartbeat, replication, health check or cancel: the client only reads the
/// registry), and `fetch_registry = false` leaves out the registry copy (no fetch at start, no
/// refresh: every lookup is empty).
pub struct EurekaClient {
    inner: Arc<Inner>,
    tasks: Vec<JoinHandle<()>>,
    cancelled: bool,
}

/// How to start a client beyond its [`ClientConfig`]: [`EurekaClient::builder`].
pub struct ClientBuilder {
    config: ClientConfig,
    health: Option<Arc<dyn HealthCheck>>,
    /// The builder's explicit initial status; `None` takes the config's `initial_status`.
    status: Option<InstanceStatus>,
    events: broadcast::Sender<ClientEvent>,
}

struct Inner {
    transport: Arc<Transport>,
    /// `APP/id`, the instance's path under `apps/`.
    instance_path: String,
    app_path: String,
    /// `register_with_eureka`: whether the own instance is registered, renewed and cancelled.
    registers: bool,
    /// What is registered, and whether a change still has to be.
    own: Mutex<OwnInstance>,
    health: Option<Arc<dyn HealthCheck>>,
    /// The replication interval: the period of the replicator, and how long a health check
    /// may take.
    replication_interval: Duration,
    on_demand_status_change: bool,
    on_demand_limiter: Mutex<RateLimiter>,
    /// Wakes the replicator for an on-demand round the limiter allowed.
    on_demand: Notify,
    /// The registry copy, which the refresh and the push keep current.
    copy: Arc<RegistryCopy>,
    /// Which region each instance of the copy is in, and which is preferred.
    regions: InstanceRegionChecker,
    /// `apps` and `apps/delta`, with `?regions=` when remote regions are fetched.
    full_path: String,
    delta_path: String,
    events: broadcast::Sender<ClientEvent>,
    /// Whether the last heartbeat, refresh and registration failed: see [`Streak`].
    heartbeat_failing: Streak,
    refresh_failing: Streak,
    register_failing: Streak,
}

impl EurekaClient {
    /// Starts a client with no health check given in code, reporting the config's
    /// `initial_status`: see [`ClientBuilder::start`].
    pub async fn start(config: ClientConfig) -> Result<EurekaClient, ClientError> {
        EurekaClient::builder(config).start().await
    }

    /// A client to be given a health check or an initial status before it starts.
    pub fn builder(config: ClientConfig) -> ClientBuilder {
        ClientBuilder {
            config,
            health: None,
            status: None,
            events: broadcast::channel(EVENT_BUFFER).0,
        }
    }

    /// The `UP` instances of `app` (any case) in the local copy, shuffled at each fetch as the
    /// Java client does; instances of every status when `filter_only_up_instances` is off.
    ///
    /// With remote regions fetched (`fetch_remote_regions_registry`), the instances of one
    /// region: the local region's while it has an `UP` instance of `app`, else those of the
    /// first remote region, in configuration order, that has one
    /// ([`InstanceRegionChecker::prefer`]).
    pub fn instances(&self, app: &str) -> Vec<Instance> {
        let offered = self.registry().instances(app);
        self.inner
            .regions
            .prefer(offered, |instance| instance.status == InstanceStatus::Up)
    }

    /// The instances of `app` that [`EurekaClient::instances`] would offer from `region` (the
    /// local one or a remote one fetched), whether or not that region is the preferred one
    /// (Java's `getInstancesByVipAddress(vip, secure, region)`).
    pub fn instances_in_region(&self, app: &str, region: &str) -> Vec<Instance> {
        let mut offered = self.registry().instances(app);
        offered.retain(|instance| {
            self.inner
                .regions
                .instance_region(instance)
                .eq_ignore_ascii_case(region)
        });
        offered
    }

    /// Which region each instance is in, as this client works it out from the configuration
    /// (`eureka.client.region`, `availability-zones`, `fetch-remote-regions-registry`); give it
    /// to [`crate::Selector::prefer_regions`] to choose among instances of several regions.
    pub fn region_checker(&self) -> &InstanceRegionChecker {
        &self.inner.regions
    }

    /// Every instance of `app` (any case) in the local copy, whatever its status, ordered by
    /// id: what Java's `getApplication(app).getInstancesAsIsFromEureka()` holds, and the
    /// remote regions' instances too when they are fetched.
    pub fn all_instances(&self, app: &str) -> Vec<Instance> {
        self.registry().all_instances(app)
    }

    /// The instances in the local copy with this instance id, in any application and of any
    /// status (Java's `getInstancesById`).
    pub fn instances_by_id(&self, id: &str) -> Vec<Instance> {
        self.registry().instances_by_id(id)
    }

    /// The names of the applications in the local copy, upper case and sorted, every status
    /// counted (the applications of Java's `getApplications()`).
    pub fn applications(&self) -> Vec<String> {
        self.registry().applications()
    }

    /// The `apps__hashcode` of the local copy (e.g. `DOWN_1_UP_2_`), which after a refresh is
    /// the server's: two copies with the same hash hold the same statuses.
    pub fn apps_hashcode(&self) -> String {
        self.registry().hashcode()
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, LocalRegistry> {
        self.inner.copy.read()
    }

    /// How the local copy has been kept current: full fetches and consistent deltas fetched,
    /// snapshots and deltas pushed.
    pub fn fetch_counts(&self) -> FetchCounts {
        self.inner.copy.counts()
    }

    /// The events from now on (see [`ClientEvent`]).
    pub fn subscribe(&self) -> broadcast::Receiver<ClientEvent> {
        self.inner.events.subscribe()
    }

    /// The status the client registers: the application's own unless that is `UP` and a
    /// health check says otherwise. The server may still show another: its override wins.
    pub fn status(&self) -> InstanceStatus {
        self.inner.own.lock().expect("own lock").instance.status
    }

    /// Sets the application's own status, as Java's `ApplicationInfoManager.setInstanceStatus`.
    /// A change is re-registered at once (within the on-demand rate limit, else at the next
    /// replication round) when `on_demand_update_status_change` is on, else at the next round.
    ///
    /// The server decides what it shows (§6.6): a `DOWN` or `STARTING` is always taken, an `UP`
    /// gives way to an operator's override, and an `OUT_OF_SERVICE` from the client is not
    /// taken over a lease that is `UP` (an operator's override via `PUT …/status` is the way
    /// to take an instance out of service).
    pub fn set_status(&self, status: InstanceStatus) {
        let change = self
            .inner
            .own
            .lock()
            .expect("own lock")
            .set_reported(status, now_millis());
        if let Some(change) = change {
            self.inner.status_changed(change);
            if self.inner.on_demand_status_change {
                self.inner.request_update();
            }
        }
    }

    /// Adds `entries` to the instance's metadata (replacing values of keys it has) and
    /// re-registers it, within the on-demand rate limit, else at the next replication round.
    /// (Java waits for the next round; the server's own metadata endpoint is not used, since
    /// the next re-registration would overwrite what it set, §3.13.)
    pub fn update_metadata(&self, entries: impl IntoIterator<Item = (String, String)>) {
        self.inner.own.lock().expect("own lock").merge_metadata(
            entries.into_iter().collect::<BTreeMap<_, _>>(),
            now_millis(),
        );
        self.inner.request_update();
    }

    /// Asks for a replication round now: the health check is consulted and the instance
    /// re-registered if anything changed. False when the on-demand rate limit (a burst of 2,
    /// then `120 / instance_info_replication_interval` per minute) refused it; the periodic
    /// round does it then; always false for a client that does not register.
    pub fn request_update(&self) -> bool {
        self.inner.request_update()
    }

    /// Stops the background tasks and cancels the registration (`DELETE apps/APP/id`), unless
    /// the client does not register.
    pub async fn shutdown(mut self) -> Result<(), ClientError> {
        self.stop_tasks();
        self.cancelled = true;
        if !self.inner.registers {
            return Ok(());
        }
        self.inner.cancel().await
    }

    fn stop_tasks(&mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
    }
}

impl ClientBuilder {
    /// Consults `check` before the first registration and at every replication round; its
    /// answer is registered while the application's own status is `UP` (Spring's
    /// `HealthCheckHandler`). A check given here is used whatever
    /// `eureka.client.healthcheck.enabled` says: that key only makes the client check its own
    /// health URL when no check is given in code.
    pub fn health_check(mut self, check: impl HealthCheck) -> ClientBuilder {
        self.health = Some(Arc::new(check));
        self
    }

    /// The application's own status at the first registration, in place of the config's
    /// `initial_status` (`eureka.instance.initial-status`, `UP` by default).
    pub fn status(mut self, status: InstanceStatus) -> ClientBuilder {
        self.status = Some(status);
        self
    }

    /// The events from the start on, the first fetch and registration included.
    pub fn subscribe(&self) -> broadcast::Receiver<ClientEvent> {
        self.events.subscribe()
    }

    /// Fetches the registry (a failure is logged, not fatal, as in Java), consults the health
    /// check, registers the instance (anything but 204 is an error) and starts the heartbeat,
    /// refresh, replication and push tasks; the fetch, refresh and push only with
    /// `fetch_registry` (the push also only with `push_enabled`, and never while remote regions
    /// are fetched: it carries the local region only), the rest only with
    /// `register_with_eureka`.
    ///
    /// The health check is the one given to [`ClientBuilder::health_check`], else, with
    /// `healthcheck_enabled`, a GET of the instance's own health-check URL (2xx is `UP`,
    /// anything else `DOWN`), else none.
    pub async fn start(self) -> Result<EurekaClient, ClientError> {
        let ClientBuilder {
            config,
            health,
            status,
            events,
        } = self;
        let transport = Arc::new(Transport::new(
            &config.ordered_service_urls(),
            config.quarantine,
            config.session_reconnect_interval,
            (config.connect_timeout, config.request_timeout),
            config.tls.as_ref(),
        )?);
        let instance = crate::instance::own_instance(&config, now_millis());
        let status = status.unwrap_or(config.initial_status);
        let health = match health {
            Some(health) => Some(health),
            None if config.healthcheck_enabled => own_health_url(&instance)
                .map(|url| {
                    url_health_check(url, config.request_timeout)
                        .map(|check| Arc::new(check) as Arc<dyn HealthCheck>)
                })
                .transpose()?,
            None => None,
        };
        let copy = Arc::new(RegistryCopy::new(
            config.filter_only_up_instances,
            (instance.app.clone(), instance.id().to_owned()),
            events.clone(),
        ));
        let query = regions_query(&config.fetch_remote_regions_registry);
        let inner = Arc::new(Inner {
            transport,
            app_path: format!("apps/{}", instance.app),
            instance_path: format!("apps/{}/{}", instance.app, instance.id()),
            registers: config.register_with_eureka,
            own: Mutex::new(OwnInstance::new(instance, status)),
            health,
            replication_interval: config.instance_info_replication_interval,
            on_demand_status_change: config.on_demand_update_status_change,
            on_demand_limiter: Mutex::new(RateLimiter::new(
                ON_DEMAND_BURST,
                config.instance_info_replication_interval,
                Instant::now(),
            )),
            on_demand: Notify::new(),
            copy,
            regions: InstanceRegionChecker::new(&config),
            full_path: format!("apps{query}"),
            delta_path: format!("apps/delta{query}"),
            events,
            heartbeat_failing: Streak::default(),
            refresh_failing: Streak::default(),
            register_failing: Streak::default(),
        });
        let mut tasks = Vec::new();
        if config.fetch_registry {
            inner.clone().refresh_round().await;
            let refresh = inner.clone();
            tasks.push(supervise(
                config.registry_fetch_interval,
                config.cache_refresh_executor_exponential_back_off_bound,
                move || refresh.clone().refresh_round(),
            ));
        }
        if config.register_with_eureka {
            // As Spring's first on-demand update does: the health check's answer is what is
            // first registered.
            inner.check_health().await;
            if let Err(error) = inner.register().await {
                for task in tasks {
                    task.abort();
                }
                return Err(error);
            }
            let heartbeat = inner.clone();
            tasks.push(supervise(
                config.lease_renewal_interval,
                config.heartbeat_executor_exponential_back_off_bound,
                move || heartbeat.clone().heartbeat_round(),
            ));
            tasks.push(tokio::spawn(
                inner
                    .clone()
                    .replicate(config.initial_instance_info_replication_interval),
            ));
        }
        let remote_regions = !config.fetch_remote_regions_registry.is_empty();
        if config.fetch_registry && config.push_enabled && remote_regions {
            tracing::info!(
                "remote regions are fetched ({}): the push carries the local region only, so \
                 the registry is kept current by the periodic fetch alone",
                config.fetch_remote_regions_registry.join(",")
            );
        } else if config.fetch_registry && config.push_enabled {
            // After the registration: the stream's first snapshot then holds the own instance.
            tasks.push(tokio::spawn(crate::push::follow(
                inner.copy.clone(),
                inner.transport.clone(),
            )));
        }
        Ok(EurekaClient {
            inner,
            tasks,
            cancelled: false,
        })
    }
}

impl Drop for EurekaClient {
    fn drop(&mut self) {
        self.stop_tasks();
        if self.cancelled || !self.inner.registers {
            return;
        }
        // Drop cannot await; the cancel runs if the runtime lives long enough.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let inner = self.inner.clone();
            runtime.spawn(async move {
                if let Err(error) = inner.cancel().await {
                    tracing::warn!(%error, "cancel on drop failed");
                }
            });
        }
    }
}

impl Inner {
    fn emit(&self, event: ClientEvent) {
        // No subscriber is not an error.
        let _ = self.events.send(event);
    }

    fn status_changed(&self, (old, new): StatusChange) {
        tracing::info!(
            old = old.as_str(),
            new = new.as_str(),
            "instance status changed"
        );
        self.emit(ClientEvent::StatusChanged { old, new });
    }

    /// Wakes the replicator if the on-demand limiter allows; Java's `onDemandUpdate`.
    fn request_update(&self) -> bool {
        if !self.registers {
            // No replicator runs: nothing is ever sent.
            return false;
        }
        let allowed = self
            .on_demand_limiter
            .lock()
            .expect("limiter lock")
            .try_acquire(Instant::now());
        if allowed {
            self.on_demand.notify_one();
        } else {
            tracing::warn!("on-demand update refused by the rate limiter; the next round sends it");
        }
        allowed
    }

    /// The replicator: a round after `first_delay`, then one every replication interval after
    /// the last round, periodic or on demand (an on-demand round replaces the periodic one that
    /// was due, as in Java).
    async fn replicate(self: Arc<Inner>, first_delay: Duration) {
        let mut next = Instant::now() + first_delay;
        loop {
            tokio::select! {
                () = sleep_until(next) => {}
                () = self.on_demand.notified() => {}
            }
            self.check_health().await;
            let dirty = self.own.lock().expect("own lock").dirty_since();
            if dirty.is_some() {
                // The failure is an event already; the info stays dirty for the next round.
                let _ = self.register().await;
            }
            next = Instant::now() + self.replication_interval;
        }
    }

    /// Asks the health check, if there is one, and takes its answer; one that takes longer
    /// than the replication interval is `DOWN`.
    async fn check_health(&self) {
        let Some(health) = &self.health else {
            return;
        };
        let status = timeout(self.replication_interval, health.check())
            .await
            .unwrap_or_else(|_| {
                tracing::warn!("the health check did not answer in time; DOWN");
                InstanceStatus::Down
            });
        let change = self
            .own
            .lock()
            .expect("own lock")
            .set_health(status, now_millis());
        if let Some(change) = change {
            self.status_changed(change);
        }
    }

    async fn heartbeat_round(self: Arc<Inner>) {
        match self.renew().await {
            Ok(()) => {
                self.heartbeat_failing.succeeded("heartbeat");
                self.emit(ClientEvent::Renewed);
            }
            Err(error) => {
                self.heartbeat_failing.failed("heartbeat", &error);
                self.emit(ClientEvent::RenewalFailed {
                    error: error.to_string(),
                });
            }
        }
    }

    async fn refresh_round(self: Arc<Inner>) {
        match self.refresh().await {
            Ok(()) => self.refresh_failing.succeeded("registry fetch"),
            Err(error) => self.refresh_failing.failed("registry fetch", &error),
        }
    }

    /// `POST apps/APP` with the instance; the server answers 204. The outcome is an event as
    /// well as the result.
    async fn register(&self) -> Result<(), ClientError> {
        let result = self.post_instance().await;
        match &result {
            Ok(status) => {
                self.register_failing.succeeded("registration");
                self.emit(ClientEvent::Registered { status: *status });
            }
            Err(error) => {
                self.register_failing.failed("registration", error);
                self.emit(ClientEvent::RegistrationFailed {
                    error: error.to_string(),
                });
            }
        }
        result.map(drop)
    }

    async fn post_instance(&self) -> Result<InstanceStatus, ClientError> {
        let (body, stamp, status) = {
            let own = self.own.lock().expect("own lock");
            (
                encode_instance(&own.instance, Format::Json),
                own.instance.last_dirty_timestamp,
                own.instance.status,
            )
        };
        let response = self
            .transport
            .send(&self.app_path, |http, url| {
                http.post(url)
                    .header(CONTENT_TYPE, JSON)
                    .header(ACCEPT, JSON)
                    .body(body.clone())
            })
            .await?;
        expect(response.status(), StatusCode::NO_CONTENT, "register")?;
        self.own.lock().expect("own lock").registered(stamp);
        Ok(status)
    }

    /// `PUT apps/APP/id`; a 404 means the server does not know the instance (it restarted, or
    /// evicted the lease) or holds an older copy of it, so it is registered again with a fresh
    /// `lastDirtyTimestamp`.
    async fn renew(&self) -> Result<(), ClientError> {
        let (status, dirty) = {
            let own = self.own.lock().expect("own lock");
            (own.instance.status, own.instance.last_dirty_timestamp)
        };
        let path = format!(
            "{}?status={}&lastDirtyTimestamp={dirty}",
            self.instance_path,
            status.as_str()
        );
        let response = self
            .transport
            .send(&path, |http, url| http.put(url).header(ACCEPT, JSON))
            .await?;
        if response.status() == StatusCode::NOT_FOUND {
            tracing::info!(instance = %self.instance_path, "server does not know the instance; re-registering");
            self.own.lock().expect("own lock").mark_dirty(now_millis());
            return self.register().await;
        }
        expect(response.status(), StatusCode::OK, "heartbeat")
    }

    /// `DELETE apps/APP/id`; any answer will do, as in Java.
    async fn cancel(&self) -> Result<(), ClientError> {
        self.transport
            .send(&self.instance_path, |http, url| http.delete(url))
            .await
            .map(drop)
    }

    /// A delta once the copy is filled, else (and whenever the delta cannot be used) a full
    /// fetch; then the events. A fetch the push overtook is dropped (`registry_copy.rs`): the
    /// copy already holds as much or more.
    async fn refresh(&self) -> Result<(), ClientError> {
        let mark = self.copy.mark();
        let filled = self.copy.read().filled;
        let mut changed = Vec::new();
        if filled {
            match self.apply_delta(mark, &mut changed).await? {
                Some(true) => {
                    self.copy.refreshed(FetchKind::Delta, changed);
                    return Ok(());
                }
                Some(false) => {}
                None => return Ok(()),
            }
        }
        if self.full_fetch(mark, &mut changed).await?.is_some() {
            self.copy.refreshed(FetchKind::Full, changed);
        } else if !changed.is_empty() {
            // The delta was applied before the push overtook the full fetch that was to check it.
            self.copy.refreshed(FetchKind::Delta, changed);
        }
        Ok(())
    }

    /// Applies `GET apps/delta`; false when a full fetch is needed instead: the server refused
    /// the delta (403 when deltas are disabled) or the patched copy's hash disagrees. The
    /// applications it touched go into `changed` either way, since the full fetch compares
    /// with the patched copy. `None` when the push overtook it: nothing was applied.
    async fn apply_delta(
        &self,
        mark: Mark,
        changed: &mut Vec<String>,
    ) -> Result<Option<bool>, ClientError> {
        let response = self.get(&self.delta_path).await?;
        if response.status() != StatusCode::OK {
            tracing::debug!(status = %response.status(), "delta refused; full fetch");
            return Ok(Some(false));
        }
        let delta = decode_applications(&response.bytes().await?, Format::Json)?;
        let Some((consistent, touched)) = self.copy.patch_fetched(delta, mark) else {
            tracing::debug!("the push overtook the delta fetch; dropped");
            return Ok(None);
        };
        changed.extend(touched);
        if !consistent {
            tracing::debug!("apps__hashcode differs after the delta; full fetch");
        }
        Ok(Some(consistent))
    }

    /// `GET apps`, replacing the copy; `None` when the push overtook it: nothing was applied.
    async fn full_fetch(
        &self,
        mark: Mark,
        changed: &mut Vec<String>,
    ) -> Result<Option<()>, ClientError> {
        let response = self.get(&self.full_path).await?;
        expect(response.status(), StatusCode::OK, "full fetch")?;
        let full = decode_applications(&response.bytes().await?, Format::Json)?;
        let Some(touched) = self.copy.replace_fetched(full, mark) else {
            tracing::debug!("the push overtook the full fetch; dropped");
            return Ok(None);
        };
        changed.extend(touched);
        Ok(Some(()))
    }

    async fn get(&self, path: &str) -> Result<reqwest::Response, ClientError> {
        self.transport
            .send(path, |http, url| http.get(url).header(ACCEPT, JSON))
            .await
    }
}

/// Where the instance says its health is: the plain health-check URL, else the secure one.
fn own_health_url(instance: &Instance) -> Option<String> {
    let url = instance
        .health_check_url
        .clone()
        .or_else(|| instance.secure_health_check_url.clone());
    if url.is_none() {
        tracing::warn!("healthcheck enabled, but the instance has no health-check URL; none used");
    }
    url
}

fn expect(status: StatusCode, wanted: StatusCode, what: &'static str) -> Result<(), ClientError> {
    if status == wanted {
        Ok(())
    } else {
        Err(ClientError::UnexpectedStatus {
            what,
            status: status.as_u16(),
        })
    }
}

fn now_millis() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            Millis::try_from(since.as_millis()).unwrap_or(Millis::MAX)
        })
}
