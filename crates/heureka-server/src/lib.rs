//! Heureka's server: the Eureka REST API over HTTP, in front of `heureka-core`'s registry.
//!
//! Data flow: `routes` maps a request to a handler in `handlers`, which decodes the body with
//! `heureka-wire`, calls the registry (held in `state`) under a short lock, and maps the outcome
//! to a status code (`http::error`). Full and delta reads are served from `cache`. `tasks` runs
//! eviction and the other timers. `config` turns Spring-style settings into a `Config`.

pub mod config;
#[doc(hidden)]
pub mod fuzzing;
#[doc(hidden)]
pub mod testing;

mod audit;
mod cache;
mod clock;
mod connection;
mod consumers;
mod dashboard;
mod dispatch;
mod dns;
mod error_chain;
mod events;
mod fast_lane;
mod handlers;
mod health_checks;
mod http;
mod listener;
mod log_budget;
mod metrics;
mod namespace_name;
mod namespaces;
mod own_instance;
mod persistence;
mod prometheus_sd;
mod push;
mod rate_limiter;
mod regions;
mod replication;
mod routes;
mod security;
mod serve;
mod state;
mod store;
mod tasks;
pub mod tls;
mod xds;

pub use crate::replication::ConfigReload;
pub use crate::serve::{serve, serve_with_reload};
