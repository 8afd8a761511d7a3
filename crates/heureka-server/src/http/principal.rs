//! The request's [`Principal`], as the authentication layer (`auth.rs`) put it in the
//! request's extensions; handlers take it as an extractor.

use std::convert::Infallible;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::Extensions;

use crate::security::principal::Principal;

/// The request's principal; `Anonymous` when no authentication ran (it is off).
pub(crate) fn of(extensions: &Extensions) -> Principal {
    extensions
        .get::<Principal>()
        .cloned()
        .unwrap_or(Principal::Anonymous)
}

/// The principal alone, rather than axum's `Extensions` extractor, which copies every
/// extension of the request (an allocation each) on every registry fetch.
impl<S: Send + Sync> FromRequestParts<S> for Principal {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Principal, Infallible> {
        Ok(of(&parts.extensions))
    }
}
