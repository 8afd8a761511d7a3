//! The real `heureka` binary in a process of its own, for what only a process shows: its
//! memory and open files (read from `/proc`), its open-file limit, how it exits on SIGTERM,
//! several started at the same moment.
//! Plus raw-socket helpers for clients that misbehave on purpose.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use heureka_testkit::{empty_dir, free_port, standalone_args};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub use heureka_testkit::PATIENCE;

/// A running `heureka` process; killed when dropped.
pub struct HeurekaProcess {
    child: Child,
    pub port: u16,
    log: Arc<Mutex<String>>,
}

impl HeurekaProcess {
    /// Starts the binary with `--key=value` arguments, on a free port of 127.0.0.1.
    pub fn start(args: &[&str]) -> HeurekaProcess {
        Self::start_command(Command::new(env!("CARGO_BIN_EXE_heureka")), args)
    }

    /// Starts the binary on `port` of 127.0.0.1 (a node restarted where its peers and clients
    /// know it).
    pub fn start_on(port: u16, args: &[&str]) -> HeurekaProcess {
        Self::spawn(Command::new(env!("CARGO_BIN_EXE_heureka")), port, args).serving()
    }

    /// Starts the binary with its open-file limit (soft and hard) set to `limit`.
    pub fn start_with_open_file_limit(limit: u32, args: &[&str]) -> HeurekaProcess {
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_heureka"));
        Self::start_command(command, args)
    }

    /// Starts the binary through `command`, a wrapper that execs the program and arguments
    /// appended to it (e.g. `nsenter` into another mount namespace).
    pub fn start_command(command: Command, args: &[&str]) -> HeurekaProcess {
        Self::spawn(command, free_port(), args).serving()
    }

    /// Starts `n` nodes at the same moment (every process is spawned before any is waited
    /// for), on free ports of 127.0.0.1, each listing the others as peers. `args` are every
    /// node's further `--key=value` arguments.
    ///
    /// Each node reaches the others through a front door this test holds from the start,
    /// which passes a connection on once its node serves. So no node ever finds a peer
    /// refusing connections merely because that peer bound its port a millisecond later:
    /// every node sees every other one starting, as nodes started in the same instant do
    /// (and as a Kubernetes Service that already routes to the pods makes them).
    pub async fn start_together(n: usize, args: &[&str]) -> Together {
        Self::start_together_over("http", n, args).await
    }

    /// [`start_together`](Self::start_together), the peers' URLs with `scheme` (`https` for
    /// nodes serving TLS; the doors pass the bytes through).
    pub async fn start_together_over(scheme: &str, n: usize, args: &[&str]) -> Together {
        let mut doors = Vec::new();
        let mut door_urls = Vec::new();
        for _ in 0..n {
            let door = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            door_urls.push(format!(
                "{scheme}://127.0.0.1:{}/eureka/",
                door.local_addr().unwrap().port()
            ));
            doors.push(door);
        }
        let mut ports: Vec<u16> = Vec::new();
        while ports.len() < n {
            let port = free_port();
            if !ports.contains(&port) {
                ports.push(port);
            }
        }
        let starting: Vec<Starting> = ports
            .iter()
            .enumerate()
            .map(|(i, port)| {
                let others: Vec<&str> = door_urls
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, url)| url.as_str())
                    .collect();
                let service_url = format!(
                    "--eureka.client.service-url.defaultZone={}",
                    others.join(",")
                );
                let mut args = args.to_vec();
                args.push(&service_url);
                Self::spawn(Command::new(env!("CARGO_BIN_EXE_heureka")), *port, &args)
            })
            .collect();
        let mut forwarding = tokio::task::JoinSet::new();
        let mut nodes = Vec::new();
        for (door, starting) in doors.into_iter().zip(starting) {
            // Off the runtime's thread: the doors keep answering meanwhile.
            let node = tokio::task::spawn_blocking(move || starting.serving())
                .await
                .unwrap();
            forwarding.spawn(forward(door, node.address()));
            nodes.push(node);
        }
        Together {
            nodes,
            _forwarding: forwarding,
        }
    }

    fn spawn(mut command: Command, port: u16, args: &[&str]) -> Starting {
        // A standalone node unless `args` name peers, as in the in-process tests.
        let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
        let mut child = command
            .args(&args)
            .arg(format!("--server.port={port}"))
            .args(standalone_args(port, &args))
            // No stray SERVER_PORT or application.yml from the machine running the tests.
            .env_clear()
            .current_dir(empty_dir!())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the heureka binary starts");
        let stdout = child.stdout.take().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        let log_writer = Arc::clone(&log);
        // Reads the log to its end, so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(port) = serving_port(&line) {
                    let _ = port_tx.send(port);
                }
                let mut log = log_writer.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        Starting {
            child,
            log,
            port_rx,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Resident memory, from `/proc/<pid>/status`.
    pub fn rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let line = status
            .lines()
            .find(|line| line.starts_with("VmRSS:"))
            .expect("VmRSS in /proc/<pid>/status");
        let kib: u64 = line
            .split_whitespace()
            .nth(1)
            .and_then(|kib| kib.parse().ok())
            .unwrap();
        kib * 1024
    }

    /// Open file descriptors, from `/proc/<pid>/fd`: the sockets it holds, plus a handful.
    pub fn open_files(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .unwrap()
            .count()
    }

    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Waits (boundedly) until the log contains `text`.
    pub async fn wait_for_log(&self, text: &str) {
        self.wait_for_log_within(text, PATIENCE).await;
    }

    /// [`HeurekaProcess::wait_for_log`], then the first line of the log containing `text`.
    pub async fn wait_for_log_line(&self, text: &str) -> String {
        self.wait_for_log(text).await;
        let log = self.log();
        let line = log.lines().find(|line| line.contains(text));
        line.expect("the line waited for").to_owned()
    }

    /// Waits until the log contains `text`; fails the test, with the log, after `limit`.
    pub async fn wait_for_log_within(&self, text: &str, limit: Duration) {
        let waited = tokio::time::timeout(limit, async {
            while !self.log().contains(text) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        assert!(
            waited.is_ok(),
            "the log never said {text:?} within {limit:?}:\n{}",
            self.log()
        );
    }

    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -TERM");
    }

    /// Waits (boundedly) for the process to exit; `None` if it is still running.
    pub async fn wait_for_exit(&mut self) -> Option<ExitStatus> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while tokio::time::Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        None
    }

    /// `GET path` on a new connection; the status code, or `None` if there was no answer.
    pub async fn get_status(&self, path: &str) -> Option<u16> {
        let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
        let exchange = async {
            let mut stream = TcpStream::connect(self.address()).await.ok()?;
            stream.write_all(request.as_bytes()).await.ok()?;
            status_of(&read_to_end(&mut stream).await)
        };
        tokio::time::timeout(PATIENCE, exchange)
            .await
            .ok()
            .flatten()
    }
}

/// Nodes started together, and the front doors they reach each other through (closed when
/// this is dropped).
pub struct Together {
    pub nodes: Vec<HeurekaProcess>,
    _forwarding: tokio::task::JoinSet<()>,
}

/// Passes every connection to `door` on to `address`, where the node now serves; connections
/// that arrived before it served waited in the door's backlog.
async fn forward(door: tokio::net::TcpListener, address: String) {
    loop {
        let Ok((mut inbound, _)) = door.accept().await else {
            return;
        };
        let address = address.clone();
        tokio::spawn(async move {
            if let Ok(mut outbound) = TcpStream::connect(address).await {
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            }
        });
    }
}

/// A process spawned, not yet known to be serving.
struct Starting {
    child: Child,
    log: Arc<Mutex<String>>,
    port_rx: std::sync::mpsc::Receiver<u16>,
}

impl Starting {
    /// Waits (boundedly) for the line that says where it serves.
    fn serving(self) -> HeurekaProcess {
        let mut process = HeurekaProcess {
            child: self.child,
            port: 0,
            log: self.log,
        };
        process.port = self
            .port_rx
            .recv_timeout(PATIENCE)
            .expect("heureka logs the address it serves on");
        process
    }
}

impl Drop for HeurekaProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serving_port(line: &str) -> Option<u16> {
    if !line.contains("heureka is serving") {
        return None;
    }
    let address = line
        .split_whitespace()
        .find_map(|word| word.strip_prefix("address="))?;
    address.rsplit(':').next()?.parse().ok()
}

/// A new connection to the server, waiting at most `PATIENCE` for the server to take it.
pub async fn connect(server: &HeurekaProcess) -> TcpStream {
    tokio::time::timeout(PATIENCE, TcpStream::connect(server.address()))
        .await
        .expect("the server takes new connections")
        .unwrap()
}

/// The status code of an HTTP response's first line.
pub fn status_of(response: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(response.get(..12)?).ok()?;
    text.strip_prefix("HTTP/1.1 ")?.parse().ok()
}

/// Everything the peer sends until it closes (or resets) the connection, or until `PATIENCE`
/// runs out.
pub async fn read_to_end(stream: &mut TcpStream) -> Vec<u8> {
    let mut received = Vec::new();
    let mut buffer = [0u8; 8192];
    let _ = tokio::time::timeout(PATIENCE, async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    received
}

/// Whether the peer has closed (or reset) the connection: the next read says so at once.
/// `false` if it sends more, or stays silent for `PATIENCE`.
pub async fn closed_by_peer(stream: &mut TcpStream) -> bool {
    let mut buffer = [0u8; 1];
    matches!(
        tokio::time::timeout(PATIENCE, stream.read(&mut buffer)).await,
        Ok(Ok(0) | Err(_))
    )
}

/// `write_all`, giving up after `PATIENCE` (a server that stops reading must not hang a test).
pub async fn write_bounded(stream: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    tokio::time::timeout(PATIENCE, stream.write_all(bytes))
        .await
        .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()))
}

/// Lets this test process open as many sockets as its hard limit allows: the hostile tests
/// hold thousands.
pub fn raise_own_open_file_limit() {
    let _ = rlimit::increase_nofile_limit(u64::MAX);
}
