//! `TestPki` writes every file it names, and Java's `keytool` accepts the PKCS12 stores it writes.

use std::path::Path;

use heureka_testkit::pki::TestPki;

#[test]
fn every_file_the_pki_names_exists() {
    let pki = TestPki::create(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("testkit-pki"));
    let identities = [
        &pki.server,
        &pki.client,
        &pki.peer,
        &pki.expired,
        &pki.wrong_host,
    ];
    let mut files = vec![
        pki.ca_pem.clone(),
        pki.ca_key_pem.clone(),
        pki.trust_p12.clone(),
    ];
    for identity in identities {
        files.extend([
            identity.cert_pem.clone(),
            identity.key_pem.clone(),
            identity.p12.clone(),
        ]);
        files.extend(identity.jks.clone());
    }
    files.extend(pki.trust_jks.clone());
    for file in files {
        assert!(file.is_file(), "{} was not written", file.display());
    }
}
