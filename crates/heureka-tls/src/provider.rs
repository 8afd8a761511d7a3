//! The one crypto provider every configuration of this crate is built with.

/// The one crypto provider everything here uses, built explicitly rather than read from
/// rustls's process-wide default, so two crates in one binary cannot disagree about it.
pub(crate) fn provider() -> std::sync::Arc<rustls::crypto::CryptoProvider> {
    std::sync::Arc::new(rustls::crypto::ring::default_provider())
}
