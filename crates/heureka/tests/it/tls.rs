//! HTTPS as a user configures it with Spring Boot's keys: what the binary serves, and the
//! start-up errors that keep a port configured for HTTPS from ever serving plain HTTP.

use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use base64::Engine;
use heureka_testkit::pki::{IdentityFiles, TestPki, CLIENT_ALIAS, PASSWORD, SERVER_ALIAS};
use heureka_testkit::{empty_dir, eventually, Sent};
use tokio::process::Command;

use crate::process::HeurekaProcess;
use crate::support::json_status;

/// Runs `command`, with no input, to its end within 30 s (`ends` says why it must end) and
/// returns what it wrote; `runs` says what failing to start means.
async fn output_within_30_s(command: &mut Command, ends: &str, runs: &str) -> Output {
    let output = command.stdin(Stdio::null()).kill_on_drop(true).output();
    tokio::time::timeout(Duration::from_secs(30), output)
        .await
        .expect(ends)
        .expect(runs)
}

/// Runs the binary to its exit (it must exit: these configurations are refused) and returns
/// its exit code and standard error.
async fn refused(args: &[&str]) -> (i32, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_heureka"));
    command.args(args).arg("--server.port=0").env_clear();
    let ends = "a refused configuration exits at once";
    let output = output_within_30_s(&mut command, ends, "the binary runs").await;
    (
        output.status.code().expect("an exit code"),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn ssl_enabled_without_a_certificate_exits_2_naming_the_keys() {
    let (code, stderr) = refused(&["--server.ssl.enabled=true"]).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("server.ssl.key-store"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
}

#[tokio::test]
async fn a_separate_management_port_exits_2() {
    let (code, stderr) = refused(&["--management.server.port=9999"]).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("management.server.port"), "{stderr}");
}

/// The test CA and its certificates, made once for all the tests here.
pub(crate) fn pki() -> &'static TestPki {
    static PKI: OnceLock<TestPki> = OnceLock::new();
    PKI.get_or_init(|| TestPki::create(&empty_dir!().join("pki")))
}

pub(crate) fn text(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// A client that trusts the test CA and nothing else.
fn trusting_client() -> reqwest::ClientBuilder {
    let ca = std::fs::read(&pki().ca_pem).unwrap();
    reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
        .timeout(Duration::from_secs(10))
}

/// A client presenting `identity` as its certificate, trusting the test CA.
fn client_with_certificate(identity: &IdentityFiles) -> reqwest::Client {
    let mut pem = std::fs::read(&identity.cert_pem).unwrap();
    pem.extend(std::fs::read(&identity.key_pem).unwrap());
    trusting_client()
        .identity(reqwest::Identity::from_pem(&pem).unwrap())
        .build()
        .unwrap()
}

async fn status_over_https(
    client: &reqwest::Client,
    server: &HeurekaProcess,
) -> reqwest::Result<u16> {
    let url = format!("https://localhost:{}/eureka/apps", server.port);
    Ok(client
        .get(url)
        .header("Accept", "application/json")
        .send()
        .await?
        .status()
        .as_u16())
}

pub(crate) fn pkcs12_args() -> Vec<String> {
    vec![
        format!("--server.ssl.key-store={}", text(&pki().server.p12)),
        "--server.ssl.key-store-type=PKCS12".to_owned(),
        format!("--server.ssl.key-store-password={PASSWORD}"),
        format!("--server.ssl.key-alias={SERVER_ALIAS}"),
    ]
}

pub(crate) fn start(args: &[String]) -> HeurekaProcess {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    HeurekaProcess::start(&args)
}

/// Asserts a client trusting the test CA is answered 200 over HTTPS.
async fn answers_200_over_https(server: &HeurekaProcess) {
    let client = trusting_client().build().unwrap();
    assert_eq!(status_over_https(&client, server).await.unwrap(), 200);
}

/// Asserts the binary started with `args` exits 2, naming `key` and saying `detail` on stderr.
async fn exits_2_naming(args: &[String], key: &str, detail: &str) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stderr) = refused(&args).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(key), "{stderr}");
    assert!(stderr.contains(detail), "{stderr}");
}

/// [`pkcs12_args`] with the one at `index` replaced by `arg`.
fn pkcs12_args_with(index: usize, arg: &str) -> Vec<String> {
    let mut args = pkcs12_args();
    args[index] = arg.to_owned();
    args
}

#[tokio::test]
async fn a_pkcs12_key_store_serves_https_and_plain_http_is_not_answered() {
    let server = start(&pkcs12_args());
    answers_200_over_https(&server).await;
    let plain = reqwest::get(format!("http://127.0.0.1:{}/eureka/apps", server.port)).await;
    assert!(
        plain.map_or(true, |response| !response.status().is_success()),
        "plain HTTP must not be served on an HTTPS port"
    );
}

#[tokio::test]
async fn a_jks_key_store_serves_https() {
    let Some(jks) = &pki().server.jks else {
        eprintln!("skipped: keytool is not installed, so there is no JKS file");
        return;
    };
    let server = start(&[
        format!("--server.ssl.key-store={}", text(jks)),
        "--server.ssl.key-store-type=JKS".to_owned(),
        format!("--server.ssl.key-store-password={PASSWORD}"),
    ]);
    answers_200_over_https(&server).await;
}

#[tokio::test]
async fn pem_certificate_and_key_serve_https() {
    let server = start(&[
        format!("--server.ssl.certificate={}", text(&pki().server.cert_pem)),
        format!(
            "--server.ssl.certificate-private-key={}",
            text(&pki().server.key_pem)
        ),
    ]);
    answers_200_over_https(&server).await;
}

#[tokio::test]
async fn a_wrong_key_store_password_exits_2_naming_the_key() {
    let args = pkcs12_args_with(2, "--server.ssl.key-store-password=wrong");
    exits_2_naming(&args, "server.ssl.key-store-password", "wrong password").await;
}

#[tokio::test]
async fn a_missing_alias_exits_2_naming_the_key() {
    let args = pkcs12_args_with(3, "--server.ssl.key-alias=nosuch");
    exits_2_naming(&args, "server.ssl.key-alias", "nosuch").await;
}

#[tokio::test]
async fn an_expired_certificate_exits_2_with_its_date() {
    let certificate = format!("--server.ssl.certificate={}", text(&pki().expired.cert_pem));
    let key = format!(
        "--server.ssl.certificate-private-key={}",
        text(&pki().expired.key_pem)
    );
    exits_2_naming(&[certificate, key], "server.ssl.certificate", "2021").await;
}

pub(crate) fn mutual_tls_args() -> Vec<String> {
    let mut args = pkcs12_args();
    args.push("--server.ssl.client-auth=need".to_owned());
    args.push(format!(
        "--server.ssl.trust-certificate={}",
        text(&pki().ca_pem)
    ));
    args
}

#[tokio::test]
async fn mutual_tls_refuses_a_client_without_a_certificate() {
    let server = start(&mutual_tls_args());
    let client = trusting_client().build().unwrap();
    assert!(status_over_https(&client, &server).await.is_err());
}

#[tokio::test]
async fn mutual_tls_serves_a_client_with_a_trusted_certificate() {
    let server = start(&mutual_tls_args());
    let client = client_with_certificate(&pki().client);
    assert_eq!(status_over_https(&client, &server).await.unwrap(), 200);
}

/// Runs `openssl` with `args` in `dir`, failing the test with its stderr.
fn openssl(dir: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("openssl runs");
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A client certificate as `openssl x509 -req` makes it without `-extfile`: X.509 v1, issued by
/// the test CA (which Tomcat would accept).
fn v1_client_identity(dir: &Path) -> IdentityFiles {
    let (ca, ca_key) = (text(&pki().ca_pem), text(&pki().ca_key_pem));
    openssl(
        dir,
        &[
            "req",
            "-new",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "v1.key",
            "-out",
            "v1.csr",
            "-subj",
            "/CN=legacy",
        ],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "v1.csr",
            "-CA",
            ca,
            "-CAkey",
            ca_key,
            "-set_serial",
            "7",
            "-days",
            "30",
            "-out",
            "v1.pem",
        ],
    );
    let shown = openssl(dir, &["x509", "-in", "v1.pem", "-noout", "-text"]);
    assert!(
        shown.contains("Version: 1"),
        "not a v1 certificate: {shown}"
    );
    IdentityFiles {
        cert_pem: dir.join("v1.pem"),
        key_pem: dir.join("v1.key"),
        ..pki().client.clone()
    }
}

/// One handshake by `openssl s_client` presenting `identity`, ended as soon as it is made.
async fn present_with_openssl(server: &HeurekaProcess, identity: &IdentityFiles) {
    let connect = format!("127.0.0.1:{}", server.port);
    let mut command = Command::new("openssl");
    command
        .args(["s_client", "-connect", &connect, "-servername", "localhost"])
        .args([
            "-cert",
            text(&identity.cert_pem),
            "-key",
            text(&identity.key_pem),
        ])
        .args(["-CAfile", text(&pki().ca_pem)]);
    let ends = "s_client ends with its input";
    let output = output_within_30_s(&mut command, ends, "openssl runs").await;
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains("CONNECTED"), "{said}");
}

#[tokio::test]
async fn a_v1_client_certificate_is_refused_and_the_reason_logged_in_one_line_ten_times_a_minute() {
    let v1 = v1_client_identity(&empty_dir!());
    let server = start(&mutual_tls_args());
    for _ in 0..12 {
        // openssl presents it as Java does (rustls, reqwest's TLS, will not even load it).
        present_with_openssl(&server, &v1).await;
    }
    // Written after the refusals' lines, which each connection logs as its handshake ends.
    let client = client_with_certificate(&pki().client);
    let body = heureka_testkit::spring_body("later", "l1");
    let registered = post_over_https(&client, &server, "/apps/LATER", body).await;
    assert_eq!(registered, 204);
    server.wait_for_log("registered instance").await;

    let log = server.log();
    let refusals: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("refused a TLS handshake"))
        .collect();
    assert_eq!(refusals.len(), 10, "ten lines a minute:\n{log}");
    for line in refusals {
        assert!(line.contains("WARN"), "{line}");
        assert!(line.contains("127.0.0.1:"), "the client's address: {line}");
        assert!(
            line.contains("client certificate is X.509 v1; only v3 certificates are accepted"),
            "{line}"
        );
        assert!(line.contains("-extfile"), "what to do: {line}");
    }
}

/// The certificate the server presents to a new connection.
async fn presented_certificate(server: &HeurekaProcess) -> Vec<u8> {
    let client = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .tls_info(true)
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let response = client
        .get(format!("https://127.0.0.1:{}/eureka/apps", server.port))
        .sent()
        .await;
    let info = response
        .extensions()
        .get::<reqwest::tls::TlsInfo>()
        .unwrap();
    info.peer_certificate().unwrap().to_vec()
}

fn der_of(pem_file: &Path) -> Vec<u8> {
    let pem = std::fs::read_to_string(pem_file).unwrap();
    let body: String = pem
        .lines()
        .skip_while(|line| !line.starts_with("-----BEGIN CERTIFICATE"))
        .skip(1)
        .take_while(|line| !line.starts_with("-----END"))
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap()
}

#[tokio::test]
async fn a_bundle_with_reload_on_update_serves_a_replaced_certificate_to_new_connections() {
    let dir = empty_dir!();
    let (certificate, key) = (dir.join("server.pem"), dir.join("server.key"));
    std::fs::copy(&pki().server.cert_pem, &certificate).unwrap();
    std::fs::copy(&pki().server.key_pem, &key).unwrap();
    let server = start(&[
        "--server.ssl.bundle=web".to_owned(),
        format!(
            "--spring.ssl.bundle.pem.web.keystore.certificate={}",
            text(&certificate)
        ),
        format!(
            "--spring.ssl.bundle.pem.web.keystore.private-key={}",
            text(&key)
        ),
        "--spring.ssl.bundle.pem.web.reload-on-update=true".to_owned(),
        "--spring.ssl.bundle.watch.file.quiet-period=200ms".to_owned(),
    ]);
    assert_eq!(
        presented_certificate(&server).await,
        der_of(&pki().server.cert_pem)
    );
    // Another valid certificate and its key, written over the served ones.
    std::fs::copy(&pki().wrong_host.key_pem, &key).unwrap();
    std::fs::copy(&pki().wrong_host.cert_pem, &certificate).unwrap();
    let replaced = der_of(&pki().wrong_host.cert_pem);
    // Real time: the server watches real files on its own clock, in another process.
    eventually(
        "the replaced certificate is served to a new connection",
        || async { presented_certificate(&server).await == replaced },
    )
    .await;
}

#[tokio::test]
async fn a_cluster_replicates_over_https_with_peer_credentials_outside_the_urls() {
    let trust = format!("--eureka.client.tls.trust-store={}", text(&pki().trust_p12));
    let mut args = pkcs12_args();
    args.extend([
        "--eureka.client.tls.enabled=true".to_owned(),
        trust,
        format!("--eureka.client.tls.trust-store-password={PASSWORD}"),
        "--spring.security.user.name=admin".to_owned(),
        "--spring.security.user.password=admin-secret".to_owned(),
        "--heureka.replication.peer-user.name=peer".to_owned(),
        "--heureka.replication.peer-user.password=peer-secret-9".to_owned(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let cluster = HeurekaProcess::start_together_over("https", 3, &args).await;
    let client = trusting_client().build().unwrap();
    let url = |node: &HeurekaProcess, path: &str| {
        format!("https://localhost:{}/eureka/{path}", node.port)
    };
    let body = heureka_testkit::spring_body("ORDERS", "orders-1");
    let registered = client
        .post(url(&cluster.nodes[0], "apps/ORDERS"))
        .basic_auth("admin", Some("admin-secret"))
        .header("Content-Type", "application/json")
        .body(body)
        .sent()
        .await;
    assert_eq!(registered.status().as_u16(), 204);
    for node in &cluster.nodes[1..] {
        // Real time: replication between processes over real sockets.
        eventually("the registration is replicated over HTTPS", || async {
            client
                .get(url(node, "apps/ORDERS/orders-1"))
                .basic_auth("admin", Some("admin-secret"))
                .header("Accept", "application/json")
                .send()
                .await
                .is_ok_and(|response| response.status().as_u16() == 200)
        })
        .await;
        assert!(
            !node.log().contains("peer-secret-9"),
            "no peer password in the log"
        );
    }
}

/// [`mutual_tls_args`], and the client certificate ([`CLIENT_ALIAS`]) mapped to a reader.
fn client_certificate_reader_args() -> Vec<String> {
    let mut args = mutual_tls_args();
    args.extend([
        "--heureka.security.users[0].name=reader".to_owned(),
        format!("--heureka.security.users[0].certificate={CLIENT_ALIAS}"),
        "--heureka.security.users[0].roles=read".to_owned(),
    ]);
    args
}

/// Posts the JSON `body` to `path` under `/eureka` at `localhost` over HTTPS; the status.
async fn post_over_https(
    client: &reqwest::Client,
    server: &HeurekaProcess,
    path: &str,
    body: String,
) -> u16 {
    let url = format!("https://localhost:{}/eureka{path}", server.port);
    json_status(client.post(url), body).await
}

#[tokio::test]
async fn a_certificate_mapped_to_a_reader_may_fetch_but_not_register() {
    let server = start(&client_certificate_reader_args());
    let client = client_with_certificate(&pki().client);
    assert_eq!(status_over_https(&client, &server).await.unwrap(), 200);
    let body = heureka_testkit::spring_body("ORDERS", "orders-1");
    let registered = post_over_https(&client, &server, "/apps/ORDERS", body).await;
    assert_eq!(registered, 403);
}

#[tokio::test]
async fn a_certificate_mapped_to_no_user_is_unauthenticated() {
    let server = start(&client_certificate_reader_args());
    let client = client_with_certificate(&pki().peer);
    assert_eq!(status_over_https(&client, &server).await.unwrap(), 401);
}
