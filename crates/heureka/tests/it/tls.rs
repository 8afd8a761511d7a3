//! HTTPS as a user configures it with Spring Boot's keys: what the binary serves, and the
//! start-up errors that keep a port configured for HTTPS from ever serving plain HTTP.

use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

/// Runs the binary to its exit (it must exit: these configurations are refused) and returns
/// its exit code and standard error.
async fn refused(args: &[&str]) -> (i32, String) {
    let output = tokio::time::timeout(
        Duration::from_secs(30),
        Command::new(env!("CARGO_BIN_EXE_heureka"))
            .args(args)
            .arg("--server.port=0")
            .env_clear()
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("a refused configuration exits at once")
    .expect("the binary runs");
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
