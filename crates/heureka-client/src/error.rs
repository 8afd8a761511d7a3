//! `ClientError`: why a client operation failed (a transport error, an answer the server gave,
//! a body that did not decode), one type for the whole client.

use heureka_wire::DecodeError;

/// Why a client operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("no service URL configured")]
    NoServiceUrls,
    #[error("every service URL failed; last error: {0}")]
    AllServersFailed(String),
    #[error("{what} answered {status}")]
    UnexpectedStatus { what: &'static str, status: u16 },
    #[error("reading the response: {0}")]
    Body(#[from] reqwest::Error),
    #[error("decoding the registry: {0}")]
    Decode(#[from] DecodeError),
}
