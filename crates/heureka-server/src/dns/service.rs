//! The DNS server as the rest of Heureka sees it: built with the state (so `status()` is
//! there for the dashboard whether or not it runs), bound by `serve.rs` beside the HTTP
//! listener before the server reports ready, stopped with it.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use hickory_proto::rr::Name;
use hickory_server::Server;
use parking_lot::Mutex;
use tokio::net::{TcpListener, UdpSocket};

use super::answer::Zone;
use super::cache::EndpointCache;
use super::counters::{Counters, DnsStatus};
use super::handler::{Handler, RATE_LIMITED_LOGGED_PER_MINUTE};
use super::limiter::SourceLimiter;
use crate::config::{Config, DnsConfig};
use crate::log_budget::LogBudget;
use crate::metrics::Metrics;
use crate::store::Store;

/// A TCP connection that sends no query for this long is closed.
const TCP_IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// Answers queued per TCP connection.
const TCP_RESPONSE_BUFFER: usize = 32;
/// Attempts at one free port for both UDP and TCP when `heureka.dns.port` is 0.
const FREE_PORT_ATTEMPTS: usize = 8;

#[derive(Debug)]
pub(crate) struct Dns {
    settings: DnsConfig,
    address: IpAddr,
    counters: Arc<Counters>,
    bound: OnceLock<SocketAddr>,
}

/// A running DNS server; [`Running::stop`] closes its sockets.
pub(crate) struct Running {
    server: Server<Handler>,
}

impl Dns {
    pub(crate) fn new(config: &Config) -> Dns {
        let settings = config.heureka.dns.clone();
        Dns {
            address: settings.address.unwrap_or(config.server.address),
            settings,
            counters: Arc::default(),
            bound: OnceLock::new(),
        }
    }

    /// Whether it runs, where, and what it answered: cheap, a few atomic loads.
    pub(crate) fn status(&self) -> DnsStatus {
        self.counters
            .status(self.settings.enabled, self.bound.get().copied())
    }

    /// Binds UDP and TCP and starts answering; `None` when `heureka.dns.enabled` is false. A
    /// failure to bind is an error naming `heureka.dns.port`.
    pub(crate) async fn start(
        &self,
        store: Arc<Store>,
        metrics: Arc<Metrics>,
    ) -> io::Result<Option<Running>> {
        if !self.settings.enabled {
            return Ok(None);
        }
        let (udp, tcp) = bind(SocketAddr::new(self.address, self.settings.port)).await?;
        let bound = udp.local_addr()?;
        let _ = self.bound.set(bound);
        let domain = Name::from_ascii(&self.settings.domain).map_err(|error| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("heureka.dns.domain: {error}"),
            )
        })?;
        let handler = Handler {
            store,
            metrics,
            counters: self.counters.clone(),
            zone: Zone {
                domain,
                ttl: u32::try_from(self.settings.ttl.as_secs()).unwrap_or(u32::MAX),
                max_answers: self.settings.max_answers,
            },
            limiter: Mutex::new(SourceLimiter::new(self.settings.rate_limit)),
            cache: Mutex::new(EndpointCache::default()),
            turn: AtomicUsize::new(0),
            rate_limited_log: Mutex::new(LogBudget::new(RATE_LIMITED_LOGGED_PER_MINUTE)),
        };
        let mut server = Server::new(handler);
        server.register_socket(udp);
        server.register_listener(tcp, TCP_IDLE_TIMEOUT, TCP_RESPONSE_BUFFER);
        tracing::info!(
            address = %bound,
            domain = %self.settings.domain,
            ttl_seconds = self.settings.ttl.as_secs(),
            "DNS listening (UDP and TCP)"
        );
        Ok(Some(Running { server }))
    }
}

impl Running {
    pub(crate) async fn stop(mut self) {
        if let Err(error) = self.server.shutdown_gracefully().await {
            tracing::debug!(%error, "DNS server stopped");
        }
    }
}

/// UDP and TCP on one port: `address`'s, or with port 0 one free for both.
async fn bind(address: SocketAddr) -> io::Result<(UdpSocket, TcpListener)> {
    let attempts = if address.port() == 0 {
        FREE_PORT_ATTEMPTS
    } else {
        1
    };
    let mut last = None;
    for _ in 0..attempts {
        let udp = UdpSocket::bind(address)
            .await
            .map_err(|error| refused(address, "UDP", &error))?;
        let at = udp.local_addr()?;
        match TcpListener::bind(at).await {
            Ok(tcp) => return Ok((udp, tcp)),
            Err(error) => last = Some(refused(at, "TCP", &error)),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("heureka.dns.port: no port bound")))
}

fn refused(address: SocketAddr, protocol: &str, error: &io::Error) -> io::Error {
    io::Error::new(
        error.kind(),
        format!("heureka.dns.port: cannot listen on {address} ({protocol}): {error}"),
    )
}
