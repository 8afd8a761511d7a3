//! `server.ssl.*`, the SSL bundles, `eureka.client.tls.*` and the Spring keys refused because
//! ignoring them would weaken security.

use super::*;

fn ssl(args: &[&str]) -> Option<SslConfig> {
    config(&Dir::new(), args, &[]).server.ssl
}

fn named<T>(key: &str, value: T) -> Named<T> {
    Named {
        key: key.to_owned(),
        value,
    }
}

#[test]
fn plain_http_without_any_ssl_key() {
    assert_eq!(ssl(&[]), None);
}

#[test]
fn a_key_store_alone_turns_https_on_as_in_spring_boot() {
    let ssl = ssl(&[
        "--server.ssl.key-store=file:/certs/server.p12",
        "--server.ssl.key-store-password=changeit",
        "--server.ssl.key-alias=server",
    ])
    .expect("HTTPS on");
    assert_eq!(
        ssl.identity,
        KeySource::Store {
            store: StoreConfig {
                location: named("server.ssl.key-store", PathBuf::from("/certs/server.p12")),
                kind: None,
                password: Some(named(
                    "server.ssl.key-store-password",
                    Secret("changeit".into())
                )),
            },
            alias: Some(named("server.ssl.key-alias", "server".to_owned())),
            key_password: None,
        }
    );
    assert_eq!(ssl.client_auth, ClientAuth::None);
    assert!(!ssl.reload_on_update);
}

#[test]
fn enabled_without_a_certificate_is_an_error_never_plain_http() {
    let message = error(&Dir::new(), &["--server.ssl.enabled=true"], &[]);
    assert!(
        message.contains("server.ssl is enabled but no certificate is given"),
        "{message}"
    );
}

#[test]
fn enabled_false_serves_plain_http_whatever_else_is_set() {
    assert_eq!(
        ssl(&[
            "--server.ssl.enabled=false",
            "--server.ssl.key-store=/certs/server.p12"
        ]),
        None
    );
}

#[test]
fn pem_certificate_and_key_are_read_from_their_keys() {
    let ssl = ssl(&[
        "--server.ssl.certificate=/certs/server.crt",
        "--server.ssl.certificate-private-key=/certs/server.key",
    ])
    .unwrap();
    assert_eq!(
        ssl.identity,
        KeySource::Pem {
            certificate: named("server.ssl.certificate", PathBuf::from("/certs/server.crt")),
            private_key: named(
                "server.ssl.certificate-private-key",
                PathBuf::from("/certs/server.key")
            ),
            private_key_password: None,
        }
    );
}

#[test]
fn a_pem_certificate_without_its_key_is_an_error() {
    let message = error(
        &Dir::new(),
        &["--server.ssl.certificate=/certs/server.crt"],
        &[],
    );
    assert!(
        message.contains("server.ssl.certificate-private-key is not"),
        "{message}"
    );
}

#[test]
fn client_auth_need_without_a_trust_store_is_an_error() {
    let message = error(
        &Dir::new(),
        &[
            "--server.ssl.key-store=/certs/server.p12",
            "--server.ssl.client-auth=need",
        ],
        &[],
    );
    assert!(message.contains("need a trust store"), "{message}");
}

#[test]
fn client_auth_with_a_trust_store() {
    let ssl = ssl(&[
        "--server.ssl.key-store=/certs/server.p12",
        "--server.ssl.client-auth=NEED",
        "--server.ssl.trust-store=/certs/ca.jks",
        "--server.ssl.trust-store-type=JKS",
    ])
    .unwrap();
    assert_eq!(ssl.client_auth, ClientAuth::Need);
    assert_eq!(
        ssl.trust,
        Some(TrustSource::Store(StoreConfig {
            location: named("server.ssl.trust-store", PathBuf::from("/certs/ca.jks")),
            kind: Some(named("server.ssl.trust-store-type", "JKS".to_owned())),
            password: None,
        }))
    );
}

#[test]
fn an_old_protocol_is_an_error() {
    let message = error(
        &Dir::new(),
        &[
            "--server.ssl.key-store=/certs/server.p12",
            "--server.ssl.protocol=TLSv1.1",
        ],
        &[],
    );
    assert!(message.contains("TLS 1.2 and 1.3 only"), "{message}");
}

#[test]
fn a_mistyped_ssl_key_is_an_error_with_a_hint() {
    let message = error(&Dir::new(), &["--server.ssl.key-stor=/x.p12"], &[]);
    assert!(
        message.contains("unknown key server.ssl.key-stor"),
        "{message}"
    );
    assert!(
        message.contains("did you mean server.ssl.key-store"),
        "{message}"
    );
}

#[test]
fn a_classpath_location_is_an_error() {
    let message = error(
        &Dir::new(),
        &["--server.ssl.key-store=classpath:server.p12"],
        &[],
    );
    assert!(message.contains("Java classpath"), "{message}");
}

#[test]
fn a_jks_bundle_from_yaml_with_reload_on_update() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "server:\n  ssl:\n    bundle: web\n    client-auth: want\n\
         spring:\n  ssl:\n    bundle:\n      jks:\n        web:\n          reload-on-update: true\n\
         \x20         key:\n            alias: server\n\
         \x20         keystore:\n            location: /certs/server.p12\n            password: changeit\n            type: PKCS12\n\
         \x20         truststore:\n            location: /certs/ca.p12\n\
         \x20         options:\n            enabled-protocols: TLSv1.3\n",
    );
    let ssl = config(&dir, &[], &[]).server.ssl.unwrap();
    let prefix = "spring.ssl.bundle.jks.web";
    assert_eq!(
        ssl.identity,
        KeySource::Store {
            store: StoreConfig {
                location: named(
                    &format!("{prefix}.keystore.location"),
                    PathBuf::from("/certs/server.p12")
                ),
                kind: Some(named(&format!("{prefix}.keystore.type"), "PKCS12".into())),
                password: Some(named(
                    &format!("{prefix}.keystore.password"),
                    Secret("changeit".into())
                )),
            },
            alias: Some(named(&format!("{prefix}.key.alias"), "server".into())),
            key_password: None,
        }
    );
    assert!(ssl.reload_on_update);
    assert_eq!(ssl.client_auth, ClientAuth::Want);
    assert_eq!(
        ssl.protocols,
        vec![named(
            &format!("{prefix}.options.enabled-protocols"),
            "TLSv1.3".to_owned()
        )]
    );
    assert_eq!(ssl.quiet_period, Duration::from_secs(10));
}

#[test]
fn a_pem_bundle_in_camel_case() {
    let ssl = ssl(&[
        "--server.ssl.bundle=web",
        "--spring.ssl.bundle.pem.web.keystore.certificate=/certs/server.crt",
        "--spring.ssl.bundle.pem.web.keystore.privateKey=/certs/server.key",
    ])
    .unwrap();
    assert!(matches!(
        ssl.identity,
        KeySource::Pem { ref private_key, .. }
            if private_key.key == "spring.ssl.bundle.pem.web.keystore.private-key"
    ));
}

#[test]
fn a_bundle_that_is_not_defined_is_an_error() {
    let message = error(&Dir::new(), &["--server.ssl.bundle=web"], &[]);
    assert!(
        message.contains("no spring.ssl.bundle.jks.web.* or spring.ssl.bundle.pem.web.*"),
        "{message}"
    );
}

#[test]
fn a_mistyped_bundle_property_is_an_error() {
    let message = error(
        &Dir::new(),
        &[
            "--server.ssl.bundle=web",
            "--spring.ssl.bundle.jks.web.keystore.locaton=/certs/server.p12",
        ],
        &[],
    );
    assert!(
        message.contains("unknown key spring.ssl.bundle.jks.web.keystore.locaton"),
        "{message}"
    );
}

#[test]
fn passwords_are_not_in_debug_output() {
    let config = config(
        &Dir::new(),
        &[
            "--server.ssl.key-store=/certs/server.p12",
            "--server.ssl.key-store-password=s3cret-store",
            "--eureka.client.tls.enabled=true",
            "--eureka.client.tls.trust-store=/certs/ca.p12",
            "--eureka.client.tls.trust-store-password=s3cret-trust",
        ],
        &[],
    );
    let debug = format!("{config:?}");
    assert!(!debug.contains("s3cret"), "{debug}");
}

#[test]
fn peer_tls_keys_are_read_when_enabled() {
    let tls = config(
        &Dir::new(),
        &[
            "--eureka.client.tls.enabled=true",
            "--eureka.client.tls.key-store=/certs/peer.p12",
            "--eureka.client.tls.key-store-password=changeit",
            "--eureka.client.tls.trust-store=/certs/ca.jks",
        ],
        &[],
    )
    .client
    .tls
    .expect("peer TLS on");
    assert!(matches!(tls.identity, Some(KeySource::Store { .. })));
    assert!(matches!(tls.trust, Some(TrustSource::Store(_))));
}

#[test]
fn peer_tls_keys_without_enabled_are_an_error() {
    let message = error(
        &Dir::new(),
        &["--eureka.client.tls.trust-store=/certs/ca.jks"],
        &[],
    );
    assert!(
        message.contains("eureka.client.tls.enabled is not true"),
        "{message}"
    );
}

#[test]
fn a_separate_management_port_is_refused() {
    let message = error(&Dir::new(), &["--management.server.port=9090"], &[]);
    assert!(
        message.contains("management.server.port (command line) is not supported"),
        "{message}"
    );
}

#[test]
fn a_management_port_equal_to_the_server_port_is_accepted() {
    config(
        &Dir::new(),
        &["--server.port=9000", "--management.server.port=9000"],
        &[],
    );
}

#[test]
fn oauth2_resource_server_keys_are_refused() {
    let message = error(
        &Dir::new(),
        &["--spring.security.oauth2.resourceserver.jwt.issuer-uri=https://idp.example"],
        &[],
    );
    assert!(message.contains("OAuth2 and JWT"), "{message}");
}

#[test]
fn http2_is_accepted_and_inert() {
    config(&Dir::new(), &["--server.http2.enabled=true"], &[]);
}
