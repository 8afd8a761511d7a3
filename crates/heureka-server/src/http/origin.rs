//! Eureka's origin of a request's write, read from its headers: the rule is
//! `security/origins.rs`'s [`write_origin`].

use axum::http::{HeaderMap, HeaderValue};
use heureka_core::Origin;

use crate::security::origins::{write_origin, REPLICATION_HEADER};

/// A peer's replica when the request carries `x-netflix-discovery-replication: true`, else a
/// client's write. On every write's path: a header look-up, no allocation.
#[inline]
pub(crate) fn origin(headers: &HeaderMap) -> Origin {
    write_origin(headers.get(&REPLICATION_HEADER).map(HeaderValue::as_bytes))
}
