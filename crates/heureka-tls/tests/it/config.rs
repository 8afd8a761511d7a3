//! The server configuration's refusals: what Spring's keys may ask that rustls will not do.

use heureka_tls::{server_config, ClientAuth, ServerTlsSpec, TlsError};

use crate::{in_2030, pem, pki};

fn spec() -> ServerTlsSpec {
    ServerTlsSpec {
        identity: pem(&pki().server),
        client_auth: ClientAuth::None,
        trust: None,
        protocols: Vec::new(),
        ciphers: Vec::new(),
    }
}

fn refusal(spec: &ServerTlsSpec) -> TlsError {
    server_config(spec, in_2030())
        .map(|_| ())
        .expect_err("a refusal")
}

#[test]
fn tls_1_1_is_refused_saying_only_1_2_and_1_3_are_offered() {
    let spec = ServerTlsSpec {
        protocols: vec!["TLSv1.2".into(), "TLSv1.1".into()],
        ..spec()
    };
    assert_eq!(
        refusal(&spec).to_string(),
        "server.ssl.enabled-protocols: TLSv1.1 is not offered: only TLSv1.2 and TLSv1.3 are"
    );
}

#[test]
fn an_unknown_cipher_is_refused_listing_the_accepted_ones() {
    let spec = ServerTlsSpec {
        ciphers: vec!["TLS_RSA_WITH_AES_128_CBC_SHA".into()],
        ..spec()
    };
    let error = refusal(&spec);
    assert_eq!(error.key, "server.ssl.ciphers");
    assert!(error
        .reason
        .starts_with("TLS_RSA_WITH_AES_128_CBC_SHA is unknown or not safe"));
    assert!(error.reason.contains("TLS_AES_128_GCM_SHA256"), "{error}");
    assert!(
        error
            .reason
            .contains("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
        "{error}"
    );
}

#[test]
fn iana_cipher_names_are_accepted() {
    let ciphers = vec![
        "TLS_AES_128_GCM_SHA256".into(),
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256".into(),
    ];
    assert!(server_config(&ServerTlsSpec { ciphers, ..spec() }, in_2030()).is_ok());
}

#[test]
fn needing_client_certificates_without_trust_is_refused_naming_the_trust_keys() {
    let error = refusal(&ServerTlsSpec {
        client_auth: ClientAuth::Need,
        ..spec()
    });
    assert!(error.reason.contains("server.ssl.trust-store"), "{error}");
    assert!(
        error.reason.contains("server.ssl.trust-certificate"),
        "{error}"
    );
}

#[test]
fn the_server_offers_http_1_1_only() {
    let config = server_config(&spec(), in_2030()).unwrap();
    assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
}
