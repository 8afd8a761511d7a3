//! `EurekaClient`: the instance's registration and the local registry copy, kept current by two
//! background tasks (§8.1, §8.2, §8.3, §8.7).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use heureka_core::{Instance, Millis};
use heureka_wire::{decode_applications, encode_instance, Format};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::StatusCode;
use tokio::task::JoinHandle;
use tokio::time::{interval_at, MissedTickBehavior};

use crate::cache::LocalRegistry;
use crate::config::ClientConfig;
use crate::error::ClientError;
use crate::transport::Transport;

const JSON: &str = "application/json";

/// A registered instance and its view of the registry.
///
/// [`EurekaClient::start`] fetches the registry and registers; from then on the lease is renewed
/// every `lease_renewal_interval` and the registry refreshed every `registry_fetch_interval`.
/// [`EurekaClient::shutdown`] cancels the registration; dropping the client without it cancels
/// too, as a best effort, if a Tokio runtime is still running.
pub struct EurekaClient {
    inner: Arc<Inner>,
    tasks: Vec<JoinHandle<()>>,
    cancelled: bool,
}

struct Inner {
    transport: Transport,
    /// `APP/id`, the instance's path under `apps/`.
    instance_path: String,
    app_path: String,
    /// What is registered; only `lastDirtyTimestamp` changes, on a re-registration.
    instance: Mutex<Instance>,
    registry: Mutex<LocalRegistry>,
    full_fetches: AtomicU64,
    deltas_applied: AtomicU64,
}

/// How the local copy has been kept current so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FetchCounts {
    /// Successful full fetches (`GET apps`).
    pub full: u64,
    /// Deltas applied whose hash matched, so that no full fetch was needed.
    pub deltas: u64,
}

impl EurekaClient {
    /// Fetches the registry (a failure is logged, not fatal, as in Java), registers the
    /// instance (anything but 204 is an error) and starts the heartbeat and refresh tasks.
    pub async fn start(config: ClientConfig) -> Result<EurekaClient, ClientError> {
        let transport = Transport::new(
            &config.service_urls,
            config.quarantine,
            config.request_timeout,
        )?;
        let instance = crate::instance::own_instance(&config, now_millis());
        let inner = Arc::new(Inner {
            transport,
            app_path: format!("apps/{}", instance.app),
            instance_path: format!("apps/{}/{}", instance.app, instance.id()),
            instance: Mutex::new(instance),
            registry: Mutex::new(LocalRegistry::default()),
            full_fetches: AtomicU64::new(0),
            deltas_applied: AtomicU64::new(0),
        });
        if let Err(error) = inner.refresh().await {
            tracing::warn!(%error, "initial registry fetch failed");
        }
        inner.register().await?;
        let tasks = vec![
            every(
                config.lease_renewal_interval,
                inner.clone(),
                |inner| async move {
                    if let Err(error) = inner.renew().await {
                        tracing::warn!(%error, "heartbeat failed");
                    }
                },
            ),
            every(
                config.registry_fetch_interval,
                inner.clone(),
                |inner| async move {
                    if let Err(error) = inner.refresh().await {
                        tracing::warn!(%error, "registry refresh failed");
                    }
                },
            ),
        ];
        Ok(EurekaClient {
            inner,
            tasks,
            cancelled: false,
        })
    }

    /// The `UP` instances of `app` in the local copy, shuffled at each fetch as the Java client
    /// does.
    pub fn instances(&self, app: &str) -> Vec<Instance> {
        self.inner
            .registry
            .lock()
            .expect("registry lock")
            .instances(app)
    }

    /// How many full fetches and consistent deltas have refreshed the local copy.
    pub fn fetch_counts(&self) -> FetchCounts {
        FetchCounts {
            full: self.inner.full_fetches.load(Ordering::Relaxed),
            deltas: self.inner.deltas_applied.load(Ordering::Relaxed),
        }
    }

    /// Stops the background tasks and cancels the registration (`DELETE apps/APP/id`).
    pub async fn shutdown(mut self) -> Result<(), ClientError> {
        self.stop_tasks();
        self.cancelled = true;
        self.inner.cancel().await
    }

    fn stop_tasks(&mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
    }
}

impl Drop for EurekaClient {
    fn drop(&mut self) {
        self.stop_tasks();
        if self.cancelled {
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

/// Runs `job` every `period`, first after one period (the start-up did the first round).
fn every<F, Fut>(period: Duration, inner: Arc<Inner>, job: F) -> JoinHandle<()>
where
    F: Fn(Arc<Inner>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    tokio::spawn(async move {
        let mut ticks = interval_at(tokio::time::Instant::now() + period, period);
        // A slow round delays the next rather than causing a burst, like Java's fixed delay.
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            job(inner.clone()).await;
        }
    })
}

impl Inner {
    /// `POST apps/APP` with the instance; the server answers 204.
    async fn register(&self) -> Result<(), ClientError> {
        let body = encode_instance(&self.instance.lock().expect("instance lock"), Format::Json);
        let response = self
            .transport
            .send(&self.app_path, |http, url| {
                http.post(url)
                    .header(CONTENT_TYPE, JSON)
                    .header(ACCEPT, JSON)
                    .body(body.clone())
            })
            .await?;
        expect(response.status(), StatusCode::NO_CONTENT, "register")
    }

    /// `PUT apps/APP/id`; a 404 means the server does not know the instance (it restarted, or
    /// evicted the lease), so it is registered again with a fresh `lastDirtyTimestamp`.
    async fn renew(&self) -> Result<(), ClientError> {
        let (status, dirty) = {
            let instance = self.instance.lock().expect("instance lock");
            (instance.status, instance.last_dirty_timestamp)
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
            self.instance
                .lock()
                .expect("instance lock")
                .last_dirty_timestamp = now_millis();
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
    /// fetch.
    async fn refresh(&self) -> Result<(), ClientError> {
        let filled = self.registry.lock().expect("registry lock").filled;
        if filled && self.apply_delta().await? {
            return Ok(());
        }
        self.full_fetch().await
    }

    /// Applies `GET apps/delta`; false when a full fetch is needed instead: the server refused
    /// the delta (403 when deltas are disabled) or the patched copy's hash disagrees.
    async fn apply_delta(&self) -> Result<bool, ClientError> {
        let response = self.get("apps/delta").await?;
        if response.status() != StatusCode::OK {
            tracing::debug!(status = %response.status(), "delta refused; full fetch");
            return Ok(false);
        }
        let delta = decode_applications(&response.bytes().await?, Format::Json)?;
        let consistent = self
            .registry
            .lock()
            .expect("registry lock")
            .apply_delta(delta);
        if consistent {
            self.deltas_applied.fetch_add(1, Ordering::Relaxed);
        } else {
            tracing::debug!("apps__hashcode differs after the delta; full fetch");
        }
        Ok(consistent)
    }

    async fn full_fetch(&self) -> Result<(), ClientError> {
        let response = self.get("apps").await?;
        expect(response.status(), StatusCode::OK, "full fetch")?;
        let full = decode_applications(&response.bytes().await?, Format::Json)?;
        self.registry.lock().expect("registry lock").replace(full);
        self.full_fetches.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    async fn get(&self, path: &str) -> Result<reqwest::Response, ClientError> {
        self.transport
            .send(path, |http, url| http.get(url).header(ACCEPT, JSON))
            .await
    }
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
