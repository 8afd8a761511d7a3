//! The request's [`Principal`], as the authentication layer (`auth.rs`) put it in the
//! request's extensions.

use axum::http::Extensions;

use crate::security::principal::Principal;

/// The request's principal; `Anonymous` when no authentication ran (it is off).
pub(crate) fn of(extensions: &Extensions) -> Principal {
    extensions
        .get::<Principal>()
        .cloned()
        .unwrap_or(Principal::Anonymous)
}
