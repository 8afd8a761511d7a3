//! The client against a real Heureka server started in-process, over real sockets on 127.0.0.1.
//!
//! Each test starts its own servers on free ports. Intervals are one second and every wait is
//! bounded, never a claim about how long something takes: for the client's event that causes
//! the effect (a registration, a refresh: the waits in `support`), then the effect is checked
//! once; a poll of the effect (`eventually`) only where no client event precedes it.

mod backend;
mod config_effects;
mod events;
mod failover;
mod http;
mod push;
mod regions;
mod registration;
mod registry;
mod selection;
mod sidecar;
mod spring_config;
mod status;
mod support;
mod tls;
