//! End-to-end tests of the `heureka` server over real sockets on 127.0.0.1.
//!
//! Each test starts its own server on a free port, so tests are independent and run in
//! parallel. The registry rules themselves are specified in `heureka-core`'s unit tests; these
//! tests specify the HTTP contract: routes, status codes, formats, errors. `hostile` and
//! `shutdown` run the real binary (`process`), for what only a process shows; `cli` runs its
//! subcommands against a server as a script would.

mod api;
mod auth;
mod bad_input;
mod cli;
mod cluster;
mod dashboard;
mod events;
mod health;
mod hostile;
mod metrics;
mod process;
mod replication_receiver;
mod shutdown;
mod support;
mod timers;
