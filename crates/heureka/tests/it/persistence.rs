//! Persistence against the real binary (`heureka.persistence.dir`): 10,000 instances, with
//! overrides and metadata, survive a SIGKILL (all those acknowledged before the durability
//! window) and a SIGTERM (all of them); after the restart no instance is asked to register
//! again and none is evicted while it heartbeats, while one that stopped heartbeating is.
//! Damaged stores: the node starts and says what it recovered.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::task::JoinSet;

use heureka_testkit::{eventually, free_port, Sent};

use crate::process::HeurekaProcess;
use crate::support::spring_body;

const INSTANCES: usize = 10_000;
const APPS: usize = 20;
/// Every 100th instance gets an override, every 100th (offset 50) a metadata update.
const EVERY: usize = 100;
/// Requests in flight at once.
const CLIENTS: usize = 16;
/// Short leases, so that "the next lease period" is seconds: renewed every 1 s, expiring 30 s
/// after the last renewal (room for registering 10,000 in a debug build on a loaded machine).
/// A restored lease counts as renewed at the restore: it lives the lease's duration (here
/// longer than the renewal interval plus the 10 s margin).
const RENEWAL_INTERVAL_S: u64 = 1;
const DURATION_S: u64 = 30;

fn key(n: usize) -> (String, String) {
    (format!("APP-{}", n % APPS), format!("i-{n}"))
}

/// A Spring client's registration with this test's short lease.
fn body(app: &str, id: &str) -> String {
    spring_body(app, id).replace(
        r#""renewalIntervalInSecs":30,"durationInSecs":90"#,
        &format!(r#""renewalIntervalInSecs":{RENEWAL_INTERVAL_S},"durationInSecs":{DURATION_S}"#),
    )
}

fn store_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("persistence-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn start(dir: &Path) -> HeurekaProcess {
    let dir = format!("--heureka.persistence.dir={}", dir.display());
    HeurekaProcess::start(&[
        &dir,
        "--eureka.server.enable-self-preservation=false",
        "--eureka.server.eviction-interval-timer-in-ms=500",
    ])
}

/// Sends `requests` (method, path, body) with `CLIENTS` at a time; panics, with the server's
/// log, on any answer but `expect`.
async fn send_all(
    server: &HeurekaProcess,
    requests: Vec<(reqwest::Method, String, String)>,
    expect: u16,
) {
    let client = reqwest::Client::new();
    let base = format!("http://{}/eureka", server.address());
    let queue = Arc::new(std::sync::Mutex::new(requests));
    let mut workers = JoinSet::new();
    for _ in 0..CLIENTS {
        let (client, base, queue) = (client.clone(), base.clone(), queue.clone());
        workers.spawn(async move {
            let mut unexpected = Vec::new();
            loop {
                let Some((method, path, body)) = queue.lock().unwrap().pop() else {
                    return unexpected;
                };
                let response = client
                    .request(method.clone(), format!("{base}{path}"))
                    .header("Content-Type", "application/json")
                    .body(body)
                    .sent()
                    .await;
                let status = response.status().as_u16();
                if status != expect {
                    unexpected.push(format!("{method} {path}: {status}"));
                }
            }
        });
    }
    let mut unexpected = Vec::new();
    while let Some(done) = workers.join_next().await {
        unexpected.extend(done.unwrap());
    }
    assert!(
        unexpected.is_empty(),
        "{} answers were not {expect}, e.g. {:?}; log:\n{}",
        unexpected.len(),
        &unexpected[..unexpected.len().min(5)],
        server.log()
    );
}

/// `method` on `path`, without a body.
fn bare(method: reqwest::Method, path: &str) -> Vec<(reqwest::Method, String, String)> {
    vec![(method, path.to_owned(), String::new())]
}

/// The registration of `ORDERS/id` a Spring client sends.
fn spring_registration(id: &str) -> (reqwest::Method, String, String) {
    let body = spring_body("ORDERS", id);
    (reqwest::Method::POST, "/apps/ORDERS".to_owned(), body)
}

fn registrations(range: std::ops::Range<usize>) -> Vec<(reqwest::Method, String, String)> {
    let register = |(app, id): (String, String)| {
        let body = body(&app, &id);
        (reqwest::Method::POST, format!("/apps/{app}"), body)
    };
    range.map(key).map(register).collect()
}

/// Overrides and metadata updates on every `EVERY`th instance of `range`.
fn overrides_and_metadata(range: std::ops::Range<usize>) -> Vec<(reqwest::Method, String, String)> {
    let mut writes = Vec::new();
    for n in range.step_by(EVERY) {
        let (app, id) = key(n);
        writes.push((
            reqwest::Method::PUT,
            format!("/apps/{app}/{id}/status?value=OUT_OF_SERVICE"),
            String::new(),
        ));
        let (app, id) = key(n + EVERY / 2);
        writes.push((
            reqwest::Method::PUT,
            format!("/apps/{app}/{id}/metadata?zone=z{n}"),
            String::new(),
        ));
    }
    writes
}

fn heartbeats(range: std::ops::Range<usize>) -> Vec<(reqwest::Method, String, String)> {
    let renew =
        |(app, id): (String, String)| bare(reqwest::Method::PUT, &format!("/apps/{app}/{id}"));
    range.map(key).flat_map(renew).collect()
}

/// What a client reads of the registry: the hash code and, per instance of the test's
/// applications, its status, override and metadata.
#[derive(Debug, PartialEq)]
struct Seen {
    hashcode: String,
    instances: BTreeMap<String, (String, String, Value)>,
}

async fn read(server: &HeurekaProcess) -> Seen {
    let url = format!("http://{}/eureka/apps", server.address());
    let body = reqwest::Client::new()
        .get(url)
        .header("Accept", "application/json")
        .sent()
        .await
        .bytes()
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&body).unwrap();
    let applications = &body["applications"];
    let mut instances = BTreeMap::new();
    for application in applications["application"].as_array().unwrap() {
        if !application["name"].as_str().unwrap().starts_with("APP-") {
            continue; // the server's own instance
        }
        for instance in application["instance"].as_array().unwrap() {
            instances.insert(
                instance["instanceId"].as_str().unwrap().to_owned(),
                (
                    instance["status"].as_str().unwrap().to_owned(),
                    instance["overriddenStatus"].as_str().unwrap().to_owned(),
                    instance["metadata"].clone(),
                ),
            );
        }
    }
    Seen {
        hashcode: applications["apps__hashcode"].as_str().unwrap().to_owned(),
        instances,
    }
}

/// A value of the Prometheus exposition, summed over its labels' `filter`.
async fn metric(server: &HeurekaProcess, name: &str, filter: &str) -> f64 {
    let url = format!("http://{}/actuator/prometheus", server.address());
    let text = reqwest::get(url).await.unwrap().text().await.unwrap();
    text.lines()
        .filter(|line| line.starts_with(name) && line.contains(filter))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Waits until every acknowledged write is on disk (`pendingRecords` 0 after a write).
pub(crate) async fn wait_until_durable(server: &HeurekaProcess) {
    let url = format!("http://{}/actuator/health", server.address());
    eventually("every acknowledged write is on disk", || async {
        let health = reqwest::get(&url).await.unwrap().bytes().await.unwrap();
        let health: Value = serde_json::from_slice(&health).unwrap();
        let details = &health["components"]["persistence"]["details"];
        details["pendingRecords"] == 0 && details["lastWrite"].is_i64()
    })
    .await;
}

fn kill(server: &mut HeurekaProcess) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_instances_survive_a_kill_and_a_shutdown_and_keep_their_leases() {
    let dir = store_dir("restart");
    let mut first = start(&dir);
    let t0 = std::time::Instant::now();
    send_all(&first, registrations(0..INSTANCES), 204).await;
    eprintln!("registered {INSTANCES} in {:?}", t0.elapsed());
    send_all(&first, overrides_and_metadata(0..INSTANCES), 200).await;
    let before = read(&first).await;
    assert_eq!(before.instances.len(), INSTANCES);
    assert_eq!(
        before
            .instances
            .values()
            .filter(|i| i.1 == "OUT_OF_SERVICE")
            .count(),
        INSTANCES / EVERY
    );

    // SIGKILL once the window has passed: everything acknowledged is there at the first read.
    wait_until_durable(&first).await;
    kill(&mut first);
    first.wait_for_exit().await.expect("killed");
    let mut second = start(&dir);
    assert_eq!(
        read(&second).await,
        before,
        "the first read after a SIGKILL"
    );
    let restored = format!("registry restored instances={INSTANCES} ");
    assert!(second.log().contains(&restored), "{}", second.log());

    // SIGTERM at once after more writes: a clean shutdown loses none of them.
    send_all(&second, registrations(INSTANCES..INSTANCES + 500), 204).await;
    send_all(
        &second,
        overrides_and_metadata(INSTANCES..INSTANCES + 500),
        200,
    )
    .await;
    let before = read(&second).await;
    second.terminate();
    assert!(second.wait_for_exit().await.expect("exits").success());
    assert!(second.log().contains("persistence: flushed at shutdown"));
    let third = start(&dir);
    assert_eq!(read(&third).await, before, "the first read after a SIGTERM");

    // The next lease period: every instance but one heartbeats; none is asked to register
    // again (a 404 would say so, and `send_all` wants 200) and none is evicted; the one that
    // stopped is, once its restored lease runs out.
    let total = INSTANCES + 500;
    let silent = key(total - 1);
    let period_end = tokio::time::Instant::now() + Duration::from_secs(DURATION_S + 2);
    while tokio::time::Instant::now() < period_end {
        let round = std::time::Instant::now();
        send_all(&third, heartbeats(0..total - 1), 200).await;
        eprintln!("heartbeat round in {:?}", round.elapsed());
    }
    let after = read(&third).await;
    assert_eq!(after.instances.len(), total - 1);
    assert!(
        !after.instances.contains_key(&silent.1),
        "the silent instance was evicted"
    );
    assert_eq!(
        metric(&third, "heureka_registrations_total", "client").await,
        0.0
    );
    assert_eq!(metric(&third, "heureka_evictions_total", "").await, 1.0);
}

#[tokio::test]
async fn a_garbage_store_is_moved_aside_and_the_node_starts_empty() {
    let dir = store_dir("garbage");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("registry.redb"), b"not a database\n".repeat(4096)).unwrap();
    let server = start(&dir);
    assert_eq!(read(&server).await.instances.len(), 0);
    let log = server.log();
    assert!(
        log.contains("the store could not be read and was moved aside"),
        "{log}"
    );
    assert!(log.contains("registry restored instances=0"), "{log}");
}

#[tokio::test]
async fn a_truncated_store_starts_the_node_with_what_it_could_read() {
    let dir = store_dir("truncated");
    let first = start(&dir);
    send_all(&first, registrations(0..2_000), 204).await;
    first.terminate();
    let mut first = first;
    assert!(first.wait_for_exit().await.expect("exits").success());
    let file = dir.join("registry.redb");
    let length = std::fs::metadata(&file).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(length / 2)
        .unwrap();
    let server = start(&dir);
    let restored = read(&server).await.instances.len();
    assert!(restored < 2_000, "{restored} instances from half a file");
    let log = server.log();
    assert!(log.contains("registry restored instances="), "{log}");
    assert!(
        log.contains("moved aside") || log.contains("the store is damaged"),
        "the log says what was lost:\n{log}"
    );
    // Still a working store: what is registered now survives the next restart.
    send_all(&server, registrations(5_000..5_010), 204).await;
    wait_until_durable(&server).await;
    server.terminate();
    let mut server = server;
    assert!(server.wait_for_exit().await.expect("exits").success());
    let again = start(&dir);
    let instances = read(&again).await.instances;
    assert!(instances.contains_key("i-5009"));
}

/// The statuses node `server` holds for ORDERS: (id, status, overriddenStatus); `None` while
/// it still refuses reads during its start-up sync from its peer.
pub(crate) async fn orders(server: &HeurekaProcess) -> Option<Vec<(String, String, String)>> {
    let url = format!("http://{}/eureka/apps/ORDERS", server.address());
    let response = reqwest::Client::new()
        .get(url)
        .header("Accept", "application/json")
        .sent()
        .await;
    if response.status() == 403 && response.headers().contains_key("x-heureka-starting") {
        return None;
    }
    if response.status() == 404 {
        return Some(Vec::new());
    }
    assert!(response.status().is_success(), "{}", response.status());
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    let mut instances: Vec<_> = body["application"]["instance"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let text = |key: &str| i[key].as_str().unwrap().to_owned();
            (text("instanceId"), text("status"), text("overriddenStatus"))
        })
        .collect();
    instances.sort();
    Some(instances)
}

async fn wait_for_orders(server: &HeurekaProcess, expected: &[(&str, &str, &str)]) {
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    let what = format!("{} holds {expected:?}", server.address());
    eventually(&what, || async {
        orders(server).await == Some(expected.clone())
    })
    .await;
}

#[tokio::test]
async fn a_node_restored_from_an_old_store_takes_its_peers_later_cancel_and_override_removal() {
    let dir = store_dir("cluster");
    let (port_a, port_b) = (free_port(), free_port());
    let peer = |port: u16| {
        format!("--eureka.client.service-url.defaultZone=http://127.0.0.1:{port}/eureka/")
    };
    let store = format!("--heureka.persistence.dir={}", dir.display());
    let fast = "--heureka.replication.anti-entropy-interval-ms=500";
    let (to_b, to_a) = (peer(port_b), peer(port_a));
    let a_args = [store.as_str(), to_b.as_str(), fast];
    let mut a = HeurekaProcess::start_on(port_a, &a_args);
    let b = HeurekaProcess::start_on(port_b, &[to_a.as_str(), fast]);
    send_all(&a, ["o1", "o2"].map(spring_registration).to_vec(), 204).await;
    send_all(
        &a,
        bare(
            reqwest::Method::PUT,
            "/apps/ORDERS/o2/status?value=OUT_OF_SERVICE",
        ),
        200,
    )
    .await;
    let both = [
        ("o1", "UP", "UNKNOWN"),
        ("o2", "OUT_OF_SERVICE", "OUT_OF_SERVICE"),
    ];
    wait_for_orders(&b, &both).await;
    wait_until_durable(&a).await;
    a.terminate();
    assert!(a.wait_for_exit().await.expect("exits").success());

    // While A is down, its peer takes the cancel of o1 and the removal of o2's override.
    send_all(&b, bare(reqwest::Method::DELETE, "/apps/ORDERS/o1"), 200).await;
    send_all(
        &b,
        bare(reqwest::Method::DELETE, "/apps/ORDERS/o2/status?value=UP"),
        200,
    )
    .await;
    let later = [("o2", "UP", "UNKNOWN")];
    wait_for_orders(&b, &later).await;

    // A restores the older state, and takes the later writes from B by their stamps; B never
    // takes A's older copies back.
    let a = HeurekaProcess::start_on(port_a, &a_args);
    assert!(
        a.log().contains("registry restored instances=2 "),
        "{}",
        a.log()
    );
    wait_for_orders(&a, &later).await;
    // Twenty reads of B, a poll interval apart, over more than two anti-entropy rounds.
    let reads = std::cell::Cell::new(0);
    eventually("twenty reads of B in a row without o1", || async {
        let seen = orders(&b).await;
        assert_eq!(
            seen,
            Some(vec![(
                "o2".to_owned(),
                "UP".to_owned(),
                "UNKNOWN".to_owned()
            )])
        );
        reads.set(reads.get() + 1);
        reads.get() >= 20
    })
    .await;
}

#[tokio::test]
async fn a_second_node_on_the_same_store_refuses_to_start_and_says_why() {
    let dir = store_dir("shared");
    let first = start(&dir);
    let store = format!("--heureka.persistence.dir={}", dir.display());
    let port = format!("--server.port={}", free_port());
    let second = tokio::process::Command::new(env!("CARGO_BIN_EXE_heureka"))
        .args([store.as_str(), port.as_str(), "--server.address=127.0.0.1"])
        .args(["--eureka.client.register-with-eureka=false"])
        .env_clear()
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let second = tokio::time::timeout(crate::process::PATIENCE, second)
        .await
        .expect("the second node exits")
        .unwrap();
    assert_eq!(second.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(stderr.contains("held open by another process"), "{stderr}");
    // The first node's store was not moved aside.
    assert_eq!(read(&first).await.instances.len(), 0);
    assert!(!std::fs::read_dir(&dir).unwrap().any(|entry| entry
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains("damaged")));
}

/// A small disk: a tmpfs of `size` on `dir`, in a mount namespace of its own that a holder
/// process keeps alive, so that it outlives the nodes started in it (`nsenter`) and a node
/// killed there restarts from the same store. Root (as on CI) needs a mount namespace only,
/// anyone else a user namespace too (`unshare -rm`). When neither can be made the test fails:
/// it exists for this disk, and a skip would hide that it never ran.
struct SmallDisk {
    holder: std::process::Child,
    /// The mount point, as the nodes see it.
    dir: PathBuf,
    /// Whether the holder made a user namespace, which `nsenter` must then enter too.
    user_namespace: bool,
}

impl SmallDisk {
    fn mount(dir: &Path, size: &str) -> SmallDisk {
        use std::io::BufRead;
        std::fs::create_dir_all(dir).unwrap();
        let script = format!(
            "mount -t tmpfs -o size={size} heureka-small-disk \"$0\" && echo mounted && exec cat"
        );
        let mut tried = Vec::new();
        for flags in ["-m", "-rm"] {
            let mut holder = std::process::Command::new(program("unshare"))
                .args([flags, "sh", "-c", &script])
                .arg(dir)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("unshare runs");
            let mut line = String::new();
            let stdout = holder.stdout.take().unwrap();
            // `cat` writes nothing, so the line or the end of output comes at once.
            std::io::BufReader::new(stdout)
                .read_line(&mut line)
                .unwrap();
            if line.trim() == "mounted" {
                return SmallDisk {
                    holder,
                    dir: dir.to_owned(),
                    user_namespace: flags == "-rm",
                };
            }
            let output = holder.wait_with_output().unwrap();
            tried.push(format!(
                "unshare {flags}: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        panic!("no mount namespace for a small tmpfs (root, or user namespaces, are needed): {tried:?}");
    }

    /// `name` on the small disk, as this test sees it (through the holder's root).
    fn here(&self, name: &str) -> PathBuf {
        Path::new(&format!("/proc/{}/root", self.holder.id()))
            .join(self.dir.strip_prefix("/").unwrap())
            .join(name)
    }

    /// A node whose store is on the small disk.
    fn start(&self) -> HeurekaProcess {
        let mut nsenter = std::process::Command::new(program("nsenter"));
        nsenter.args(["-t", &self.holder.id().to_string(), "-m"]);
        if self.user_namespace {
            nsenter.args(["-U", "--preserve-credentials"]);
        }
        nsenter.arg("--").arg(env!("CARGO_BIN_EXE_heureka"));
        let dir = format!("--heureka.persistence.dir={}", self.dir.display());
        HeurekaProcess::start_command(
            nsenter,
            &[
                &dir,
                "--eureka.server.enable-self-preservation=false",
                "--eureka.server.eviction-interval-timer-in-ms=500",
            ],
        )
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // The namespace, and the tmpfs with it, goes with its last process.
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// `name`'s full path on this test's PATH (the nodes run with an empty environment).
fn program(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/bin")])
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.exists())
        .unwrap_or_else(|| panic!("{name} is needed (util-linux)"))
}

/// Fills the disk holding `path` with a file there, until the disk says it is full.
fn fill(path: &Path) {
    use std::io::Write;
    let mut filler = std::fs::File::create(path).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    loop {
        if let Err(error) = filler.write_all(&chunk) {
            assert_eq!(error.raw_os_error(), Some(28), "ENOSPC, not {error}");
            return;
        }
    }
}

/// The `persistence` component of `/actuator/health`.
async fn persistence_health(server: &HeurekaProcess) -> Value {
    let url = format!("http://{}/actuator/health", server.address());
    let health = reqwest::get(&url).await.unwrap().bytes().await.unwrap();
    let health: Value = serde_json::from_slice(&health).unwrap();
    health["components"]["persistence"].clone()
}

/// Prints the node's log if the test fails while it is held (`eventually` says only what never
/// happened).
struct LogOnPanic<'a>(&'a HeurekaProcess);

impl Drop for LogOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("log of {}:\n{}", self.0.address(), self.0.log());
        }
    }
}

#[tokio::test]
async fn a_full_disk_freed_again_loses_nothing_acknowledged() {
    let disk = SmallDisk::mount(&store_dir("full-disk"), "3m");
    let mut server = disk.start();
    let log_on_panic = LogOnPanic(&server);
    send_all(&server, registrations(0..50), 204).await;
    wait_until_durable(&server).await;
    let written_before = persistence_health(&server).await["details"]["lastWrite"].clone();

    // The disk fills: registrations are still acknowledged (they are in memory), the batches
    // fail and the component says so.
    fill(&disk.here("filler"));
    send_all(&server, registrations(50..150), 204).await;
    eventually(
        "the persistence component is DOWN with its error",
        || async {
            let component = persistence_health(&server).await;
            component["status"] == "DOWN" && component["details"]["lastError"].is_string()
        },
    )
    .await;
    send_all(&server, registrations(150..200), 204).await;
    let before = read(&server).await;
    assert_eq!(before.instances.len(), 200);
    // Another attempt on the disk still full (a restart was the only way out before).
    eventually("a second attempt fails too", || async {
        metric(&server, "heureka_persistence_failed_batches_total", "").await >= 2.0
    })
    .await;

    // Freed: the store is reopened and everything pending written, without a restart.
    std::fs::remove_file(disk.here("filler")).unwrap();
    eventually(
        "the persistence component is UP again, nothing pending",
        || async {
            let component = persistence_health(&server).await;
            let details = &component["details"];
            component["status"] == "UP"
                && details["pendingRecords"] == 0
                && details["lastWrite"].is_i64()
                && details["lastWrite"] != written_before
        },
    )
    .await;
    // The log is written by a thread of its own: the line may follow the health's answer.
    server
        .wait_for_log("persistence: the store is written again")
        .await;
    let log = server.log();
    assert_eq!(
        log.matches("a batch did not reach the disk").count(),
        1,
        "the failure is logged once:\n{log}"
    );
    assert_eq!(
        log.matches("persistence: the store is written again")
            .count(),
        1,
        "and the recovery once:\n{log}"
    );

    // Every acknowledged instance is on disk: a SIGKILL loses none.
    drop(log_on_panic);
    kill(&mut server);
    server.wait_for_exit().await.expect("killed");
    let again = disk.start();
    let _log_on_panic = LogOnPanic(&again);
    assert_eq!(read(&again).await, before, "the first read after a SIGKILL");
    assert!(
        again.log().contains("registry restored instances=200 "),
        "{}",
        again.log()
    );
}

/// The instance ids `GET path` lists (a full fetch, JSON), sorted.
async fn ids_at(server: &HeurekaProcess, path: &str) -> Vec<String> {
    let url = format!("http://{}{path}", server.address());
    let response = reqwest::Client::new()
        .get(url)
        .header("Accept", "application/json")
        .sent()
        .await;
    assert_eq!(response.status(), 200, "{path}");
    let apps: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    let mut ids: Vec<String> = apps["applications"]["application"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|app| app["instance"].as_array().unwrap().clone())
        .map(|instance| instance["instanceId"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn each_namespace_comes_back_with_its_own_registry_after_a_restart() {
    let dir = store_dir("namespaces");
    let first = start(&dir);
    let client = reqwest::Client::new();
    for (ns, id) in [("team-a", "a1"), ("team-b", "b1"), ("default", "d1")] {
        let url = format!("http://{}/ns/{ns}/eureka/apps/ORDERS", first.address());
        let response = client
            .post(url)
            .header("Content-Type", "application/json")
            .body(body("ORDERS", id))
            .sent()
            .await;
        assert_eq!(response.status(), 204);
    }
    first.terminate();
    let mut first = first;
    assert!(first.wait_for_exit().await.expect("exits").success());
    let second = start(&dir);
    assert_eq!(ids_at(&second, "/ns/team-a/eureka/apps").await, ["a1"]);
    assert_eq!(ids_at(&second, "/ns/team-b/eureka/apps").await, ["b1"]);
    assert_eq!(ids_at(&second, "/eureka/apps").await, ["d1"]);
}
