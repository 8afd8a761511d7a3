//! Prometheus HTTP service discovery (`GET {base}/prometheus/sd`, `docs/prometheus-sd.md`): the
//! registry's UP instances as `http_sd_configs` target groups, labelled as Prometheus'
//! `eureka_sd_configs` labels them. `query.rs` reads a request's filters, `targets.rs` is
//! what an answer holds (pure), `answers.rs` builds answers from the store's read path, keeps
//! them per version and query, and counts them. The handler is `handlers/prometheus_sd.rs`.

mod answers;
mod query;
mod targets;

pub(crate) use answers::PrometheusSd;
pub(crate) use query::SdQuery;
