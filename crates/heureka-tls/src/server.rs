//! The server's rustls configuration, and its certificate replaceable while serving.

use std::sync::Arc;
use std::time::SystemTime;

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use crate::{IdentitySource, TlsError, TrustSource};

/// Spring's `server.ssl.client-auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuth {
    #[default]
    None,
    Want,
    Need,
}

impl ClientAuth {
    /// `none`, `want` or `need`, case-insensitively.
    pub fn parse(value: &str) -> Option<ClientAuth> {
        unimplemented!("{value}")
    }
}

/// What the server's TLS needs, as `server.ssl.*` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerTlsSpec {
    pub identity: IdentitySource,
    pub client_auth: ClientAuth,
    pub trust: Option<TrustSource>,
    /// `TLSv1.2`, `TLSv1.3`; empty means both.
    pub protocols: Vec<String>,
    /// IANA names; empty means rustls's defaults.
    pub ciphers: Vec<String>,
}

/// A server certificate that can be replaced while serving: new handshakes get the new one,
/// open connections keep theirs.
#[derive(Debug)]
pub struct CertSwap {
    current: std::sync::RwLock<Arc<CertifiedKey>>,
}

impl CertSwap {
    pub fn new(key: Arc<CertifiedKey>) -> Arc<Self> {
        Arc::new(CertSwap {
            current: std::sync::RwLock::new(key),
        })
    }

    pub fn replace(&self, key: Arc<CertifiedKey>) {
        unimplemented!("{key:?}")
    }
}

impl ResolvesServerCert for CertSwap {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        unimplemented!()
    }
}

/// The server's configuration (ALPN `http/1.1` only) and the handle replacing its certificate.
pub fn server_config(
    spec: &ServerTlsSpec,
    now: SystemTime,
) -> Result<(Arc<rustls::ServerConfig>, Arc<CertSwap>), TlsError> {
    unimplemented!("{spec:?} {now:?}")
}
