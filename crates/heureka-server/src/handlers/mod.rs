//! Request handlers: extract, call the registry under a short lock, map the outcome.
//!
//! Protocol decisions live in `heureka-core`; a handler only translates between HTTP and the
//! registry's calls and outcomes. What every handler reads from a request is `request.rs`;
//! the answers they share, `response.rs`.

pub(crate) mod actuator;
pub(crate) mod apps;
pub(crate) mod consumers;
pub(crate) mod dashboard;
pub(crate) mod events;
pub(crate) mod health_checks;
pub(crate) mod instances;
pub(crate) mod namespaces;
pub(crate) mod overrides;
pub(crate) mod prometheus_sd;
pub(crate) mod push;
pub(crate) mod regions;
pub(crate) mod replication;
pub(crate) mod request;
pub(crate) mod response;
pub(crate) mod stamped;
pub(crate) mod status;
