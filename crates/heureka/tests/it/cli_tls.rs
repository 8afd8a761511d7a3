//! The command line against a server serving HTTPS (the binary with `server.ssl.*`): what it
//! trusts and presents, and the one line it prints when a certificate is refused.

use std::process::Stdio;

use heureka_testkit::pki::{IdentityFiles, PASSWORD, SERVER_ALIAS};
use tokio::process::Command;

use crate::cli::{heureka_env, Run};
use crate::process::HeurekaProcess;
use crate::tls::{mutual_tls_args, pkcs12_args, pki, start, text};

/// `heureka apps --eureka https://localhost:PORT/eureka/ ARGS`, with `env` and nothing else.
async fn apps(server: &HeurekaProcess, args: &[&str], env: &[(&str, &str)]) -> Run {
    let url = base(server);
    let mut all = vec!["apps", "--eureka", &url];
    all.extend_from_slice(args);
    heureka_env(&all, env).await
}

/// By `localhost`, the name the server's certificate carries.
fn base(server: &HeurekaProcess) -> String {
    format!("https://localhost:{}/eureka/", server.port)
}

fn trusting_the_ca() -> Vec<String> {
    vec![
        "--trust-store".to_owned(),
        text(&pki().trust_p12).to_owned(),
        "--trust-store-password".to_owned(),
        PASSWORD.to_owned(),
    ]
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// A server presenting `identity`'s PKCS12 store.
fn serving(identity: &IdentityFiles) -> HeurekaProcess {
    start(&[
        format!("--server.ssl.key-store={}", text(&identity.p12)),
        format!("--server.ssl.key-store-password={PASSWORD}"),
        format!("--server.ssl.key-alias={SERVER_ALIAS}"),
    ])
}

fn presenting(identity: &IdentityFiles) -> Vec<String> {
    vec![
        "--key-store".to_owned(),
        text(&identity.p12).to_owned(),
        "--key-store-password".to_owned(),
        PASSWORD.to_owned(),
    ]
}

/// The exit code of a server that could not be reached.
const UNREACHABLE: i32 = 3;

#[tokio::test]
async fn apps_are_listed_over_https_with_a_pkcs12_trust_store() {
    let server = start(&pkcs12_args());
    let run = apps(&server, &strs(&trusting_the_ca()), &[]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("APP "), "{}", run.stdout);
}

#[tokio::test]
async fn the_trust_store_may_come_from_the_environment() {
    let server = start(&pkcs12_args());
    let env = [
        ("EUREKA_CLIENT_TLS_TRUST_STORE", text(&pki().trust_p12)),
        ("EUREKA_CLIENT_TLS_TRUST_STORE_PASSWORD", PASSWORD),
    ];
    let run = apps(&server, &[], &env).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[tokio::test]
async fn a_pem_ca_certificate_is_trusted_too() {
    let server = start(&pkcs12_args());
    let run = apps(&server, &["--ca-cert", text(&pki().ca_pem)], &[]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[tokio::test]
async fn without_trust_the_private_ca_is_an_unknown_authority_in_one_line() {
    let server = start(&pkcs12_args());
    let run = apps(&server, &[], &[]).await;
    assert_eq!(run.code, UNREACHABLE, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "heureka: cannot reach {}: the server's certificate was issued by an unknown \
             authority (not in the trust store)\n",
            base(&server)
        )
    );
}

#[tokio::test]
async fn a_certificate_for_another_host_is_not_valid_for_the_name_connected_to() {
    let server = serving(&pki().wrong_host);
    let run = apps(&server, &strs(&trusting_the_ca()), &[]).await;
    assert_eq!(run.code, UNREACHABLE, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "the server's certificate is not valid for 'localhost' (it names wrong.example)"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

#[tokio::test]
async fn a_server_that_needs_a_client_certificate_is_answered_with_the_key_store() {
    let server = start(&mutual_tls_args());
    let mut args = trusting_the_ca();
    args.extend(presenting(&pki().client));
    let run = apps(&server, &strs(&args), &[]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[tokio::test]
async fn a_server_that_needs_a_client_certificate_is_refused_without_one() {
    let server = start(&mutual_tls_args());
    let run = apps(&server, &strs(&trusting_the_ca()), &[]).await;
    assert_eq!(run.code, UNREACHABLE, "{}", run.stderr);
    assert!(run.stderr.contains("client certificate"), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

#[tokio::test]
async fn a_wrong_trust_store_password_exits_2_naming_the_flag_before_any_request() {
    // No server at all: the store is read, and refused, before anything is sent.
    let run = Command::new(env!("CARGO_BIN_EXE_heureka"))
        .args(["apps", "--eureka", "https://localhost:9/eureka/"])
        .args(["--trust-store", text(&pki().trust_p12)])
        .args(["--trust-store-password", "wrong"])
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8(run.stderr).unwrap();
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("heureka: --trust-store-password: "),
        "{stderr}"
    );
}
