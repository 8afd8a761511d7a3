//! Eureka's rate limiter (`rate_limiter.rs`) asked for a registry fetch: the client's
//! `DiscoveryIdentity-Name` read from the request, the fetch counted when over the rate, and
//! refused with 503 when the limiter is enabled.

use axum::http::HeaderMap;

use crate::consumers::IDENTITY;
use crate::http::error::ApiError;
use crate::rate_limiter::Decision;
pub(crate) use crate::rate_limiter::Fetch;
use crate::state::SharedState;

/// Called by the three fetch handlers (`handlers/apps.rs`), after authentication: a fetch
/// over the rate is counted, and refused with 503 when the limiter is enabled. A check in the
/// handlers rather than a layer, so that heartbeats and every other request pay nothing for it.
pub(crate) fn admit(
    state: &SharedState,
    headers: &HeaderMap,
    fetch: Fetch,
) -> Result<(), ApiError> {
    let client = headers.get(&IDENTITY).and_then(|value| value.to_str().ok());
    match state
        .node
        .rate_limiter
        .decide(fetch, client, state.store.now())
    {
        Decision::Pass => Ok(()),
        Decision::Counted(fetch) => {
            state.observe.metrics.rate_limited(fetch.as_str());
            Ok(())
        }
        Decision::Refused(fetch) => {
            state.observe.metrics.rate_limited(fetch.as_str());
            Err(ApiError::Throttled(format!(
                "{} fetch over the eureka.server.rate-limiter-* rate; retry later",
                fetch.as_str()
            )))
        }
    }
}
