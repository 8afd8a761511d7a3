//! heureka-tls's tests: loading identities and trust as Spring's keys describe them, the
//! server configuration's refusals, and real handshakes between the configurations built.

mod config;
mod handshake;
mod load;

use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use heureka_testkit::pki::{IdentityFiles, TestPki, PASSWORD};
use heureka_tls::{
    IdentitySource, KeyStoreSpec, PemIdentitySpec, PemNaming, StoreNaming, TlsError,
};

/// One PKI for the whole binary: writing it runs keytool, a JVM start per store.
static PKI: LazyLock<TestPki> = LazyLock::new(|| {
    TestPki::create(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("heureka-tls-pki"))
});

fn pki() -> &'static TestPki {
    &PKI
}

/// A moment all the valid test certificates cover (2024 to 2100).
fn in_2030() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_893_456_000)
}

/// A moment the expired certificate (2020 to 2021) covers.
fn in_2020() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_590_969_600)
}

fn pem(files: &IdentityFiles) -> IdentitySource {
    IdentitySource::Pem(PemIdentitySpec::new(
        &files.cert_pem,
        &files.key_pem,
        "server.ssl",
        PemNaming::ServerSsl,
    ))
}

/// `server.ssl.key-store` pointing at `path`, with the test password.
fn store_spec(path: &Path) -> KeyStoreSpec {
    KeyStoreSpec {
        password: Some(PASSWORD.to_owned()),
        ..KeyStoreSpec::new(path, "server.ssl", StoreNaming::KeyStore)
    }
}

fn store(path: &Path) -> IdentitySource {
    IdentitySource::Store(store_spec(path))
}

/// The JKS file, or `None` (and a note) when keytool was not there to write it.
fn jks(path: &Option<PathBuf>) -> Option<&Path> {
    if path.is_none() {
        eprintln!("skipped: no JKS test files without keytool");
    }
    path.as_deref()
}

fn error_of<T: std::fmt::Debug>(result: Result<T, TlsError>) -> TlsError {
    result.expect_err("an error")
}
