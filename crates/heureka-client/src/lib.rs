//! A Eureka client for Rust services, behaving like the Java `DiscoveryClient`
//! (`../shared/spec/eureka-protocol.md` §8): it registers its instance, renews the lease on a
//! timer (re-registering when the server answers 404), keeps a local copy of the registry by a
//! full fetch followed by deltas checked against `apps__hashcode`, and cancels on shutdown.
//! Every request fails over across the configured service URLs.
//!
//! Other services are called by name: a [`Selector`] picks one of an application's instances
//! (filters, zone preference, round robin, random or weighted), and [`DiscoveryHttpClient`] sends
//! `http://orders/api` to the instance it picks, retrying another after a connection failure.
//!
//! It works against any Eureka server, Java or Heureka; it speaks JSON only, which both serve.

mod cache;
mod client;
mod config;
mod error;
mod http;
mod select;
mod transport;

pub use client::{EurekaClient, FetchCounts};
pub use config::ClientConfig;
pub use error::ClientError;
/// The instance type selection works on, so that users need not depend on `heureka-core`.
pub use heureka_core::{Instance, InstanceStatus, Port};
pub use http::{Address, DiscoveryError, DiscoveryHttpClient, DiscoveryRequest};
pub use select::{weight, zone_of, InstanceSource, Selector, Strategy, WEIGHT_KEY, ZONE_KEY};
