//! A reader for Java's JKS key store format, written here rather than taken from a crate.
//!
//! The `jks` crate (0.3) was evaluated: it reads key entries protected by Sun's KeyProtector
//! and trusted-certificate entries, and checks both the store's integrity digest and the key's
//! check digest, but
//! * it turns a password into UTF-16 by widening each *byte*, so any non-ASCII password
//!   (which Java encodes per `char`) is refused as wrong;
//! * its key-protector parsing indexes and slices without bounds checks, so a truncated or
//!   damaged file panics instead of failing;
//! * it brings a second copy of `p12-keystore` (0.3 beside our 0.4), `asn1-rs` 0.5, `sha1`
//!   0.10, `rand` 0.8 and `getrandom` 0.2 for a format this crate only reads.
//!
//! The format is small: the magic `FEEDFEED`, a version (1 or 2), an entry count, the entries,
//! then a SHA-1 digest of the password (UTF-16BE), the words "Mighty Aphrodite" and every byte
//! before the digest. A key entry's key is an `EncryptedPrivateKeyInfo` under Sun's algorithm
//! 1.3.6.1.4.1.42.2.17.1.1: a 20-byte salt, the key XORed with a SHA-1 keystream (each block
//! the digest of the password and the block before, the first block's "before" being the
//! salt), and a SHA-1 of the password and the plain key to check it. SHA-1 is *ring*'s,
//! already linked for TLS.

use std::fmt;

use ring::digest::{Context, SHA1_FOR_LEGACY_USE_ONLY};

pub(crate) const MAGIC: [u8; 4] = [0xFE, 0xED, 0xFE, 0xED];
/// JCEKS, Sun's other store format, which this reader does not handle.
const JCEKS_MAGIC: [u8; 4] = [0xCE, 0xCE, 0xCE, 0xCE];
const DIGEST_LEN: usize = 20;
const KEY_ENTRY: u32 = 1;
const TRUSTED_ENTRY: u32 = 2;
/// DER of the OID 1.3.6.1.4.1.42.2.17.1.1, Sun's KeyProtector.
const KEY_PROTECTOR_OID: [u8; 10] = [0x2B, 0x06, 0x01, 0x04, 0x01, 0x2A, 0x02, 0x11, 0x01, 0x01];

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Error {
    WrongPassword,
    Malformed(&'static str),
    Unsupported(&'static str),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::WrongPassword => f.write_str("wrong password"),
            Error::Malformed(what) => write!(f, "not a well-formed JKS store ({what})"),
            Error::Unsupported(what) => f.write_str(what),
        }
    }
}

pub(crate) enum Entry {
    Key {
        alias: String,
        /// The `EncryptedPrivateKeyInfo`, for [`unprotect_key`].
        protected_key: Vec<u8>,
        /// DER certificates as stored, normally leaf first.
        chain: Vec<Vec<u8>>,
    },
    /// Trust has no use for the alias.
    Trusted { cert: Vec<u8> },
}

/// Reads a JKS store, checking its integrity digest when a password is given (Java skips the
/// check without one, so a trust store can be read without its password).
pub(crate) fn read(bytes: &[u8], password: Option<&str>) -> Result<Vec<Entry>, Error> {
    if bytes.starts_with(&JCEKS_MAGIC) {
        return Err(Error::Unsupported(
            "JCEKS stores are not supported; convert it with keytool -importkeystore \
             -deststoretype PKCS12",
        ));
    }
    let body_len = bytes
        .len()
        .checked_sub(DIGEST_LEN)
        .ok_or(Error::Malformed("shorter than its digest"))?;
    let (body, digest) = bytes.split_at(body_len);
    let mut reader = Reader { bytes: body };
    if reader.take(4)? != MAGIC {
        return Err(Error::Malformed("no JKS magic number"));
    }
    let version = reader.u32()?;
    if version != 1 && version != 2 {
        return Err(Error::Malformed("unknown version"));
    }
    // The digest is checked before the entries are trusted to mean anything.
    if let Some(password) = password {
        let mut context = Context::new(&SHA1_FOR_LEGACY_USE_ONLY);
        context.update(&utf16be(password));
        context.update(b"Mighty Aphrodite");
        context.update(body);
        if context.finish().as_ref() != digest {
            return Err(Error::WrongPassword);
        }
    }
    let count = reader.u32()?;
    let mut entries = Vec::new();
    for _ in 0..count {
        let tag = reader.u32()?;
        let alias = reader.utf()?;
        let _created_millis = reader.take(8)?;
        match tag {
            KEY_ENTRY => {
                let protected_key = reader.sized()?.to_vec();
                let certs = reader.u32()?;
                let mut chain = Vec::new();
                for _ in 0..certs {
                    chain.push(reader.cert(version)?);
                }
                entries.push(Entry::Key {
                    alias,
                    protected_key,
                    chain,
                });
            }
            TRUSTED_ENTRY => {
                let cert = reader.cert(version)?;
                entries.push(Entry::Trusted { cert });
            }
            _ => return Err(Error::Malformed("unknown entry type (a secret key?)")),
        }
    }
    if !reader.bytes.is_empty() {
        return Err(Error::Malformed("bytes after the last entry"));
    }
    Ok(entries)
}

/// Decrypts a key entry's key with its password: the PKCS#8 `PrivateKeyInfo`.
pub(crate) fn unprotect_key(protected: &[u8], password: &str) -> Result<Vec<u8>, Error> {
    // EncryptedPrivateKeyInfo ::= SEQUENCE { SEQUENCE { OID, NULL }, OCTET STRING }
    let mut outer = Reader { bytes: protected };
    let mut info = Reader {
        bytes: outer.der(0x30)?,
    };
    let mut algorithm = Reader {
        bytes: info.der(0x30)?,
    };
    if algorithm.der(0x06)? != KEY_PROTECTOR_OID {
        return Err(Error::Unsupported(
            "the key is not protected by Sun's JKS key protector",
        ));
    }
    let sealed = info.der(0x04)?;
    if sealed.len() < 2 * DIGEST_LEN {
        return Err(Error::Malformed("protected key too short"));
    }
    let (salt, rest) = sealed.split_at(DIGEST_LEN);
    let (cipher, check) = rest.split_at(rest.len() - DIGEST_LEN);
    let password = utf16be(password);
    let mut plain = Vec::with_capacity(cipher.len());
    let mut block = salt.to_vec();
    for chunk in cipher.chunks(DIGEST_LEN) {
        let mut context = Context::new(&SHA1_FOR_LEGACY_USE_ONLY);
        context.update(&password);
        context.update(&block);
        block = context.finish().as_ref().to_vec();
        plain.extend(chunk.iter().zip(&block).map(|(c, k)| c ^ k));
    }
    let mut context = Context::new(&SHA1_FOR_LEGACY_USE_ONLY);
    context.update(&password);
    context.update(&plain);
    if context.finish().as_ref() != check {
        return Err(Error::WrongPassword);
    }
    Ok(plain)
}

/// Java's `char[]` password as bytes: UTF-16 code units, big-endian.
fn utf16be(password: &str) -> Vec<u8> {
    password.encode_utf16().flat_map(u16::to_be_bytes).collect()
}

/// A cursor that fails, never panics, when the input runs out.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8], Error> {
        if len > self.bytes.len() {
            return Err(Error::Malformed("truncated"));
        }
        let (taken, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(taken)
    }

    fn u32(&mut self) -> Result<u32, Error> {
        let bytes = self.take(4)?;
        Ok(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    /// Java's `writeUTF`: a 16-bit length, then modified UTF-8 (which matches UTF-8 for
    /// everything but NUL and characters outside the BMP, neither found in aliases).
    fn utf(&mut self) -> Result<String, Error> {
        let len = self.take(2)?;
        let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
        let text = self.take(len)?;
        Ok(String::from_utf8_lossy(text).into_owned())
    }

    fn sized(&mut self) -> Result<&'a [u8], Error> {
        let len = self.u32()?;
        let len = usize::try_from(len).map_err(|_| Error::Malformed("entry too large"))?;
        self.take(len)
    }

    fn cert(&mut self, version: u32) -> Result<Vec<u8>, Error> {
        if version == 2 {
            let kind = self.utf()?;
            if kind != "X.509" {
                return Err(Error::Unsupported("a certificate that is not X.509"));
            }
        }
        Ok(self.sized()?.to_vec())
    }

    /// One DER element with the given tag, returning its contents.
    fn der(&mut self, tag: u8) -> Result<&'a [u8], Error> {
        let header = self.take(2)?;
        if header[0] != tag {
            return Err(Error::Malformed(
                "unexpected DER element in the protected key",
            ));
        }
        let len = match header[1] {
            short @ 0..=0x7F => usize::from(short),
            long @ 0x81..=0x84 => {
                let octets = self.take(usize::from(long & 0x7F))?;
                octets
                    .iter()
                    .fold(0usize, |len, octet| (len << 8) | usize::from(*octet))
            }
            _ => return Err(Error::Malformed("unsupported DER length")),
        };
        self.take(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_encoded_per_utf16_code_unit_as_java_does() {
        assert_eq!(utf16be("aé"), vec![0x00, b'a', 0x00, 0xE9]);
    }

    #[test]
    fn a_truncated_store_is_malformed_not_a_panic() {
        let mut bytes = MAGIC.to_vec();
        bytes.extend([0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1]);
        bytes.extend([0; DIGEST_LEN]);
        assert_eq!(
            read(&bytes, None).err(),
            Some(Error::Malformed("truncated"))
        );
    }

    #[test]
    fn a_truncated_protected_key_is_malformed_not_a_panic() {
        assert!(matches!(
            unprotect_key(&[0x30, 0x82, 0x01], "changeit"),
            Err(Error::Malformed(_))
        ));
    }
}
