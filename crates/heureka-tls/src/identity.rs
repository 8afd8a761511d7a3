//! An identity: the certificate chain a side presents and the private key proving it.

use std::sync::Arc;
use std::time::SystemTime;

use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::{KeyStoreSpec, PemIdentitySpec, TlsError};

/// Where an identity comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentitySource {
    Pem(PemIdentitySpec),
    Store(KeyStoreSpec),
}

/// A certificate chain, leaf first, and the leaf's private key.
#[derive(Debug)]
pub struct Identity {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

impl Identity {
    /// Loads and checks an identity: the leaf must be valid at `now` and match the key.
    pub fn load(source: &IdentitySource, now: SystemTime) -> Result<Identity, TlsError> {
        unimplemented!("{source:?} {now:?}")
    }

    /// The identity as rustls signs with it.
    pub fn certified_key(&self) -> Result<Arc<rustls::sign::CertifiedKey>, TlsError> {
        unimplemented!()
    }
}
