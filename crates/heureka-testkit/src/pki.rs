//! Test certificates: a CA and the identities signed by it that TLS tests need, written into a
//! directory as PEM, PKCS12 and (when Java's `keytool` is on the PATH) JKS files.
//!
//! The PKCS12 files are written here; the JKS files are converted from them by `keytool
//! -importkeystore`, so they are what Java itself writes rather than what a Rust writer
//! believes Java writes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use p12_keystore::{Certificate, KeyStore, KeyStoreEntry, PrivateKey, PrivateKeyChain};
use rcgen::{
    date_time_ymd, BasicConstraints, CertificateParams, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType,
};

/// The password of every store and key here, Java's conventional default.
pub const PASSWORD: &str = "changeit";
/// The alias of the key entry in the server stores (valid, expired and wrong-host).
pub const SERVER_ALIAS: &str = "server";
/// The alias of the key entry in the `reader` client's stores; also its certificate's CN.
pub const CLIENT_ALIAS: &str = "reader";
/// The alias of the key entry in the `peer-a` client's stores; also its certificate's CN.
pub const PEER_ALIAS: &str = "peer-a";
/// The alias of the CA's entry in the trust stores.
pub const CA_ALIAS: &str = "ca";

/// One identity's files: its certificate (the leaf alone) and PKCS#8 key as PEM, and both in
/// a PKCS12 store and a JKS store (`None` when `keytool` is absent).
#[derive(Debug, Clone)]
pub struct IdentityFiles {
    pub cert_pem: PathBuf,
    pub key_pem: PathBuf,
    pub p12: PathBuf,
    pub jks: Option<PathBuf>,
}

/// The files [`TestPki::create`] wrote. Every identity is signed by the CA; stores use
/// [`PASSWORD`] for the store and the key.
#[derive(Debug, Clone)]
pub struct TestPki {
    pub dir: PathBuf,
    /// The CA's certificate (`ca.pem`) and key (`ca-key.pem`).
    pub ca_pem: PathBuf,
    pub ca_key_pem: PathBuf,
    /// `localhost` and 127.0.0.1, valid 2024 to 2100, alias [`SERVER_ALIAS`].
    pub server: IdentityFiles,
    /// CN `reader`, a client certificate, alias [`CLIENT_ALIAS`].
    pub client: IdentityFiles,
    /// CN `peer-a`, a client certificate, alias [`PEER_ALIAS`].
    pub peer: IdentityFiles,
    /// `localhost` and 127.0.0.1, valid only from 2020-01-01 to 2021-01-01.
    pub expired: IdentityFiles,
    /// Valid, but for `wrong.example` only.
    pub wrong_host: IdentityFiles,
    /// The CA alone as a trusted-certificate entry, alias [`CA_ALIAS`].
    pub trust_p12: PathBuf,
    pub trust_jks: Option<PathBuf>,
}

impl TestPki {
    /// Writes a fresh CA and its identities into `dir` (created if missing). Panics on any
    /// failure except a missing `keytool`, which leaves the JKS files out with a message.
    pub fn create(dir: &Path) -> TestPki {
        std::fs::create_dir_all(dir).expect("create the PKI directory");
        let ca_key = KeyPair::generate().expect("CA key");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.distinguished_name = name("Heureka Test CA");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        ca_params.not_before = date_time_ymd(2019, 1, 1);
        ca_params.not_after = date_time_ymd(2100, 1, 1);
        let ca_cert = ca_params.self_signed(&ca_key).expect("CA certificate");
        let ca_pem = write(dir, "ca.pem", ca_cert.pem().as_bytes());
        let ca_key_pem = write(dir, "ca-key.pem", ca_key.serialize_pem().as_bytes());
        let issuer = Issuer::new(ca_params, ca_key);
        let ca = Signer {
            issuer,
            der: ca_cert.der().to_vec(),
        };

        let localhost = || Leaf {
            cn: "localhost",
            dns: &["localhost"],
            ip: true,
            purpose: ExtendedKeyUsagePurpose::ServerAuth,
            valid: (2024, 2100),
        };
        let mut stores = Vec::new();
        let server = ca.identity(dir, "server", SERVER_ALIAS, localhost(), &mut stores);
        let client = ca.identity(
            dir,
            "client",
            CLIENT_ALIAS,
            client_leaf(CLIENT_ALIAS),
            &mut stores,
        );
        let peer = ca.identity(
            dir,
            "peer",
            PEER_ALIAS,
            client_leaf(PEER_ALIAS),
            &mut stores,
        );
        let expired_leaf = Leaf {
            valid: (2020, 2021),
            ..localhost()
        };
        let expired = ca.identity(dir, "expired", SERVER_ALIAS, expired_leaf, &mut stores);
        let wrong_leaf = Leaf {
            cn: "wrong.example",
            dns: &["wrong.example"],
            ip: false,
            ..localhost()
        };
        let wrong_host = ca.identity(dir, "wrong-host", SERVER_ALIAS, wrong_leaf, &mut stores);

        let mut trust = KeyStore::new();
        let ca_entry = Certificate::from_der(&ca.der).expect("CA certificate parses");
        trust.add_entry(CA_ALIAS, KeyStoreEntry::Certificate(ca_entry));
        let trust_p12 = write(
            dir,
            "trust.p12",
            &trust.writer(PASSWORD).write().expect("trust store"),
        );
        stores.push((trust_p12.clone(), false));

        let jks = to_jks(&stores);
        let jks_of = |files: IdentityFiles| IdentityFiles {
            jks: jks.as_ref().map(|_| files.p12.with_extension("jks")),
            ..files
        };
        TestPki {
            dir: dir.to_path_buf(),
            ca_pem,
            ca_key_pem,
            server: jks_of(server),
            client: jks_of(client),
            peer: jks_of(peer),
            expired: jks_of(expired),
            wrong_host: jks_of(wrong_host),
            trust_jks: jks.map(|_| trust_p12.with_extension("jks")),
            trust_p12,
        }
    }
}

/// What a leaf certificate says.
struct Leaf {
    cn: &'static str,
    dns: &'static [&'static str],
    ip: bool,
    purpose: ExtendedKeyUsagePurpose,
    /// Valid from January 1st of the first year to January 1st of the second.
    valid: (i32, i32),
}

fn client_leaf(cn: &'static str) -> Leaf {
    Leaf {
        cn,
        dns: &[],
        ip: false,
        purpose: ExtendedKeyUsagePurpose::ClientAuth,
        valid: (2024, 2100),
    }
}

struct Signer {
    issuer: Issuer<'static, KeyPair>,
    der: Vec<u8>,
}

impl Signer {
    /// Signs `leaf` and writes `{stem}.pem`, `{stem}-key.pem` and `{stem}.p12` (the chain leaf
    /// then CA, under `alias`), adding the store to `stores` for conversion to JKS.
    fn identity(
        &self,
        dir: &Path,
        stem: &str,
        alias: &str,
        leaf: Leaf,
        stores: &mut Vec<(PathBuf, bool)>,
    ) -> IdentityFiles {
        let key = KeyPair::generate().expect("leaf key");
        let sans: Vec<String> = leaf.dns.iter().map(|name| name.to_string()).collect();
        let mut params = CertificateParams::new(sans).expect("leaf params");
        if leaf.ip {
            let loopback = std::net::IpAddr::from([127, 0, 0, 1]);
            params.subject_alt_names.push(SanType::IpAddress(loopback));
        }
        params.distinguished_name = name(leaf.cn);
        params.extended_key_usages = vec![leaf.purpose];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.not_before = date_time_ymd(leaf.valid.0, 1, 1);
        params.not_after = date_time_ymd(leaf.valid.1, 1, 1);
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("leaf certificate");

        let cert_pem = write(dir, &format!("{stem}.pem"), cert.pem().as_bytes());
        let key_pem = write(
            dir,
            &format!("{stem}-key.pem"),
            key.serialize_pem().as_bytes(),
        );
        let chain = [
            Certificate::from_der(cert.der()).expect("leaf parses"),
            Certificate::from_der(&self.der).expect("CA parses"),
        ];
        let private = PrivateKey::from_der(&key.serialize_der()).expect("key parses");
        let mut store = KeyStore::new();
        let key_id = stem.as_bytes().to_vec();
        let entry = PrivateKeyChain::new(key_id, private, chain);
        store.add_entry(alias, KeyStoreEntry::PrivateKeyChain(entry));
        let p12 = write(
            dir,
            &format!("{stem}.p12"),
            &store.writer(PASSWORD).write().expect("PKCS12"),
        );
        stores.push((p12.clone(), true));
        IdentityFiles {
            cert_pem,
            key_pem,
            p12,
            jks: None,
        }
    }
}

fn name(cn: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, cn);
    name
}

fn write(dir: &Path, file: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, bytes)
        .unwrap_or_else(|error| panic!("write {}: {error}", path.display()));
    path
}

/// Converts each PKCS12 store to a JKS store beside it with `keytool`, all at once because each
/// run starts a JVM. `None` when `keytool` cannot be started.
/// Each store comes with whether it holds keys (not only trusted certificates).
fn to_jks(stores: &[(PathBuf, bool)]) -> Option<()> {
    let mut running = Vec::new();
    for (p12, keys) in stores {
        let jks = p12.with_extension("jks");
        let _ = std::fs::remove_file(&jks);
        let child = Command::new("keytool")
            .args([
                "-importkeystore",
                "-noprompt",
                "-srcstoretype",
                "PKCS12",
                "-deststoretype",
                "JKS",
            ])
            .args(["-srcstorepass", PASSWORD, "-deststorepass", PASSWORD])
            // keytool refuses a key password for trusted-certificate entries, and then exits 0.
            .args(if *keys {
                &["-destkeypass", PASSWORD][..]
            } else {
                &[]
            })
            .arg("-J-Duser.language=en")
            .arg("-srckeystore")
            .arg(p12)
            .arg("-destkeystore")
            .arg(&jks)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        match child {
            Ok(child) => running.push((jks, child)),
            Err(error) => {
                eprintln!("heureka-testkit pki: no JKS files, keytool cannot be run ({error}); JKS tests skip");
                return None;
            }
        }
    }
    for (jks, child) in running {
        let output = child.wait_with_output().expect("wait for keytool");
        let said =
            String::from_utf8_lossy(&output.stdout) + String::from_utf8_lossy(&output.stderr);
        // keytool exits 0 when some entries failed; only its summary line tells.
        assert!(
            output.status.success() && said.contains(" 0 entries failed"),
            "keytool -importkeystore to {} failed: {said}",
            jks.display(),
        );
    }
    Some(())
}
