//! The client against a server serving HTTPS (the in-process server with `server.ssl.*`):
//! `eureka.client.tls.*` says whom to trust and which certificate to present, and a
//! certificate failure is told in one line.

use std::path::Path;
use std::sync::OnceLock;

use heureka_client::{ClientConfig, ClientError, ClientEvent, EurekaClient, FetchKind};
use heureka_testkit::empty_dir;
use heureka_testkit::pki::{TestPki, PASSWORD, SERVER_ALIAS};

use crate::support::{client_config, subscribed_from_start, wait_for, Server};

/// The test CA and its certificates, made once for all the tests here.
fn pki() -> &'static TestPki {
    static PKI: OnceLock<TestPki> = OnceLock::new();
    PKI.get_or_init(|| TestPki::create(&empty_dir!().join("pki")))
}

fn text(path: &Path) -> String {
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// A server serving HTTPS with `identity`'s PKCS12 store, and `extra` settings.
async fn https_server(identity: &Path, extra: &[String]) -> Server {
    let mut args = vec![
        format!("--server.ssl.key-store={}", text(identity)),
        format!("--server.ssl.key-store-password={PASSWORD}"),
        format!("--server.ssl.key-alias={SERVER_ALIAS}"),
    ];
    args.extend_from_slice(extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start_with(&args).await
}

/// Mutual TLS: the server asks every client for a certificate signed by the test CA.
async fn mutual_tls_server() -> Server {
    https_server(
        &pki().server.p12,
        &[
            "--server.ssl.client-auth=need".to_owned(),
            format!("--server.ssl.trust-certificate={}", text(&pki().ca_pem)),
        ],
    )
    .await
}

/// A client of `server` by `localhost`, the name its certificate carries, configured by
/// Spring keys as an application would be; `tls` are `eureka.client.tls.*` pairs.
fn config(server: &Server, app: &str, tls: &[(&str, String)]) -> ClientConfig {
    let url = format!("https://localhost:{}/eureka/", server.port);
    let mut pairs: Vec<(&str, &str)> = vec![
        ("eureka.client.service-url.defaultZone", &url),
        ("spring.application.name", app),
        ("eureka.instance.hostname", "127.0.0.1"),
        ("eureka.instance.ip-address", "127.0.0.1"),
    ];
    if !tls.is_empty() {
        pairs.push(("eureka.client.tls.enabled", "true"));
    }
    pairs.extend(tls.iter().map(|(key, value)| (*key, value.as_str())));
    let from_keys = ClientConfig::from_properties(pairs).unwrap();
    let mut config = client_config(
        from_keys.service_url[heureka_client::DEFAULT_ZONE].clone(),
        app,
        &format!("{app}-1"),
    );
    config.tls = from_keys.tls;
    config
}

fn trusting_the_ca() -> Vec<(&'static str, String)> {
    vec![
        ("eureka.client.tls.trust-store", text(&pki().trust_p12)),
        (
            "eureka.client.tls.trust-store-password",
            PASSWORD.to_owned(),
        ),
    ]
}

async fn start_error(config: ClientConfig) -> ClientError {
    EurekaClient::start(config)
        .await
        .err()
        .expect("the client cannot start")
}

#[tokio::test]
async fn a_client_trusting_the_servers_ca_registers_and_fetches_over_https() {
    let server = https_server(&pki().server.p12, &[]).await;
    let billing = EurekaClient::start(config(&server, "billing", &trusting_the_ca()))
        .await
        .unwrap();
    let mut reader = config(&server, "reader", &trusting_the_ca());
    reader.register_with_eureka = false;
    let reader = EurekaClient::start(reader).await.unwrap();
    assert_eq!(reader.instances("BILLING").len(), 1);
    billing.shutdown().await.unwrap();
}

#[tokio::test]
async fn without_a_trust_store_a_private_ca_is_an_unknown_authority() {
    let server = https_server(&pki().server.p12, &[]).await;
    let error = start_error(config(&server, "billing", &[])).await;
    assert!(
        error.to_string().ends_with(
            "the server's certificate was issued by an unknown authority (not in the trust store)"
        ),
        "{error}"
    );
}

#[tokio::test]
async fn a_certificate_for_another_host_is_refused_naming_the_host() {
    let server = https_server(&pki().wrong_host.p12, &[]).await;
    let error = start_error(config(&server, "billing", &trusting_the_ca())).await;
    assert!(
        error
            .to_string()
            .contains("the server's certificate is not valid for 'localhost'"),
        "{error}"
    );
}

#[tokio::test]
async fn a_server_requiring_a_client_certificate_accepts_the_configured_key_store() {
    let server = mutual_tls_server().await;
    let mut tls = trusting_the_ca();
    tls.push(("eureka.client.tls.key-store", text(&pki().client.p12)));
    tls.push(("eureka.client.tls.key-store-password", PASSWORD.to_owned()));
    let client = EurekaClient::start(config(&server, "billing", &tls))
        .await
        .unwrap();
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_push_is_followed_with_the_same_trust_and_client_certificate() {
    let server = mutual_tls_server().await;
    let mut tls = trusting_the_ca();
    tls.push(("eureka.client.tls.key-store", text(&pki().client.p12)));
    tls.push(("eureka.client.tls.key-store-password", PASSWORD.to_owned()));
    let (client, mut events) = subscribed_from_start(config(&server, "billing", &tls)).await;
    wait_for(&mut events, "a snapshot pushed over mutual TLS", |event| {
        matches!(
            event,
            ClientEvent::CacheRefreshed {
                kind: FetchKind::Snapshot,
                ..
            }
        )
    })
    .await;
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_server_requiring_a_client_certificate_refuses_a_client_without_one() {
    let server = mutual_tls_server().await;
    let error = start_error(config(&server, "billing", &trusting_the_ca())).await;
    assert!(error.to_string().contains("client certificate"), "{error}");
}

#[tokio::test]
async fn a_wrong_trust_store_password_fails_the_start_naming_the_key() {
    let server = https_server(&pki().server.p12, &[]).await;
    let tls = [
        ("eureka.client.tls.trust-store", text(&pki().trust_p12)),
        ("eureka.client.tls.trust-store-password", "wrong".to_owned()),
    ];
    let error = start_error(config(&server, "billing", &tls)).await;
    assert!(matches!(error, ClientError::Tls(_)), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("eureka.client.tls.trust-store-password: "),
        "{error}"
    );
}
