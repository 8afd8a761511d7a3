//! Serving: `serve` builds the state, `start`s everything that runs beside the listener
//! (background tasks, replication, webhooks, the start-up sync, the server's own registration),
//! serves until shutdown, then drains. `testing.rs` starts the same thing; `fuzzing.rs` drives
//! the same service ([`service`]) without the tasks.

use std::future::Future;
use std::io;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tower::Layer;
use tower_http::normalize_path::{NormalizePath, NormalizePathLayer};

use crate::config::Config;
use crate::dispatch::Dispatch;
use crate::fast_lane::FastLane;
use crate::namespaces::{Factory, Namespace, Namespaces};
use crate::state::{AppState, NamespaceKind};

use crate::replication::ConfigReload;
use crate::{
    audit, clock, events, health_checks, listener, own_instance, persistence, regions, replication,
    routes, state, tasks, tls, xds,
};

/// The service connections are handed: the namespaces' dispatcher with the fast lane (or the
/// router alone), behind trailing-slash normalisation. [`start`] serves it, and the fuzz
/// targets drive it without a socket.
pub(crate) fn service(
    state: &state::SharedState,
    config: &Config,
    reload: Option<ConfigReload>,
    lanes: Lanes,
) -> NormalizePath<Dispatch> {
    let namespaces = namespaces(state, config, reload);
    let lane = match lanes {
        Lanes::FastLane => FastLane::new(
            state,
            &config.heureka.base_path,
            config.heureka.max_request_body_bytes,
        ),
        Lanes::RouterOnly => None,
    };
    let dispatch = Dispatch::new(namespaces, router(state, config), lane);
    // Trim trailing slashes before routing: Eureka (Jersey) treats them as optional.
    NormalizePathLayer::trim_trailing_slash().layer(dispatch)
}

/// The router every namespace shares, over the default namespace's state.
fn router(state: &state::SharedState, config: &Config) -> axum::Router {
    routes::router(
        state.clone(),
        &config.heureka.base_path,
        config.heureka.max_request_body_bytes,
        &config.heureka.namespaces.path_prefix,
    )
}

/// Serves the API on `listener` until `shutdown` completes, running the background jobs, then
/// lets in-flight requests finish for up to the configured grace period. HTTPS when
/// `server.ssl` says so (its files are read here; the binary reads them before binding, to
/// refuse a bad one with the configuration's exit code).
pub async fn serve(
    config: Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let tls = match &config.server.ssl {
        Some(ssl) => Some(
            tls::ServerTls::load(ssl, clock::wall_time())
                .map_err(|error| io::Error::new(io::ErrorKind::InvalidInput, error))?,
        ),
        None => None,
    };
    serve_with_reload(config, listener, tls, shutdown, None).await
}

/// [`serve`] with the TLS configuration already loaded (`None`: plain HTTP), re-reading the
/// configuration with `reload` every `eureka.server.peer-eureka-nodes-update-interval-ms` to
/// follow changes to the peer list.
pub async fn serve_with_reload(
    config: Config,
    listener: TcpListener,
    tls: Option<tls::ServerTls>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    reload: Option<ConfigReload>,
) -> io::Result<()> {
    let port = listener.local_addr()?.port();
    let state = AppState::new(&config, clock::Clock::System, port)
        .map_err(|error| io::Error::other(format!("heureka.persistence.dir: {error}")))?;
    // Beside the HTTP listener, before the server says it is up: a port it cannot bind is a
    // failure to start (exit 1), not a server that silently answers no DNS.
    let dns = state
        .dns
        .start(state.store.clone(), state.observe.metrics.clone())
        .await?;
    state.log_start_up(&config, listener.local_addr()?);
    let Running {
        app,
        mut background,
        mut replicating,
        own,
    } = start(&state, &config, port, reload, Lanes::FastLane);
    let tls = tls.map(Arc::new);
    if let Some(tls) = &tls {
        background.spawn(tls::watch(Arc::clone(tls)));
    }
    let close_xds = start_xds(&state, &config, tls.clone(), &mut background).await?;
    let namespaces = app.get_ref().namespaces().clone();
    listener::serve(listener, app, &config.connections, tls, shutdown).await;
    close_xds.send_replace(true);
    if config.heureka.xds.enabled {
        let status: xds::XdsStatus = state.xds.status();
        tracing::info!(
            responses = status.responses,
            nacks = status.nacks,
            "xDS server stopped"
        );
    }
    if let Some(dns) = dns {
        dns.stop().await;
        let status: crate::dns::DnsStatus = state.dns.status();
        tracing::info!(
            address = ?status.address,
            queries = status.queries,
            answered = status.answered,
            nxdomain = status.nxdomain,
            rate_limited = status.rate_limited,
            truncated = status.truncated,
            "DNS stopped"
        );
    }
    state.observe.audit.close_all();
    if let Some(own) = &own {
        own_instance::cancel(&state.store, own);
        replication::flush(&state.replication).await;
    }
    for namespace in namespaces.all() {
        flush_to_disk(&namespace.state).await;
        namespace.abort_tasks();
    }
    background.abort_all();
    replicating.abort_all();
    Ok(())
}

/// After the last write this node makes: nothing acknowledged is lost to a shutdown.
async fn flush_to_disk(state: &state::SharedState) {
    let Some(persistence) = &state.node.persistence else {
        return;
    };
    persistence.flush(&state.store).await;
    match persistence.view() {
        view if view.pending == 0 => tracing::info!(
            namespace = %state.namespace,
            "persistence: flushed at shutdown"
        ),
        view => tracing::error!(
            namespace = %state.namespace,
            pending = view.pending,
            error = view.last_error.as_deref().unwrap_or("unknown"),
            "persistence: writes not on disk at shutdown are lost"
        ),
    }
}

/// Binds the xDS port (`heureka.xds.*`) beside the API's and serves ADS on it until the
/// returned sender says `true`; a port that cannot be bound stops the start, naming the key.
async fn start_xds(
    state: &state::SharedState,
    config: &Config,
    tls: Option<Arc<tls::ServerTls>>,
    background: &mut JoinSet<()>,
) -> io::Result<tokio::sync::watch::Sender<bool>> {
    let (close, closing) = tokio::sync::watch::channel(false);
    if !config.heureka.xds.enabled {
        return Ok(close);
    }
    let address = std::net::SocketAddr::new(config.server.address, config.heureka.xds.port);
    let listener = xds::bind(address).await?;
    let bound = listener.local_addr()?;
    state.xds.bound_to(bound);
    tracing::info!(address = %bound, tls = tls.is_some(), "serving xDS (ADS)");
    let context = xds::Context {
        store: state.store.clone(),
        xds: state.xds.clone(),
        users: state::security::users(config),
        closing,
    };
    background.spawn(xds::serve(listener, tls, context));
    Ok(close)
}

/// How heartbeats, registrations and fetches are served: by the fast lane where they may take
/// it (`fast_lane.rs`), or all by the router (the reference the lane is tested against).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lanes {
    FastLane,
    RouterOnly,
}

/// A server without its listener: the service connections are handed and the tasks that run
/// beside it. Dropping it aborts the tasks.
pub(crate) struct Running {
    pub(crate) app: NormalizePath<Dispatch>,
    pub(crate) background: JoinSet<()>,
    pub(crate) replicating: JoinSet<()>,
    /// This server's own instance, when it registers with itself (`register-with-eureka`).
    pub(crate) own: Option<heureka_core::Instance>,
}

/// Builds the router over `state` and starts everything that runs beside it: the timers
/// (eviction, renews bucket, threshold update, delta purge, renewals flush), replication,
/// webhooks, the start-up sync when reads wait for it, and this server's own registration.
/// [`serve`] and [`crate::testing`] both start a server here, so what the tests run is what
/// production runs, down to the tasks.
pub(crate) fn start(
    state: &state::SharedState,
    config: &Config,
    port: u16,
    reload: Option<ConfigReload>,
    lanes: Lanes,
) -> Running {
    let app = service(state, config, reload.clone(), lanes);
    let mut background = tasks::spawn_all(&state.store, &state.events.feed, config);
    let replicating = replication::spawn_all(&state.replicator(), reload);
    events::webhooks::spawn_all(
        &state.events.feed,
        &config.heureka.webhooks,
        &mut background,
    );
    background.spawn(audit::close_summaries_every_second(
        state.observe.audit.clone(),
    ));
    if !state.regions.is_empty() {
        regions::spawn_all(&state.region_fetchers(config), &mut background);
    }
    namespace_jobs(state, config, &mut background);
    let own = config
        .client
        .register_with_eureka
        .then(|| own_instance::own_instance(config, port, state.store.now()));
    if let Some(own) = own.clone() {
        background.spawn(own_instance::register_and_renew(state.store.clone(), own));
    }
    Running {
        app,
        background,
        replicating,
        own,
    }
}

/// The jobs every namespace runs beside the timers and replication: its health checks, its
/// store's flushes, and its start-up sync when reads wait for it.
fn namespace_jobs(state: &state::SharedState, config: &Config, jobs: &mut JoinSet<()>) {
    health_checks::spawn_all(state.checker(config), jobs);
    if let Some(persistence) = &state.node.persistence {
        jobs.spawn(persistence::flush_every_interval(
            persistence.clone(),
            state.store.clone(),
        ));
    }
    if !state.is_ready() {
        let syncing = state.replicator();
        jobs.spawn(async move {
            replication::sync_from_peers(&syncing).await;
        });
    }
}

/// The namespaces of this node: `default` (`state`, whose jobs [`start`] runs), the vacant
/// stand-in, and the declared ones and those kept on disk, created now.
fn namespaces(
    state: &state::SharedState,
    config: &Config,
    reload: Option<ConfigReload>,
) -> std::sync::Arc<Namespaces> {
    let settings = &config.heureka.namespaces;
    let default = Namespace::new(state.clone(), Vec::new());
    let vacant_state = state
        .in_namespace(config, "(vacant)", NamespaceKind::Vacant)
        .expect("a namespace kept nowhere opens");
    let vacant = Namespace::new(vacant_state, Vec::new());
    let factory = factory(state.clone(), config.clone(), reload);
    let namespaces =
        std::sync::Arc::new(Namespaces::new(default, vacant, settings.clone(), factory));
    for name in settings.declared.iter().chain(&kept_on_disk(config)) {
        if let Err(refused) = namespaces.open(name) {
            tracing::error!(%refused, "namespace not opened at start-up");
        }
    }
    // The default namespace's start-up sync and anti-entropy create the namespaces peers hold.
    let directory: std::sync::Weak<dyn replication::NamespaceDirectory> =
        std::sync::Arc::downgrade(&namespaces) as _;
    state.replication.discover_into(directory);
    namespaces
}

/// Builds a namespace and starts its jobs: the timers, replication, and [`namespace_jobs`].
fn factory(default: state::SharedState, config: Config, reload: Option<ConfigReload>) -> Factory {
    Box::new(move |name| {
        let state = default
            .in_namespace(&config, name, NamespaceKind::Created)
            .map_err(|error| format!("heureka.persistence.dir: {error}"))?;
        let mut jobs = tasks::spawn_all(&state.store, &state.events.feed, &config);
        namespace_jobs(&state, &config, &mut jobs);
        let replicating = replication::spawn_all(&state.replicator(), reload.clone());
        Ok(Namespace::new(state, vec![jobs, replicating]))
    })
}

/// The namespaces whose registries `heureka.persistence.dir` holds.
fn kept_on_disk(config: &Config) -> Vec<String> {
    let Some(dir) = &config.heureka.persistence.dir else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(state::namespace_dir(dir, "")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_dir())
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| crate::namespace_name::parse(name).as_deref() == Ok(name.as_str()))
        .collect();
    names.sort();
    names
}
