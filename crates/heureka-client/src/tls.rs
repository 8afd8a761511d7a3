//! How the client reaches `https://` service URLs: Spring Cloud's `eureka.client.tls.*` (the
//! trust store the servers' certificates are checked against, and the key store presented to a
//! server that asks for a client certificate), loaded by `heureka-tls` into the rustls
//! configuration every HTTP client of this crate is built with.
//!
//! The stores are read when the client starts, so a wrong password or a missing file fails
//! [`crate::EurekaClient::start`] naming the key, not the first request. A failed request whose
//! cause is a certificate is told in one line ([`failure`]), as `heureka_tls::explain` words it.

use heureka_tls::rustls;
pub use heureka_tls::{KeyStoreSpec, StoreKey, StoreKind, StoreNaming, TlsError, TrustSource};

/// The key prefix the errors of stores configured by Spring keys are named after.
pub const PREFIX: &str = "eureka.client.tls";

/// `eureka.client.tls.*` when `eureka.client.tls.enabled`: whom to trust and what to present.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientTls {
    /// `eureka.client.tls.trust-store` and companions; `None` trusts the public roots (the
    /// Mozilla list `heureka-tls` carries, as Java trusts its own `cacerts`).
    pub trust: Option<TrustSource>,
    /// `eureka.client.tls.key-store`, `key-store-password`, `key-alias`, `key-password`; the
    /// certificate presented when a server asks for one. `None` presents none.
    pub identity: Option<KeyStoreSpec>,
}

impl ClientTls {
    /// The rustls configuration for `tls`; without one, the public roots and no certificate.
    pub fn rustls_config(tls: Option<&ClientTls>) -> Result<rustls::ClientConfig, TlsError> {
        let Some(tls) = tls else {
            return heureka_tls::client_config(None, None);
        };
        let trust = tls
            .trust
            .as_ref()
            .map(heureka_tls::load_trust)
            .transpose()?;
        let identity = tls
            .identity
            .as_ref()
            .map(|store| {
                heureka_tls::Identity::load(
                    &heureka_tls::IdentitySource::Store(store.clone()),
                    std::time::SystemTime::now(),
                )
            })
            .transpose()?;
        heureka_tls::client_config(trust, identity)
    }

    /// A reqwest client builder verifying `https://` with `tls` (the public roots when `None`),
    /// e.g. for [`crate::DiscoveryHttpClient`] calling instances over HTTPS: reqwest has no
    /// roots of its own in this build, so a plain `reqwest::Client::new()` reaches only
    /// `http://`. The stores are read now.
    pub fn reqwest_builder(tls: Option<&ClientTls>) -> Result<reqwest::ClientBuilder, TlsError> {
        Ok(reqwest::Client::builder().use_preconfigured_tls(ClientTls::rustls_config(tls)?))
    }
}

/// A reqwest client configured by `tls`, the way every client of this crate is built:
/// `configure` sets what else the caller needs (timeouts).
pub(crate) fn http_client(
    tls: Option<&ClientTls>,
    configure: impl FnOnce(reqwest::ClientBuilder) -> reqwest::ClientBuilder,
) -> Result<reqwest::Client, crate::error::ClientError> {
    configure(ClientTls::reqwest_builder(tls)?)
        .build()
        .map_err(crate::error::ClientError::Body)
}

/// One line for a failed request: the TLS failure in its causes explained, else the error's
/// innermost cause (reqwest's own message is only "error sending request").
pub(crate) fn failure(error: &reqwest::Error) -> String {
    if let Some(explained) = heureka_tls::explain(error) {
        return explained;
    }
    if error.is_timeout() {
        return "timed out".to_owned();
    }
    let mut cause: &dyn std::error::Error = error;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    cause.to_string()
}
