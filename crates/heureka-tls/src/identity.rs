//! An identity: the certificate chain a side presents and the private key proving it.

use std::sync::Arc;
use std::time::SystemTime;

use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::cert::{self, unix_seconds, utc};
use crate::error::TlsError;
use crate::pem::PemIdentitySpec;
use crate::provider::provider;
use crate::store::{KeyStoreSpec, StoreKey};

/// Where an identity comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentitySource {
    Pem(PemIdentitySpec),
    Store(KeyStoreSpec),
}

impl IdentitySource {
    /// The key naming the certificate (or the store holding it), for errors about it.
    fn certificate_key(&self) -> String {
        match self {
            IdentitySource::Pem(pem) => pem.certificate_key(),
            IdentitySource::Store(store) => store.key_name(StoreKey::Location),
        }
    }

    /// The key naming the private key (or the store holding it).
    fn private_key_key(&self) -> String {
        match self {
            IdentitySource::Pem(pem) => pem.private_key_key(),
            IdentitySource::Store(store) => store.key_name(StoreKey::Location),
        }
    }
}

/// A certificate chain, leaf first, and the leaf's private key.
#[derive(Debug)]
pub struct Identity {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

impl Identity {
    /// Loads and checks an identity as Java would refuse it at start-up, or a client would at
    /// the handshake: the leaf must be valid at `now`, and be the key's certificate. The chain
    /// is put leaf first, each certificate followed by its issuer, whatever the file's order.
    pub fn load(source: &IdentitySource, now: SystemTime) -> Result<Identity, TlsError> {
        let (certs, key) = match source {
            IdentitySource::Pem(pem) => pem.load()?,
            IdentitySource::Store(store) => store.load_key()?,
        };
        let signing_key = provider()
            .key_provider
            .load_private_key(key.clone_key())
            .map_err(|error| {
                TlsError::new(
                    source.private_key_key(),
                    format!("an unusable private key ({error})"),
                )
            })?;
        let chain = order_chain(certs, signing_key.public_key().as_deref())
            .map_err(|reason| TlsError::new(source.private_key_key(), reason))?;
        check_validity(&chain[0], now)
            .map_err(|reason| TlsError::new(source.certificate_key(), reason))?;
        Ok(Identity { chain, key })
    }

    /// The identity as rustls signs with it, the key checked against the leaf when the key
    /// type lets rustls tell.
    pub fn certified_key(&self) -> Result<Arc<rustls::sign::CertifiedKey>, TlsError> {
        rustls::sign::CertifiedKey::from_der(self.chain.clone(), self.key.clone_key(), &provider())
            .map(Arc::new)
            .map_err(|error| TlsError::new("identity", format!("an unusable identity ({error})")))
    }
}

/// The leaf (the certificate of `key_spki`, or the first when the key's public half is not
/// known), then its issuer, its issuer's issuer…; certificates outside that chain are dropped,
/// since presenting them only confuses the peer.
fn order_chain(
    certs: Vec<CertificateDer<'static>>,
    key_spki: Option<&[u8]>,
) -> Result<Vec<CertificateDer<'static>>, String> {
    let mut parsed = Vec::new();
    for (index, der) in certs.into_iter().enumerate() {
        let Some(info) = cert::parse(&der) else {
            return Err(format!(
                "certificate {} is not a valid X.509 certificate",
                index + 1
            ));
        };
        parsed.push((der, info));
    }
    let leaf = match key_spki {
        Some(spki) => parsed
            .iter()
            .position(|(_, info)| info.spki == spki)
            .ok_or_else(|| {
                let subjects: Vec<&str> = parsed
                    .iter()
                    .map(|(_, info)| info.subject.as_str())
                    .collect();
                format!(
                    "the private key does not match the certificate ({})",
                    subjects.join("; ")
                )
            })?,
        None => 0,
    };
    let (der, mut current) = parsed.swap_remove(leaf);
    let mut chain = vec![der];
    while current.issuer_raw != current.subject_raw {
        let Some(next) = parsed
            .iter()
            .position(|(_, info)| info.subject_raw == current.issuer_raw)
        else {
            break;
        };
        let (der, info) = parsed.swap_remove(next);
        chain.push(der);
        current = info;
    }
    Ok(chain)
}

/// Whether the leaf is valid at `now`; the reason names the date it is not.
fn check_validity(leaf: &CertificateDer<'_>, now: SystemTime) -> Result<(), String> {
    let Some(info) = cert::parse(leaf) else {
        return Err("the certificate is not a valid X.509 certificate".to_owned());
    };
    let now = unix_seconds(now);
    if now > info.not_after {
        return Err(format!(
            "the certificate '{}' expired on {}",
            info.subject,
            utc(info.not_after)
        ));
    }
    if now < info.not_before {
        return Err(format!(
            "the certificate '{}' is not valid until {}",
            info.subject,
            utc(info.not_before)
        ));
    }
    Ok(())
}
