//! A Eureka client for Rust services, behaving like the Java `DiscoveryClient`
//! (`../shared/spec/eureka-protocol.md` §8): it registers its instance, renews the lease on a
//! timer (re-registering when the server answers 404), keeps a local copy of the registry by a
//! full fetch followed by deltas checked against `apps__hashcode` (and, from a server that
//! pushes, by the snapshots and deltas it pushes as changes happen), and cancels on shutdown.
//!
//! Like Java's `InstanceInfoReplicator`, it sends changes to its own instance as
//! re-registrations: a status the application sets ([`EurekaClient::set_status`]), a
//! [`HealthCheck`]'s answer, new metadata. On-demand updates are rate-limited; a periodic round
//! catches what the limit held back. What it does and sees is published as [`ClientEvent`]s.
//!
//! With `eureka.client.fetch-remote-regions-registry` the fetches also bring other regions'
//! instances (`?regions=`); [`InstanceRegionChecker`] places each instance in a region by its
//! zone, and lookups offer a remote region's instances only while the local region has no `UP`
//! one.
//!
//! Every request fails over across the configured service URLs, preferred (own zone) first,
//! coming back to the preferred one when a session ends; a heartbeat or refresh that times out
//! is backed off exponentially, as Java's `TimedSupervisorTask` does.
//!
//! [`sidecar`] registers an application that is not a Eureka client itself and reports its
//! health from an HTTP health URL.
//!
//! Other services are called by name: a [`Selector`] picks one of an application's instances
//! (filters, zone preference, round robin, random or weighted), and [`DiscoveryHttpClient`] sends
//! `http://orders/api` to the instance it picks, retrying another after a connection failure.
//!
//! It works against any Eureka server, Java or Heureka; it speaks JSON only, which both serve.
//!
//! ```no_run
//! # async fn example() -> Result<(), heureka_client::ClientError> {
//! use heureka_client::{ClientConfig, EurekaClient, InstanceStatus};
//!
//! let config = ClientConfig::new(
//!     vec!["http://eureka:8761/eureka/".into()],
//!     "billing", "billing-1", "10.0.0.5", "10.0.0.5", 8080,
//! );
//! let client = EurekaClient::builder(config)
//!     .health_check(|| async { InstanceStatus::Up })
//!     .start()
//!     .await?;
//! let orders = client.instances("ORDERS");
//! client.set_status(InstanceStatus::Down);
//! client.shutdown().await
//! # }
//! ```

mod address;
mod cache;
mod client;
mod config;
mod error;
mod events;
mod health;
mod http;
mod instance;
mod push;
mod regions;
mod registry_copy;
mod replicator;
mod schedule;
mod select;
pub mod sidecar;
mod spring;
pub mod sse;
mod streak;
pub mod tls;
mod transport;

pub use address::{choose_address, find_host_info, HostInfo, InetSettings, InterfaceAddress};
pub use client::{ClientBuilder, EurekaClient};
pub use config::{ClientConfig, InstanceUrls, ZoneUrls, DEFAULT_ZONE};
pub use error::ClientError;
pub use events::{ClientEvent, FetchKind, EVENT_BUFFER};
pub use health::{BoxFuture, HealthCheck};
pub use heureka_config::ConfigError;
/// The instance types selection works on, so that users need not depend on `heureka-core`.
pub use heureka_core::{Instance, InstanceStatus, Port};
pub use http::{Address, DiscoveryError, DiscoveryHttpClient, DiscoveryRequest, ServedBy};
pub use regions::{instance_zone, InstanceRegionChecker, AVAILABILITY_ZONE_KEY, ZONE_KEY};
pub use registry_copy::FetchCounts;
pub use select::{weight, zone_of, InstanceSource, Selector, Strategy, WEIGHT_KEY};
pub use tls::ClientTls;
