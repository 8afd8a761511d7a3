//! HTTP plumbing shared by the handlers: content negotiation, errors, authentication, the
//! observing layer (request metrics, access log, rejected-request log), Eureka's rate limiter
//! on registry fetches, the gate that takes replication only from peers, the refusal of
//! cross-site writes and of browser requests under a foreign `Host` (DNS rebinding), and the
//! security headers on every answer.

pub(crate) mod audit;
pub(crate) mod auth;
pub(crate) mod cross_site;
pub(crate) mod decompress;
pub(crate) mod error;
pub(crate) mod gate;
pub(crate) mod hosts;
pub(crate) mod namespace_creation;
pub(crate) mod negotiate;
pub(crate) mod observe;
pub(crate) mod origin;
pub(crate) mod peers_only;
pub(crate) mod principal;
pub(crate) mod rate_limit;
pub(crate) mod scan;
pub(crate) mod security_headers;
