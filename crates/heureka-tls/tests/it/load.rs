//! Loading identities and trust: every format, and each mistake named by the key that holds it.

use std::process::Command;

use heureka_testkit::pki::{PASSWORD, SERVER_ALIAS};
use heureka_tls::{
    certificate_names, load_trust, CertificateDer, ClientAuth, Identity, IdentitySource,
    KeyStoreSpec, PemIdentitySpec, PemNaming, StoreKind, StoreNaming, TrustSource,
};
use rustls::pki_types::pem::PemObject;

use crate::{error_of, in_2020, in_2030, jks, pem, pki, store, store_spec};

fn der(path: &std::path::Path) -> CertificateDer<'static> {
    CertificateDer::from_pem_file(path).expect("a PEM certificate")
}

fn leaf_names(identity: &Identity) -> Vec<String> {
    certificate_names(&identity.chain[0])
}

#[test]
fn a_pem_identity_loads_with_the_leaf_first() {
    let identity = Identity::load(&pem(&pki().server), in_2030()).unwrap();
    assert_eq!(identity.chain, vec![der(&pki().server.cert_pem)]);
}

#[test]
fn a_pem_chain_written_ca_first_is_presented_leaf_first() {
    let dir = &pki().dir;
    let chain = std::fs::read_to_string(&pki().ca_pem).unwrap()
        + &std::fs::read_to_string(&pki().server.cert_pem).unwrap();
    let path = dir.join("ca-then-server.pem");
    std::fs::write(&path, chain).unwrap();
    let spec = PemIdentitySpec::new(
        &path,
        &pki().server.key_pem,
        "server.ssl",
        PemNaming::ServerSsl,
    );

    let identity = Identity::load(&IdentitySource::Pem(spec), in_2030()).unwrap();

    assert_eq!(
        identity.chain,
        vec![der(&pki().server.cert_pem), der(&pki().ca_pem)]
    );
}

#[test]
fn a_pkcs12_identity_loads_its_chain_leaf_then_ca() {
    let identity = Identity::load(&store(&pki().server.p12), in_2030()).unwrap();
    assert_eq!(
        identity.chain,
        vec![der(&pki().server.cert_pem), der(&pki().ca_pem)]
    );
}

#[test]
fn a_jks_identity_loads_its_chain_leaf_then_ca() {
    let Some(path) = jks(&pki().server.jks) else {
        return;
    };
    let identity = Identity::load(&store(path), in_2030()).unwrap();
    assert_eq!(
        identity.chain,
        vec![der(&pki().server.cert_pem), der(&pki().ca_pem)]
    );
}

#[test]
fn an_unset_store_type_is_read_from_the_file_jks_or_pkcs12() {
    let Some(jks_path) = jks(&pki().client.jks) else {
        return;
    };
    for path in [jks_path, pki().client.p12.as_path()] {
        let identity = Identity::load(&store(path), in_2030()).unwrap();
        assert_eq!(leaf_names(&identity), vec!["reader"], "{}", path.display());
    }
}

#[test]
fn a_store_typed_pkcs12_that_is_jks_is_read_as_jks_as_java_9_does() {
    let Some(path) = jks(&pki().server.jks) else {
        return;
    };
    let spec = KeyStoreSpec {
        kind: Some(StoreKind::Pkcs12),
        ..store_spec(path)
    };
    assert!(Identity::load(&IdentitySource::Store(spec), in_2030()).is_ok());
}

#[test]
fn a_wrong_pkcs12_password_names_the_password_key() {
    let path = &pki().server.p12;
    let spec = KeyStoreSpec {
        password: Some("wrong".to_owned()),
        ..store_spec(path)
    };
    let error = error_of(Identity::load(&IdentitySource::Store(spec), in_2030()));
    assert_eq!(
        error.to_string(),
        format!(
            "server.ssl.key-store-password: wrong password for {} (PKCS12)",
            path.display()
        )
    );
}

#[test]
fn a_wrong_jks_password_names_the_password_key() {
    let Some(path) = jks(&pki().server.jks) else {
        return;
    };
    let spec = KeyStoreSpec {
        password: Some("wrong".to_owned()),
        ..store_spec(path)
    };
    let error = error_of(Identity::load(&IdentitySource::Store(spec), in_2030()));
    assert_eq!(
        error.to_string(),
        format!(
            "server.ssl.key-store-password: wrong password for {} (JKS)",
            path.display()
        )
    );
}

#[test]
fn a_missing_alias_names_the_alias_key_and_lists_the_aliases_present() {
    let spec = KeyStoreSpec {
        key_alias: Some("tomcat".to_owned()),
        ..store_spec(&pki().server.p12)
    };
    let error = error_of(Identity::load(&IdentitySource::Store(spec), in_2030()));
    assert_eq!(error.key, "server.ssl.key-alias");
    assert!(error.reason.contains("'tomcat'"), "{error}");
    assert!(
        error
            .reason
            .ends_with(&format!("its key aliases: {SERVER_ALIAS}")),
        "{error}"
    );
}

#[test]
fn an_alias_matches_whatever_its_case_as_in_java() {
    let spec = KeyStoreSpec {
        key_alias: Some("SERVER".to_owned()),
        ..store_spec(&pki().server.p12)
    };
    assert!(Identity::load(&IdentitySource::Store(spec), in_2030()).is_ok());
}

#[test]
fn a_wrong_jks_key_password_names_the_key_password_key() {
    let Some(path) = jks(&pki().server.jks) else {
        return;
    };
    let spec = KeyStoreSpec {
        key_password: Some("wrong".to_owned()),
        ..store_spec(path)
    };
    let error = error_of(Identity::load(&IdentitySource::Store(spec), in_2030()));
    assert_eq!(error.key, "server.ssl.key-password");
    assert!(
        error.reason.starts_with("wrong key password for 'server'"),
        "{error}"
    );
}

#[test]
fn an_ssl_bundle_store_names_the_bundle_keys() {
    let spec = KeyStoreSpec {
        password: Some(PASSWORD.to_owned()),
        key_alias: Some("tomcat".to_owned()),
        ..KeyStoreSpec::new(
            &pki().server.p12,
            "spring.ssl.bundle.jks.web.keystore",
            StoreNaming::Bundle,
        )
    };
    let error = error_of(Identity::load(
        &IdentitySource::Store(spec.clone()),
        in_2030(),
    ));
    assert_eq!(error.key, "spring.ssl.bundle.jks.web.key.alias");
    let wrong = KeyStoreSpec {
        password: Some("wrong".to_owned()),
        ..spec
    };
    let error = error_of(Identity::load(&IdentitySource::Store(wrong), in_2030()));
    assert_eq!(error.key, "spring.ssl.bundle.jks.web.keystore.password");
}

#[test]
fn an_expired_certificate_is_refused_naming_the_date_it_expired() {
    let error = error_of(Identity::load(&pem(&pki().expired), in_2030()));
    assert_eq!(error.key, "server.ssl.certificate");
    assert!(
        error.reason.contains("expired on 2021-01-01 00:00:00 UTC"),
        "{error}"
    );
}

#[test]
fn a_certificate_not_yet_valid_is_refused_naming_the_date_it_starts() {
    let error = error_of(Identity::load(&pem(&pki().server), in_2020()));
    assert!(
        error
            .reason
            .contains("not valid until 2024-01-01 00:00:00 UTC"),
        "{error}"
    );
}

#[test]
fn a_key_that_is_not_the_certificates_is_refused() {
    let spec = PemIdentitySpec::new(
        &pki().server.cert_pem,
        &pki().client.key_pem,
        "server.ssl",
        PemNaming::ServerSsl,
    );
    let error = error_of(Identity::load(&IdentitySource::Pem(spec), in_2030()));
    assert_eq!(error.key, "server.ssl.certificate-private-key");
    assert!(
        error.reason.contains("does not match the certificate"),
        "{error}"
    );
}

#[test]
fn a_missing_file_names_the_key_and_the_path() {
    let missing = pki().dir.join("nowhere.p12");
    let error = error_of(Identity::load(&store(&missing), in_2030()));
    assert_eq!(
        error.to_string(),
        format!("server.ssl.key-store: no such file: {}", missing.display())
    );
}

#[test]
fn an_encrypted_pkcs8_key_loads_with_its_password() {
    let encrypted = pki().dir.join("server-key-encrypted.pem");
    let openssl = Command::new("openssl")
        .args([
            "pkcs8",
            "-topk8",
            "-v2",
            "aes-256-cbc",
            "-passout",
            "pass:secret",
            "-in",
        ])
        .arg(&pki().server.key_pem)
        .arg("-out")
        .arg(&encrypted)
        .status();
    if !openssl.is_ok_and(|status| status.success()) {
        eprintln!("skipped: openssl cannot write an encrypted key");
        return;
    }
    let spec = PemIdentitySpec {
        private_key_password: Some("secret".to_owned()),
        ..PemIdentitySpec::new(
            &pki().server.cert_pem,
            &encrypted,
            "server.ssl",
            PemNaming::ServerSsl,
        )
    };
    assert!(Identity::load(&IdentitySource::Pem(spec), in_2030()).is_ok());
}

#[test]
fn a_pkcs12_trust_store_trusts_the_ca() {
    let trust = load_trust(&TrustSource::Store(store_spec(&pki().trust_p12))).unwrap();
    assert_eq!(trust, vec![der(&pki().ca_pem)]);
}

#[test]
fn a_jks_trust_store_trusts_the_ca() {
    let Some(path) = jks(&pki().trust_jks) else {
        return;
    };
    let trust = load_trust(&TrustSource::Store(store_spec(path))).unwrap();
    assert_eq!(trust, vec![der(&pki().ca_pem)]);
}

#[test]
fn a_jks_trust_store_is_read_without_its_password_as_java_does() {
    let Some(path) = jks(&pki().trust_jks) else {
        return;
    };
    let spec = KeyStoreSpec::new(path, "server.ssl", StoreNaming::TrustStore);
    assert_eq!(
        load_trust(&TrustSource::Store(spec)).unwrap(),
        vec![der(&pki().ca_pem)]
    );
}

#[test]
fn pem_trust_names_its_key_when_the_file_holds_no_certificate() {
    let error = error_of(load_trust(&TrustSource::Pem(vec![pki()
        .server
        .key_pem
        .clone()])));
    assert_eq!(error.key, "server.ssl.trust-certificate");
}

#[test]
fn store_types_and_client_auth_parse_as_spring_spells_them() {
    assert_eq!(StoreKind::parse("pkcs12"), Some(StoreKind::Pkcs12));
    assert_eq!(StoreKind::parse("JKS"), Some(StoreKind::Jks));
    assert_eq!(StoreKind::parse("JCEKS"), None);
    assert_eq!(ClientAuth::parse("NEED"), Some(ClientAuth::Need));
    assert_eq!(ClientAuth::parse("want"), Some(ClientAuth::Want));
    assert_eq!(ClientAuth::parse("none"), Some(ClientAuth::None));
    assert_eq!(ClientAuth::parse("required"), None);
}

#[test]
fn a_specs_debug_form_hides_its_passwords() {
    let spec = KeyStoreSpec {
        key_password: Some("secret".to_owned()),
        ..store_spec(&pki().server.p12)
    };
    let shown = format!("{:?}", IdentitySource::Store(spec));
    assert!(
        !shown.contains(PASSWORD) && !shown.contains("secret"),
        "{shown}"
    );
}
