//! HTTP plumbing shared by the handlers: content negotiation, errors, authentication.

pub(crate) mod auth;
pub(crate) mod error;
pub(crate) mod negotiate;
