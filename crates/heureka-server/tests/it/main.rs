//! End-to-end tests of the `heureka` server over real sockets on 127.0.0.1.
//!
//! Each test starts its own server on a free port, so tests are independent and run in
//! parallel. The registry rules themselves are specified in `heureka-core`'s unit tests; these
//! tests specify the HTTP contract: routes, status codes, formats, errors. What only the real
//! binary shows (a process's memory and exit, the subcommands) is tested in `crates/heureka`.

mod api;
mod audit;
mod auth;
mod bad_input;
mod cluster;
mod consumers;
mod cross_site;
mod dashboard;
mod dns;
mod events;
mod fast_lane;
mod health;
mod health_checks;
mod limits;
mod metrics;
mod namespaced_cluster;
mod namespaces;
mod peers_only;
mod prometheus_sd;
mod push;
mod regions;
mod replication_receiver;
mod roles;
mod streams;
mod support;
mod takeover;
mod timers;
mod xds;
