//! Real handshakes, in memory, between `server_config` and `client_config`.

use std::sync::Arc;

use heureka_tls::rustls::pki_types::ServerName;
use heureka_tls::rustls::{ClientConfig, ServerConfig};
use heureka_tls::{
    certificate_names, client_config, explain, load_trust, server_config, ClientAuth, Identity,
    ServerTlsSpec, TrustSource,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::{TlsAcceptor, TlsConnector};

use crate::{in_2020, in_2030, pem, pki};

struct Ends {
    server: std::io::Result<tokio_rustls::server::TlsStream<tokio::io::DuplexStream>>,
    /// The client's side after it has also read the server's first byte, so that a refusal
    /// the server sends after the client's half of a TLS 1.3 handshake reaches it.
    client: std::io::Result<tokio_rustls::client::TlsStream<tokio::io::DuplexStream>>,
}

/// Connects a client to a server over an in-memory pipe as `name`; on success the server
/// writes one byte, which the client reads.
async fn connect(server: Arc<ServerConfig>, client: ClientConfig, name: &str) -> Ends {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let name = ServerName::try_from(name.to_owned()).unwrap();
    let serve = async {
        let mut stream = TlsAcceptor::from(server).accept(server_io).await?;
        stream.write_all(b"!").await?;
        stream.flush().await?;
        Ok(stream)
    };
    let call = async {
        let mut stream = TlsConnector::from(Arc::new(client))
            .connect(name, client_io)
            .await?;
        stream.read_exact(&mut [0u8; 1]).await?;
        Ok(stream)
    };
    let (server, client) = tokio::join!(serve, call);
    Ends { server, client }
}

fn spec(identity: &heureka_testkit::pki::IdentityFiles) -> ServerTlsSpec {
    ServerTlsSpec {
        identity: pem(identity),
        client_auth: ClientAuth::None,
        trust: None,
        protocols: Vec::new(),
        ciphers: Vec::new(),
    }
}

fn server(spec: &ServerTlsSpec) -> Arc<ServerConfig> {
    server_config(spec, in_2030()).unwrap()
}

fn trusting_the_ca(identity: Option<Identity>) -> ClientConfig {
    let trust = load_trust(&TrustSource::Pem(vec![pki().ca_pem.clone()])).unwrap();
    client_config(Some(trust), identity).unwrap()
}

fn client_explains(ends: Ends) -> String {
    let error = ends.client.map(|_| ()).expect_err("the client fails");
    explain(&error).unwrap_or_else(|| panic!("no TLS cause in {error}"))
}

#[tokio::test]
async fn a_client_trusting_the_ca_connects() {
    let ends = connect(
        server(&spec(&pki().server)),
        trusting_the_ca(None),
        "localhost",
    )
    .await;
    assert!(ends.server.is_ok() && ends.client.is_ok());
}

#[tokio::test]
async fn a_client_trusting_only_the_public_roots_is_told_the_authority_is_unknown() {
    let client = client_config(None, None).unwrap();
    let ends = connect(server(&spec(&pki().server)), client, "localhost").await;
    assert_eq!(
        client_explains(ends),
        "the server's certificate was issued by an unknown authority (not in the trust store)"
    );
}

#[tokio::test]
async fn a_certificate_for_another_host_is_explained_with_the_names_it_has() {
    let ends = connect(
        server(&spec(&pki().wrong_host)),
        trusting_the_ca(None),
        "localhost",
    )
    .await;
    assert_eq!(
        client_explains(ends),
        "the server's certificate is not valid for 'localhost' (it names wrong.example)"
    );
}

#[tokio::test]
async fn an_expired_server_certificate_is_explained_with_its_date() {
    // Loaded at a moment it was valid: the server would refuse it today.
    let config = server_config(&spec(&pki().expired), in_2020()).unwrap();
    let ends = connect(config, trusting_the_ca(None), "localhost").await;
    assert_eq!(
        client_explains(ends),
        "the server's certificate expired on 2021-01-01 00:00:00 UTC"
    );
}

fn needing_client_certificates() -> ServerTlsSpec {
    ServerTlsSpec {
        client_auth: ClientAuth::Need,
        trust: Some(TrustSource::Pem(vec![pki().ca_pem.clone()])),
        ..spec(&pki().server)
    }
}

#[tokio::test]
async fn a_server_needing_client_certificates_refuses_a_client_without_one() {
    let ends = connect(
        server(&needing_client_certificates()),
        trusting_the_ca(None),
        "localhost",
    )
    .await;
    let refused = ends.server.map(|_| ()).expect_err("the server refuses");
    assert_eq!(
        explain(&refused).as_deref(),
        Some("the client presented no certificate and one is required")
    );
    assert_eq!(
        client_explains(Ends {
            server: Err(refused),
            client: ends.client
        }),
        "the server asked for a client certificate and none is configured"
    );
}

#[tokio::test]
async fn a_trusted_client_certificate_is_let_in_and_names_its_holder() {
    let reader = Identity::load(&pem(&pki().client), in_2030()).unwrap();
    let ends = connect(
        server(&needing_client_certificates()),
        trusting_the_ca(Some(reader)),
        "localhost",
    )
    .await;
    let server = ends.server.expect("the server lets the client in");
    let peer = &server
        .get_ref()
        .1
        .peer_certificates()
        .expect("a client certificate")[0];
    assert_eq!(certificate_names(peer), vec!["reader"]);
}

#[tokio::test]
async fn a_server_wanting_client_certificates_lets_a_client_without_one_in() {
    let wanting = ServerTlsSpec {
        client_auth: ClientAuth::Want,
        ..needing_client_certificates()
    };
    let ends = connect(server(&wanting), trusting_the_ca(None), "localhost").await;
    assert!(ends.server.is_ok() && ends.client.is_ok());
}
