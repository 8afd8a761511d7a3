//! The `heureka` command line (`heureka apps`, `watch`…) as a script runs it: the real binary
//! in its own process, against a server over a real socket, on both wire formats. What is
//! checked is what a script sees: stdout, stderr and the exit code.

use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};

use heureka_testkit::{dead_url, empty_dir, Sent, PATIENCE};

use crate::support::TestServer;
use reqwest::Method;

const FORMATS: [&str; 2] = ["json", "xml"];

/// What one run of the binary printed and returned; also `cli_tls.rs`'s.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// Each stdout line split on whitespace: the table's cells.
    fn rows(&self) -> Vec<Vec<&str>> {
        self.stdout
            .lines()
            .map(|line| line.split_whitespace().collect())
            .collect()
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout))
    }
}

fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_heureka"));
    // No EUREKA_* from the machine running the tests: only what the test gives.
    command
        .args(args)
        .env_clear()
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    command
}

/// Runs `heureka ARGS` with `env` and nothing else; also `cli_tls.rs`'s.
pub(crate) async fn heureka_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let output = tokio::time::timeout(PATIENCE, command(args, env).output())
        .await
        .expect("the command finishes")
        .expect("the binary runs");
    Run {
        code: output.status.code().expect("an exit code, not a signal"),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// Runs `heureka ARGS --eureka URL` against `server`.
async fn heureka(server: &TestServer, args: &[&str]) -> Run {
    let url = format!("{}/", server.base);
    let mut all = args.to_vec();
    all.extend(["--eureka", &url]);
    heureka_env(&all, &[]).await
}

async fn ok(server: &TestServer, args: &[&str]) -> Run {
    let run = heureka(server, args).await;
    assert_eq!(run.code, 0, "heureka {args:?}: {}", run.stderr);
    run
}

/// ORDERS with o1 (UP) and o2 (OUT_OF_SERVICE), BILLING with b1.
async fn registry() -> TestServer {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o1").await;
    server.register("ORDERS", "o2").await;
    server.register("BILLING", "b1").await;
    server.take_out_of_service("ORDERS", "o2").await;
    server
}

async fn instance_json(server: &TestServer, app: &str, id: &str) -> Value {
    let (status, body) = server
        .get_text(&format!("/apps/{app}/{id}"), Some("application/json"))
        .await;
    assert_eq!(status, 200);
    serde_json::from_str::<Value>(&body).unwrap()["instance"].clone()
}

#[tokio::test]
async fn apps_counts_each_application_s_instances_by_status() {
    let server = registry().await;
    for format in FORMATS {
        let run = ok(&server, &["apps", "--format", format]).await;
        assert_eq!(
            run.rows(),
            [
                vec![
                    "APP",
                    "INSTANCES",
                    "UP",
                    "DOWN",
                    "STARTING",
                    "OUT_OF_SERVICE",
                    "UNKNOWN"
                ],
                vec!["BILLING", "1", "1", "0", "0", "0", "0"],
                vec!["ORDERS", "2", "1", "0", "0", "1", "0"],
            ],
            "--format {format}"
        );
    }
}

#[tokio::test]
async fn apps_wide_lists_one_row_per_instance() {
    let server = registry().await;
    for format in FORMATS {
        let run = ok(&server, &["apps", "-w", "--format", format]).await;
        let rows = run.rows();
        assert_eq!(rows[0][..3], ["APP", "ID", "STATUS"]);
        let instances: Vec<(&str, &str, &str, &str)> = rows[1..]
            .iter()
            .map(|row| (row[0], row[1], row[2], row[3]))
            .collect();
        assert_eq!(
            instances,
            [
                ("BILLING", "b1", "UP", "-"),
                ("ORDERS", "o1", "UP", "-"),
                ("ORDERS", "o2", "OUT_OF_SERVICE", "OUT_OF_SERVICE"),
            ],
            "--format {format}"
        );
    }
}

#[tokio::test]
async fn apps_json_is_eureka_s_registry_document_whatever_the_wire_format() {
    let server = registry().await;
    for format in FORMATS {
        let document = ok(&server, &["apps", "--json", "--format", format])
            .await
            .json();
        let apps = document["applications"]["application"].as_array().unwrap();
        let mut ids: Vec<&str> = apps
            .iter()
            .flat_map(|app| app["instance"].as_array().unwrap())
            .map(|instance| instance["instanceId"].as_str().unwrap())
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, ["b1", "o1", "o2"], "--format {format}");
        assert_eq!(
            document["applications"]["apps__hashcode"],
            "OUT_OF_SERVICE_1_UP_2_"
        );
    }
}

#[tokio::test]
async fn app_lists_its_instances_with_host_port_zone_and_last_renewal() {
    let server = registry().await;
    for format in FORMATS {
        let run = ok(&server, &["app", "orders", "--format", format]).await;
        assert_eq!(
            run.rows(),
            [
                vec!["ID", "STATUS", "OVERRIDE", "HOST", "IP", "PORT", "ZONE", "LAST", "RENEW"],
                vec!["o1", "UP", "-", "10.0.0.5", "10.0.0.5", "8080", "-", "0s", "ago"],
                vec![
                    "o2",
                    "OUT_OF_SERVICE",
                    "OUT_OF_SERVICE",
                    "10.0.0.5",
                    "10.0.0.5",
                    "8080",
                    "-",
                    "0s",
                    "ago"
                ],
            ],
            "--format {format}"
        );
        let document = ok(&server, &["app", "ORDERS", "--json", "--format", format])
            .await
            .json();
        assert_eq!(document["application"]["name"], "ORDERS");
    }
}

#[tokio::test]
async fn instance_shows_every_field_and_the_metadata() {
    let server = registry().await;
    for format in FORMATS {
        let run = ok(&server, &["instance", "o2", "--format", format]).await;
        let field = |name: &str| -> String {
            run.stdout
                .lines()
                .find_map(|line| line.strip_prefix(&format!("{name}:")))
                .unwrap_or_else(|| panic!("no {name} in:\n{}", run.stdout))
                .trim()
                .to_owned()
        };
        assert_eq!(field("app"), "ORDERS");
        assert_eq!(field("overriddenStatus"), "OUT_OF_SERVICE");
        assert_eq!(field("vipAddress"), "orders");
        assert_eq!(
            field("healthCheckUrl"),
            "http://10.0.0.5:8080/actuator/health"
        );
        assert_eq!(field("metadata.management.port"), "8080");
        let document = ok(&server, &["instance", "o2", "--json", "--format", format])
            .await
            .json();
        assert_eq!(document["instance"]["status"], "OUT_OF_SERVICE");
    }
}

#[tokio::test]
async fn status_set_puts_an_override_and_status_clear_removes_it() {
    let server = registry().await;
    for format in FORMATS {
        let run = ok(
            &server,
            &[
                "status",
                "set",
                "ORDERS",
                "o1",
                "out_of_service",
                "--format",
                format,
            ],
        )
        .await;
        assert_eq!(
            run.stdout,
            "ORDERS/o1: status override set to OUT_OF_SERVICE\n"
        );
        let instance = instance_json(&server, "ORDERS", "o1").await;
        assert_eq!(instance["overriddenStatus"], "OUT_OF_SERVICE");

        ok(
            &server,
            &[
                "status", "clear", "ORDERS", "o1", "--value", "UP", "--format", format,
            ],
        )
        .await;
        let instance = instance_json(&server, "ORDERS", "o1").await;
        assert_eq!(instance["overriddenStatus"], "UNKNOWN");
        assert_eq!(instance["status"], "UP");
    }
}

#[tokio::test]
async fn status_clear_without_a_value_leaves_the_instance_unknown_as_eureka_does() {
    let server = registry().await;
    ok(&server, &["status", "clear", "ORDERS", "o2"]).await;
    let instance = instance_json(&server, "ORDERS", "o2").await;
    assert_eq!(instance["overriddenStatus"], "UNKNOWN");
    assert_eq!(instance["status"], "UNKNOWN");
}

#[tokio::test]
async fn metadata_set_merges_the_pairs_into_the_instance_s_metadata() {
    let server = registry().await;
    for format in FORMATS {
        let run = ok(
            &server,
            &[
                "metadata",
                "set",
                "ORDERS",
                "o1",
                "zone=east",
                "owner=team a",
                "--json",
                "--format",
                format,
            ],
        )
        .await;
        let answer = run.json();
        assert_eq!(answer["action"], "metadata-set");
        assert_eq!(answer["metadata"]["owner"], "team a");
        let metadata = &instance_json(&server, "ORDERS", "o1").await["metadata"];
        assert_eq!(metadata["zone"], "east");
        assert_eq!(metadata["owner"], "team a");
        assert_eq!(metadata["management.port"], "8080", "merged, not replaced");
    }
    let run = ok(&server, &["app", "ORDERS"]).await;
    assert_eq!(
        run.rows()[1][6],
        "east",
        "the ZONE column reads metadata.zone"
    );
}

#[tokio::test]
async fn deregister_removes_the_instance() {
    let server = registry().await;
    ok(&server, &["deregister", "ORDERS", "o1"]).await;
    let (status, _) = server.get_text("/apps/ORDERS/o1", None).await;
    assert_eq!(status, 404);
    let run = heureka(&server, &["deregister", "ORDERS", "o1"]).await;
    assert_eq!(run.code, 1, "a second deregister finds nothing");
}

#[tokio::test]
async fn an_unknown_application_or_instance_exits_1() {
    let server = registry().await;
    for args in [
        vec!["app", "NOPE"],
        vec!["instance", "nope"],
        vec!["status", "set", "ORDERS", "nope", "UP"],
        vec!["status", "clear", "ORDERS", "nope"],
        vec!["metadata", "set", "NOPE", "o1", "a=b"],
        vec!["deregister", "NOPE", "o1"],
    ] {
        for format in FORMATS {
            let mut args = args.clone();
            args.extend(["--format", format]);
            let run = heureka(&server, &args).await;
            assert_eq!(run.code, 1, "heureka {args:?}: {}", run.stderr);
            assert!(run.stderr.contains("404"), "{}", run.stderr);
            assert_eq!(run.stdout, "");
        }
    }
}

#[tokio::test]
async fn usage_errors_exit_2_and_send_nothing() {
    let server = registry().await;
    let before = server.registry_json().await;
    for args in [
        vec!["status", "set", "ORDERS", "o1", "SLEEPING"],
        vec!["metadata", "set", "ORDERS", "o1", "novalue"],
        vec!["metadata", "set", "ORDERS", "o1"],
        vec!["deregister", "ORDERS"],
        vec!["apps", "--format", "yaml"],
        vec!["apps", "--eureka", "ftp://u:secret@host/"],
        vec!["apps", "--namespace", "a/b"],
        vec!["watch", "--interval", "0"],
        vec!["sidecar", "--app", "x"],
    ] {
        let run = heureka(&server, &args).await;
        assert_eq!(run.code, 2, "heureka {args:?}: {}", run.stderr);
        assert!(!run.stderr.contains("secret"), "{}", run.stderr);
    }
    assert_eq!(server.registry_json().await, before);
}

/// Registers `app`/`id` in Heureka namespace `namespace`, by its URL as a client there has it.
async fn register_in(server: &TestServer, namespace: &str, app: &str, id: &str) {
    let response = server
        .http
        .post(server.root_url(&format!("/ns/{namespace}/eureka/apps/{app}")))
        .header("Content-Type", "application/json")
        .body(heureka_testkit::spring_body(app, id))
        .sent()
        .await;
    assert_eq!(response.status(), 204);
}

#[tokio::test]
async fn namespace_reads_that_namespace_s_registry_only() {
    let server = registry().await;
    register_in(&server, "team-a", "ORDERS", "a1").await;
    let run = ok(&server, &["apps", "-w", "--namespace", "team-a"]).await;
    let ids: Vec<(&str, &str)> = run.rows()[1..].iter().map(|row| (row[0], row[1])).collect();
    assert_eq!(ids, [("ORDERS", "a1")]);
    let run = ok(&server, &["apps", "-w"]).await;
    assert!(!run.stdout.contains("a1"), "{}", run.stdout);
}

#[tokio::test]
async fn namespace_operates_on_that_namespace_s_instances_only() {
    let server = registry().await;
    register_in(&server, "team-a", "ORDERS", "a1").await;
    // The name is matched ignoring case, as the server does.
    let args = ["status", "set", "ORDERS", "a1", "OUT_OF_SERVICE"];
    let mut in_team_a = args.to_vec();
    in_team_a.extend(["--namespace", "Team-A"]);
    ok(&server, &in_team_a).await;
    let response = server
        .http
        .get(server.root_url("/ns/team-a/eureka/apps/ORDERS/a1"))
        .header("Accept", "application/json")
        .sent()
        .await;
    assert_eq!(response.status(), 200);
    let instance: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(instance["instance"]["status"], "OUT_OF_SERVICE");
    // The default namespace has no a1: the same command there finds nothing.
    assert_eq!(heureka(&server, &args).await.code, 1);
}

#[tokio::test]
async fn an_unreachable_server_exits_3() {
    let run = heureka_env(&["apps", "--eureka", &dead_url()], &[]).await;
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("refused"), "{}", run.stderr);
}

#[tokio::test]
async fn the_next_url_is_tried_when_the_first_is_unreachable() {
    let server = registry().await;
    let urls = format!("{},{}/", dead_url(), server.base);
    let run = heureka_env(&["app", "BILLING", "--eureka", &urls], &[]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.rows()[1][0], "b1");
}

#[tokio::test]
async fn the_url_comes_from_eureka_url_or_spring_s_default_zone_variable() {
    let server = registry().await;
    let url = format!("{}/", server.base);
    for variable in ["EUREKA_URL", "EUREKA_CLIENT_SERVICEURL_DEFAULTZONE"] {
        let run = heureka_env(&["app", "BILLING"], &[(variable, &url)]).await;
        assert_eq!(run.code, 0, "{variable}: {}", run.stderr);
    }
    let run = heureka_env(
        &["app", "BILLING"],
        &[
            ("EUREKA_URL", &url),
            ("EUREKA_CLIENT_SERVICEURL_DEFAULTZONE", &dead_url()),
        ],
    )
    .await;
    assert_eq!(run.code, 0, "EUREKA_URL wins: {}", run.stderr);
}

const CREDENTIALS: [&str; 2] = [
    "--spring.security.user.name=eureka",
    "--spring.security.user.password=s3cret",
];

#[tokio::test]
async fn credentials_come_from_the_url_or_the_environment_and_a_refusal_exits_4() {
    let server = TestServer::start(&CREDENTIALS).await;
    let url = format!("{}/", server.base);
    let with_userinfo = url.replace("http://", "http://eureka:s3cret@");
    let wrong = url.replace("http://", "http://eureka:guess@");
    for format in FORMATS {
        let run = heureka_env(&["apps", "--format", format, "--eureka", &url], &[]).await;
        assert_eq!(run.code, 4, "no credentials: {}", run.stderr);
        assert!(run.stderr.contains("401"), "{}", run.stderr);

        let run = heureka_env(&["apps", "--format", format, "--eureka", &wrong], &[]).await;
        assert_eq!(run.code, 4, "a wrong password: {}", run.stderr);
        assert!(!run.stderr.contains("guess"), "{}", run.stderr);

        let run = heureka_env(
            &["apps", "--format", format, "--eureka", &with_userinfo],
            &[],
        )
        .await;
        assert_eq!(run.code, 0, "credentials in the URL: {}", run.stderr);

        let env = [
            ("EUREKA_URL", url.as_str()),
            ("EUREKA_USERNAME", "eureka"),
            ("EUREKA_PASSWORD", "s3cret"),
        ];
        let run = heureka_env(&["apps", "--format", format], &env).await;
        assert_eq!(
            run.code, 0,
            "credentials in the environment: {}",
            run.stderr
        );
    }
}

/// A `watch` running in the background: started, and waited for until it says on stderr that
/// it is watching (after which it misses no change). Its later stderr is read on, so that what
/// it says there (a stream resumed) does not meet a closed pipe, and kept for the failures.
struct Watch {
    child: Child,
    stderr: tokio::task::JoinHandle<String>,
}

impl Watch {
    async fn start(server: &TestServer, args: &[&str], ready: &str) -> Watch {
        Watch::start_at(&format!("{}/", server.base), args, ready).await
    }

    /// A watch of the server at `url` (a proxy in front of one).
    async fn start_at(url: &str, args: &[&str], ready: &str) -> Watch {
        let mut all = vec!["watch"];
        all.extend(args);
        all.extend(["--eureka", url]);
        let mut child = command(&all, &[])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        let said = tokio::time::timeout(PATIENCE, async {
            let mut said = String::new();
            while let Ok(Some(line)) = stderr.next_line().await {
                said.push_str(&line);
                said.push('\n');
                if line.contains(ready) {
                    return Ok(said);
                }
            }
            Err(said)
        })
        .await
        .expect("watch says it is watching");
        let said = match said {
            Ok(said) => said,
            Err(said) => panic!("watch exited without saying {ready:?}:\n{said}"),
        };
        let stderr = tokio::spawn(async move {
            let mut said = said;
            while let Ok(Some(line)) = stderr.next_line().await {
                said.push_str(&line);
                said.push('\n');
            }
            said
        });
        Watch { child, stderr }
    }

    /// Waits for the watch to end (its `--count` reached); its stdout lines.
    async fn lines(self) -> Vec<String> {
        let output = tokio::time::timeout(PATIENCE, self.child.wait_with_output())
            .await
            .expect("watch stops after --count changes")
            .unwrap();
        let said = self.stderr.await.unwrap_or_default();
        assert!(
            output.status.success(),
            "watch exited with {}:\n{said}",
            output.status
        );
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

fn parsed(lines: &[String]) -> Vec<(String, String, String, Option<String>)> {
    lines
        .iter()
        .map(|line| {
            let change: Value = serde_json::from_str(line).unwrap();
            let text = |key: &str| change[key].as_str().map(str::to_owned);
            (
                text("action").unwrap(),
                text("app").unwrap(),
                text("id").unwrap(),
                text("event"),
            )
        })
        .collect()
}

/// Registers BILLING/b1 and ORDERS/o1, then sets o1 DOWN and cancels it: what the watches of
/// ORDERS below print as three changes.
async fn three_changes_of_orders(server: &TestServer) {
    server.register("BILLING", "b1").await;
    server.register("ORDERS", "o1").await;
    assert_eq!(server.put("/apps/ORDERS/o1/status?value=DOWN").await, 200);
    assert_eq!(server.delete("/apps/ORDERS/o1").await, 200);
}

#[tokio::test]
async fn watch_prints_changes_from_heureka_s_push() {
    let server = TestServer::start(&[]).await;
    let watch = Watch::start(&server, &["orders", "--count", "3", "--json"], "/push").await;
    three_changes_of_orders(&server).await;
    let change = |action: &str| {
        (
            action.to_owned(),
            "ORDERS".to_owned(),
            "o1".to_owned(),
            None,
        )
    };
    assert_eq!(
        parsed(&watch.lines().await),
        [change("ADDED"), change("MODIFIED"), change("DELETED")],
        "BILLING is filtered out"
    );
}

#[tokio::test]
async fn watch_resumes_a_cut_push_stream_without_losing_a_change() {
    let server = TestServer::start(&[]).await;
    let proxy = heureka_testkit::Proxy::to(server.port).await;
    let watch = Watch::start_at(&proxy.service_url, &["--count", "3", "--json"], "/push").await;

    proxy.cut();
    // Made while the watch is cut off (it waits a second before it connects again).
    server.register("ORDERS", "o1").await;
    assert_eq!(server.put("/apps/ORDERS/o1/status?value=DOWN").await, 200);
    assert_eq!(server.delete("/apps/ORDERS/o1").await, 200);

    let change = |action: &str| {
        (
            action.to_owned(),
            "ORDERS".to_owned(),
            "o1".to_owned(),
            None,
        )
    };
    assert_eq!(
        parsed(&watch.lines().await),
        [change("ADDED"), change("MODIFIED"), change("DELETED")],
        "each change once, in order: the stream resumed where it broke"
    );
}

#[tokio::test]
async fn watch_prints_changes_from_heureka_s_event_stream_when_push_is_off() {
    let server = TestServer::start(&["--heureka.push.enabled=false"]).await;
    let watch = Watch::start(&server, &["orders", "--count", "3", "--json"], "/events").await;
    three_changes_of_orders(&server).await;
    let change = |action: &str, event: &str| {
        (
            action.to_owned(),
            "ORDERS".to_owned(),
            "o1".to_owned(),
            Some(event.to_owned()),
        )
    };
    assert_eq!(
        parsed(&watch.lines().await),
        [
            change("ADDED", "registered"),
            change("MODIFIED", "status-changed"),
            change("DELETED", "cancelled"),
        ],
        "BILLING is filtered out"
    );
}

#[tokio::test]
async fn watch_prints_one_readable_line_per_change() {
    // From the push, and (with push off) from the event stream, which also names the event.
    for (args, ready, event) in [
        (&[][..], "/push", None),
        (
            &["--heureka.push.enabled=false"][..],
            "/events",
            Some("[registered]"),
        ),
    ] {
        let server = TestServer::start(args).await;
        let watch = Watch::start(&server, &["--count", "1"], ready).await;
        server.register("ORDERS", "o1").await;
        let lines = watch.lines().await;
        let cells: Vec<&str> = lines[0].split_whitespace().collect();
        let expected: Vec<&str> = ["ADDED", "ORDERS", "o1", "UP"]
            .into_iter()
            .chain(event)
            .collect();
        assert_eq!(cells[1..], expected, "{ready}");
        assert!(
            cells[0].ends_with('Z'),
            "an RFC 3339 time in UTC: {}",
            cells[0]
        );
    }
}

/// One change seen by a polling watch, each in a watch of its own: changes between two polls
/// are coalesced, so one change per watch keeps what is printed certain.
async fn polled_change(server: &TestServer, format: &str) -> Watch {
    let args = [
        "--poll",
        "--interval",
        "0.1",
        "--count",
        "1",
        "--json",
        "--format",
        format,
    ];
    Watch::start(server, &args, "watching by polling").await
}

#[tokio::test]
async fn watch_polls_the_delta_for_additions_changes_and_removals_on_json_and_xml() {
    let server = registry().await;
    for format in FORMATS {
        let id = format!("s-{format}");
        let watch = polled_change(&server, format).await;
        server.register("SHIPPING", &id).await;
        let added = watch.lines().await;

        let watch = polled_change(&server, format).await;
        let path = format!("/apps/SHIPPING/{id}");
        assert_eq!(server.put(&format!("{path}/status?value=DOWN")).await, 200);
        let modified = watch.lines().await;

        let watch = polled_change(&server, format).await;
        assert_eq!(server.delete(&path).await, 200);
        let deleted = watch.lines().await;

        let change = |action: &str| (action.to_owned(), "SHIPPING".to_owned(), id.clone(), None);
        assert_eq!(parsed(&added), [change("ADDED")], "--format {format}");
        assert_eq!(parsed(&modified), [change("MODIFIED")], "--format {format}");
        assert_eq!(parsed(&deleted), [change("DELETED")], "--format {format}");
        let status: Value = serde_json::from_str(&modified[0]).unwrap();
        assert_eq!(status["status"], "DOWN");
    }
}

#[tokio::test]
async fn the_server_s_help_mentions_the_subcommands_and_each_has_its_own() {
    let run = heureka_env(&["--help"], &[]).await;
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.starts_with("heureka "),
        "the server's help is unchanged"
    );
    assert!(run.stdout.contains("heureka apps --help"), "{}", run.stdout);
    for listed in heureka_cli::SUBCOMMANDS {
        assert!(
            run.stdout.contains(&format!("|{listed}|"))
                || run.stdout.contains(&format!("|{listed} "))
                || run.stdout.contains(&format!(" {listed}|")),
            "the server's help lists {listed}: {}",
            run.stdout
        );
    }
    for subcommand in [
        "apps",
        "app",
        "instance",
        "status",
        "metadata",
        "deregister",
        "regions",
        "watch",
    ] {
        let run = heureka_env(&[subcommand, "--help"], &[]).await;
        assert_eq!(run.code, 0, "{subcommand} --help");
        assert!(
            run.stdout.contains("Exit codes: 0 ok, 1 not found"),
            "{}",
            run.stdout
        );
    }
}

/// An application's health URL on 127.0.0.1 that answers `200` or `503` as the test sets it;
/// the listener lives as long as the test's runtime.
struct Health {
    url: String,
    healthy: Arc<AtomicBool>,
}

impl Health {
    async fn start(healthy: bool) -> Health {
        Health::start_on(0, healthy).await
    }

    /// An application that starts listening on `port` now.
    async fn start_on(port: u16, healthy: bool) -> Health {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        let url = format!("http://{}/health", listener.local_addr().unwrap());
        let healthy = Arc::new(AtomicBool::new(healthy));
        let answers = healthy.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let response: &[u8] = if answers.load(Ordering::SeqCst) {
                    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nUP"
                } else {
                    b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 4\r\nconnection: close\r\n\r\nDOWN"
                };
                tokio::spawn(async move {
                    // The request head fits one read; the answer does not depend on it.
                    let mut head = [0u8; 4096];
                    let _ = stream.read(&mut head).await;
                    let _ = stream.write_all(response).await;
                });
            }
        });
        Health { url, healthy }
    }

    fn set_healthy(&self, healthy: bool) {
        self.healthy.store(healthy, Ordering::SeqCst);
    }
}

/// A `heureka sidecar` for `PYAPP/pyapp-1` on port 8000, asking `health` every second unless
/// `extra` says otherwise.
struct Sidecar {
    child: Child,
}

impl Sidecar {
    fn start(server: &TestServer, health: &str, extra: &[&str]) -> Sidecar {
        let url = format!("{}/", server.base);
        let mut args = vec![
            "sidecar",
            "--app",
            "pyapp",
            "--port",
            "8000",
            "--host",
            "127.0.0.1",
            "--ip",
            "127.0.0.1",
            "--health-url",
            health,
            "--eureka",
            &url,
            "--eureka.instance.instance-id=pyapp-1",
        ];
        if !extra.contains(&"--health-interval") {
            args.extend(["--health-interval", "1"]);
        }
        args.extend(extra);
        // An empty working directory: the sidecar reads ./application.yml.
        let child = command(&args, &[])
            .current_dir(empty_dir!())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        Sidecar { child }
    }

    /// SIGTERM, then the exit code and what it logged.
    async fn terminate(self) -> (i32, String) {
        let pid = self.child.id().expect("still running").to_string();
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        assert!(status.success(), "kill -TERM {pid}");
        let output = tokio::time::timeout(PATIENCE, self.child.wait_with_output())
            .await
            .expect("the sidecar exits after SIGTERM")
            .unwrap();
        let log = String::from_utf8_lossy(&output.stderr).into_owned();
        let code = output
            .status
            .code()
            .unwrap_or_else(|| panic!("killed by a signal, not exited:\n{log}"));
        (code, log)
    }
}

/// The registered status of PYAPP/pyapp-1, `None` when it is not registered.
async fn pyapp_status(server: &TestServer) -> Option<String> {
    let (code, body) = server
        .get_text("/apps/PYAPP/pyapp-1", Some("application/json"))
        .await;
    (code == 200).then(|| {
        let document: Value = serde_json::from_str(&body).unwrap();
        document["instance"]["status"].as_str().unwrap().to_owned()
    })
}

/// Polls until PYAPP/pyapp-1 is registered with `status`, for at most [`PATIENCE`].
async fn until_pyapp_is(server: &TestServer, status: &str) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let now = pyapp_status(server).await;
        if now.as_deref() == Some(status) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "PYAPP/pyapp-1 never {status}; last {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn sidecar_registers_the_app_up_with_its_flags_and_spring_keys() {
    let server = TestServer::start(&[]).await;
    let health = Health::start(true).await;
    let sidecar = Sidecar::start(
        &server,
        &health.url,
        &["--eureka.instance.metadata-map.version=canary"],
    );

    until_pyapp_is(&server, "UP").await;
    let instance = instance_json(&server, "PYAPP", "pyapp-1").await;
    assert_eq!(instance["port"]["$"], 8000);
    assert_eq!(instance["hostName"], "127.0.0.1");
    assert_eq!(instance["healthCheckUrl"], health.url.as_str());
    assert_eq!(instance["metadata"]["version"], "canary");
    sidecar.terminate().await;
}

/// A sidecar for an app whose health URL answers `healthy` shows the app as `shown[0]`, and
/// once the URL's answer turns, as `shown[1]`.
async fn the_app_follows_its_health_url(healthy: bool, shown: [&str; 2]) {
    let server = TestServer::start(&[]).await;
    let health = Health::start(healthy).await;
    let sidecar = Sidecar::start(&server, &health.url, &[]);
    until_pyapp_is(&server, shown[0]).await;

    health.set_healthy(!healthy);
    until_pyapp_is(&server, shown[1]).await;
    sidecar.terminate().await;
}

#[tokio::test]
async fn sidecar_reports_the_app_down_while_its_health_url_fails_and_keeps_it_registered() {
    // Registered and DOWN: `until_pyapp_is` does not accept an instance that is gone.
    the_app_follows_its_health_url(true, ["UP", "DOWN"]).await;
}

#[tokio::test]
async fn sidecar_brings_the_app_back_up_when_its_health_url_recovers() {
    the_app_follows_its_health_url(false, ["DOWN", "UP"]).await;
}

#[tokio::test]
async fn sidecar_cancels_the_registration_on_sigterm_and_exits_0() {
    let server = TestServer::start(&[]).await;
    let health = Health::start(true).await;
    let sidecar = Sidecar::start(&server, &health.url, &[]);
    until_pyapp_is(&server, "UP").await;

    let (code, log) = sidecar.terminate().await;
    assert_eq!(code, 0, "{log}");
    // Gone at once: the cancel was answered before the sidecar exited.
    assert_eq!(pyapp_status(&server).await, None, "{log}");
}

#[tokio::test]
async fn sidecar_exits_3_when_the_server_is_unreachable_at_start() {
    let health = Health::start(true).await;
    let url = dead_url();
    let run = heureka_env(
        &[
            "sidecar",
            "--app",
            "pyapp",
            "--port",
            "8000",
            "--health-url",
            &health.url,
            "--eureka",
            &url,
        ],
        &[],
    )
    .await;
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("sidecar"), "{}", run.stderr);
}

#[tokio::test]
async fn sidecar_sigterm_while_starting_still_exits_0_with_nothing_left_registered() {
    // A health URL that takes the request and never answers: the first health check, which
    // comes before the first registration, hangs for the whole --health-timeout.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hanging = format!("http://{}/health", listener.local_addr().unwrap());
    let (asked, mut first_ask) = tokio::sync::mpsc::channel(1);
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
            let _ = asked.try_send(());
        }
    });
    let server = TestServer::start(&[]).await;
    let sidecar = Sidecar::start(
        &server,
        &hanging,
        &["--health-interval", "3", "--health-timeout", "3"],
    );
    tokio::time::timeout(PATIENCE, first_ask.recv())
        .await
        .expect("the sidecar asks the health URL");

    let (code, log) = sidecar.terminate().await;
    assert_eq!(code, 0, "{log}");
    assert_eq!(pyapp_status(&server).await, None, "{log}");
}

#[tokio::test]
async fn sidecar_started_before_its_app_listens_reports_it_up_within_seconds_of_its_first_answer() {
    let server = TestServer::start(&[]).await;
    let port = heureka_testkit::free_port();
    let url = format!("http://127.0.0.1:{port}/health");
    // A health round a minute: only the second-by-second asking while DOWN can report UP.
    let sidecar = Sidecar::start(&server, &url, &["--health-interval", "60"]);
    until_pyapp_is(&server, "DOWN").await;

    let _app = Health::start_on(port, true).await;

    until_pyapp_is(&server, "UP").await;
    let (code, _) = sidecar.terminate().await;
    assert_eq!(code, 0);
}

/// A registry fetch as a consumer calling itself `agent`.
async fn fetch_as(server: &TestServer, agent: &str) {
    let response = server
        .request(Method::GET, "/apps/delta")
        .header("Accept", "application/json")
        .header("User-Agent", agent)
        .sent()
        .await;
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn drain_exits_0_once_every_consumer_fetched_the_change_and_can_deregister() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o1").await;
    fetch_as(&server, "caller").await;
    let url = format!("{}/", server.base);
    let drain = command(
        &[
            "drain",
            "ORDERS",
            "o1",
            "--timeout",
            "20",
            "--deregister",
            "--eureka",
            &url,
        ],
        &[],
    )
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();
    // The consumer goes on fetching, as a client does; one of its fetches holds the drain.
    let fetching = async {
        loop {
            fetch_as(&server, "caller").await;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    let output = tokio::select! {
        output = drain.wait_with_output() => output.unwrap(),
        () = fetching => unreachable!(),
    };

    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("confirmed") && stdout.contains("caller"),
        "{stdout}"
    );
    assert!(stdout.contains("ORDERS/o1: deregistered"), "{stdout}");
    let (code, _) = server.get_text("/apps/ORDERS/o1", None).await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn drain_exits_5_at_its_timeout_naming_the_consumer_that_stopped_fetching() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o1").await;
    fetch_as(&server, "stopped").await;

    let run = heureka(
        &server,
        &["drain", "ORDERS", "o1", "--timeout", "2", "--deregister"],
    )
    .await;

    assert_eq!(run.code, 5, "{}", run.stderr);
    assert!(
        run.stdout.contains("NOT CONFIRMED") && run.stdout.contains("stopped"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("not deregistered"), "{}", run.stderr);
    let (code, body) = server
        .get_text("/apps/ORDERS/o1", Some("application/json"))
        .await;
    assert_eq!(code, 200);
    assert!(body.contains("OUT_OF_SERVICE"), "{body}");
}

#[tokio::test]
async fn drain_after_heureka_apps_lists_that_read_apart_and_does_not_wait_for_it() {
    let server = TestServer::start(&[]).await;
    server.register("ORDERS", "o1").await;
    server.register("ORDERS", "o2").await;
    ok(&server, &["apps"]).await;

    let run = heureka(&server, &["drain", "ORDERS", "o1", "--timeout", "10"]).await;

    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let read = run
        .stdout
        .lines()
        .find(|line| line.contains("heureka-cli/"))
        .unwrap_or_else(|| panic!("the CLI's read is listed: {}", run.stdout));
    assert!(read.starts_with("one-off read"), "{}", run.stdout);
    assert!(!run.stdout.contains("NOT CONFIRMED"), "{}", run.stdout);

    // The JSON progress lists it apart too.
    let run = heureka(
        &server,
        &["drain", "ORDERS", "o2", "--timeout", "10", "--json"],
    )
    .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let progress = run.json();
    assert_eq!(progress["consumers"], serde_json::json!([]), "{progress}");
    let readers = progress["readers"].as_array().unwrap();
    assert!(
        readers[0]["agent"]
            .as_str()
            .unwrap()
            .starts_with("heureka-cli/"),
        "{progress}"
    );
}

#[tokio::test]
async fn drain_of_an_unknown_instance_exits_1() {
    let server = TestServer::start(&[]).await;

    let run = heureka(&server, &["drain", "ORDERS", "nope"]).await;

    assert_eq!(run.code, 1, "{}", run.stderr);
}

/// The contract's `GET {base}/regions` document: us-west fetched 4 s ago, eu-west never.
const REGIONS_DOCUMENT: &str = r#"{"region":"us-east-1","fallback":true,"regions":[
{"name":"us-west","url":"http://west:8761/eureka/","state":"ready","lastSuccess":1733400000000,
 "lastAttempt":1733400000000,"lagMs":4000,"staleAfterMs":600000,"applications":3,"instances":12,
 "error":null,"fetches":{"full":1,"delta":10,"mismatches":0,"failures":0}},
{"name":"eu-west","url":"http://eu:8761/eureka/","state":"starting","lastSuccess":null,
 "lastAttempt":1733400000000,"lagMs":null,"staleAfterMs":600000,"applications":0,"instances":0,
 "error":"connection refused","fetches":{"full":0,"delta":0,"mismatches":0,"failures":2}}]}"#;

/// A server answering `GET /eureka/regions` with [`REGIONS_DOCUMENT`] and anything else 404;
/// its service URL.
async fn regions_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/eureka/", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                // The request head fits one read.
                let mut head = [0u8; 4096];
                let read = stream.read(&mut head).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&head[..read]).into_owned();
                let response = if head.starts_with("GET /eureka/regions ") {
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                         content-length: {}\r\nconnection: close\r\n\r\n{REGIONS_DOCUMENT}",
                        REGIONS_DOCUMENT.len()
                    )
                } else {
                    "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                        .to_owned()
                };
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    url
}

#[tokio::test]
async fn regions_prints_one_line_per_region_and_the_last_error() {
    let url = regions_server().await;
    let run = heureka_env(&["regions", "--eureka", &url], &[]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows = run.rows();
    assert_eq!(
        rows[0],
        [
            "REGION",
            "STATE",
            "APPS",
            "INSTANCES",
            "LAST-SUCCESS",
            "LAG",
            "URL"
        ]
    );
    assert_eq!(
        rows[1],
        [
            "us-west",
            "ready",
            "3",
            "12",
            "4s",
            "ago",
            "4.0",
            "http://west:8761/eureka/"
        ]
    );
    assert_eq!(
        rows[2],
        [
            "eu-west",
            "starting",
            "0",
            "0",
            "-",
            "-",
            "http://eu:8761/eureka/"
        ]
    );
    assert_eq!(
        run.stdout.lines().nth(3),
        Some("eu-west: last fetch failed: connection refused")
    );
}

#[tokio::test]
async fn regions_json_is_the_servers_document() {
    let url = regions_server().await;
    let run = heureka_env(&["regions", "--json", "--eureka", &url], &[]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let expected: Value = serde_json::from_str(REGIONS_DOCUMENT).unwrap();
    assert_eq!(run.json(), expected);
}
