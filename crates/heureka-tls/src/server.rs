//! The server's rustls configuration.

use std::sync::Arc;
use std::time::SystemTime;

use rustls::crypto::CryptoProvider;
use rustls::server::WebPkiClientVerifier;
use rustls::sign::SingleCertAndKey;
use rustls::{RootCertStore, SupportedProtocolVersion};

use crate::error::TlsError;
use crate::identity::{Identity, IdentitySource};
use crate::provider::provider;
use crate::trust::{load_trust, TrustSource};
use crate::verifier::ExplainingVerifier;

const PROTOCOLS_KEY: &str = "server.ssl.enabled-protocols";
const CIPHERS_KEY: &str = "server.ssl.ciphers";
const CLIENT_AUTH_KEY: &str = "server.ssl.client-auth";

/// Spring's `server.ssl.client-auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuth {
    /// No client certificate is asked for.
    #[default]
    None,
    /// Asked for, verified if presented, but a client without one is let in.
    Want,
    /// Required: a client without a trusted certificate fails the handshake.
    Need,
}

impl ClientAuth {
    /// `none`, `want` or `need`, case-insensitively, as Spring binds the enum.
    pub fn parse(value: &str) -> Option<ClientAuth> {
        match value.trim().to_ascii_lowercase().as_str() {
            "none" => Some(ClientAuth::None),
            "want" => Some(ClientAuth::Want),
            "need" => Some(ClientAuth::Need),
            _ => None,
        }
    }
}

/// What the server's TLS needs, as `server.ssl.*` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerTlsSpec {
    pub identity: IdentitySource,
    pub client_auth: ClientAuth,
    /// Whom client certificates are verified against; needed for `Want` and `Need`.
    pub trust: Option<TrustSource>,
    /// `TLSv1.2`, `TLSv1.3`; empty means both.
    pub protocols: Vec<String>,
    /// IANA names; empty means rustls's defaults.
    pub ciphers: Vec<String>,
}

/// The server's configuration (ALPN `http/1.1` only, since Heureka serves HTTP/1.1). The
/// identity is loaded and checked at `now`. A new certificate is served by building a new
/// configuration for new connections (the server's `tls.rs`), so open ones keep theirs.
pub fn server_config(
    spec: &ServerTlsSpec,
    now: SystemTime,
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let versions = protocol_versions(&spec.protocols)?;
    let provider = Arc::new(CryptoProvider {
        cipher_suites: cipher_suites(&spec.ciphers)?,
        ..(*provider()).clone()
    });
    let identity = Identity::load(&spec.identity, now)?;
    let certificate = SingleCertAndKey::from(identity.certified_key()?);
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|error| {
            // rustls refuses a protocol list no chosen cipher suite can serve.
            TlsError::new(
                CIPHERS_KEY,
                format!("no cipher suite for the enabled protocols ({error})"),
            )
        })?;
    let builder = match spec.client_auth {
        ClientAuth::None => builder.with_no_client_auth(),
        ClientAuth::Want | ClientAuth::Need => {
            // Java would fall back to its cacerts; verifying client certificates against
            // the public web's authorities is never what a registry means, so say so.
            let Some(trust) = &spec.trust else {
                return Err(TlsError::new(
                    CLIENT_AUTH_KEY,
                    "client certificates are asked for but nothing says whom to trust: set \
                     server.ssl.trust-store or server.ssl.trust-certificate",
                ));
            };
            let mut roots = RootCertStore::empty();
            for cert in load_trust(trust)? {
                roots.add(cert).map_err(|error| {
                    TlsError::new(
                        CLIENT_AUTH_KEY,
                        format!("a trusted certificate rustls cannot use ({error})"),
                    )
                })?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if spec.client_auth == ClientAuth::Want {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            let verifier = verifier
                .build()
                .map_err(|error| TlsError::new(CLIENT_AUTH_KEY, error.to_string()))?;
            builder.with_client_cert_verifier(Arc::new(ExplainingVerifier(verifier)))
        }
    };
    let mut config = builder.with_cert_resolver(Arc::new(certificate));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Spring's protocol names to rustls's versions; rustls offers nothing older than TLS 1.2.
fn protocol_versions(
    protocols: &[String],
) -> Result<Vec<&'static SupportedProtocolVersion>, TlsError> {
    if protocols.is_empty() {
        return Ok(vec![&rustls::version::TLS13, &rustls::version::TLS12]);
    }
    let mut versions = Vec::new();
    for protocol in protocols {
        let version = match protocol.trim() {
            "TLSv1.3" => &rustls::version::TLS13,
            "TLSv1.2" => &rustls::version::TLS12,
            other => {
                return Err(TlsError::new(
                    PROTOCOLS_KEY,
                    format!("{other} is not offered: only TLSv1.2 and TLSv1.3 are"),
                ))
            }
        };
        if !versions.contains(&version) {
            versions.push(version);
        }
    }
    Ok(versions)
}

/// The IANA name of a rustls suite: rustls spells TLS 1.3's `TLS13_…` where IANA has `TLS_…`.
fn iana_name(suite: &rustls::SupportedCipherSuite) -> String {
    let name = format!("{:?}", suite.suite());
    match name.strip_prefix("TLS13_") {
        Some(rest) => format!("TLS_{rest}"),
        None => name,
    }
}

/// Spring's cipher list to rustls's suites. rustls implements only AEAD suites with forward
/// secrecy, so a name it lacks (CBC, RSA key exchange, RC4…) is unsafe or unknown either way.
fn cipher_suites(ciphers: &[String]) -> Result<Vec<rustls::SupportedCipherSuite>, TlsError> {
    let offered = provider().cipher_suites.clone();
    if ciphers.is_empty() {
        return Ok(offered);
    }
    let mut chosen = Vec::new();
    for cipher in ciphers {
        let Some(suite) = offered
            .iter()
            .find(|suite| iana_name(suite) == cipher.trim())
        else {
            let accepted: Vec<String> = offered.iter().map(iana_name).collect();
            return Err(TlsError::new(
                CIPHERS_KEY,
                format!(
                    "{} is unknown or not safe; accepted: {}",
                    cipher.trim(),
                    accepted.join(", ")
                ),
            ));
        };
        if !chosen.contains(suite) {
            chosen.push(*suite);
        }
    }
    Ok(chosen)
}
