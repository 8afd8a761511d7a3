//! `ClientError`: why a client operation failed (a transport error, an answer the server gave,
//! a body that did not decode), one type for the whole client.

use heureka_wire::DecodeError;

/// Why a client operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("no service URL configured")]
    NoServiceUrls,
    /// `eureka.client.tls.*` cannot be used (a missing file, a wrong password…): the key to
    /// fix and why, found when the client starts.
    #[error("{0}")]
    Tls(#[from] heureka_tls::TlsError),
    /// The last URL tried and why it failed, in one line: a certificate failure as
    /// `heureka_tls::explain` words it ("the server's certificate was issued by an unknown
    /// authority (not in the trust store)").
    #[error("every service URL failed; last error: {0}")]
    AllServersFailed(String),
    #[error("{what} answered {status}")]
    UnexpectedStatus { what: &'static str, status: u16 },
    #[error("reading the response: {0}")]
    Body(#[from] reqwest::Error),
    #[error("decoding the registry: {0}")]
    Decode(#[from] DecodeError),
}
