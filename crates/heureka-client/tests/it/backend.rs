//! Tiny HTTP services to call by name: each answers with its own name, so a test sees which
//! instance served a call, and registers itself in a Heureka server with the metadata a test
//! gives it.

use heureka_client::{DiscoveryHttpClient, EurekaClient, InstanceSource, Selector};
use heureka_testkit::Sent;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::support::{billing_client, Server};

/// Bound on a request this service reads (head and body).
const MAX_REQUEST: usize = 64 * 1024;

/// A service instance on 127.0.0.1. Every answer is `200` with the body
/// `"{name} {METHOD} {path} {body}"`, except a path `/status/N`, answered with status `N`.
pub struct Backend {
    pub name: String,
    pub port: u16,
    accepting: JoinHandle<()>,
}

impl Backend {
    pub async fn start(name: &str) -> Backend {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let own_name = name.to_owned();
        // Connections are served one at a time inside the accepting task and closed after one
        // answer, so stopping that task closes the listener and every connection with it.
        let accepting = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = answer(stream, &own_name).await;
            }
        });
        Backend {
            name: name.to_owned(),
            port,
            accepting,
        }
    }

    /// Kills the instance: its port refuses connections once this returns. The registry is
    /// not told, as when a process dies.
    pub async fn kill(self) {
        self.accepting.abort();
        let _ = self.accepting.await;
    }

    /// Registers this instance as `app`/`name` with `status` and `metadata`; asserts 204.
    pub async fn register(
        &self,
        server: &Server,
        app: &str,
        status: &str,
        metadata: &[(&str, &str)],
    ) {
        self.register_as(server, app, status, "127.0.0.1", metadata)
            .await;
    }

    /// Like [`Backend::register`], with another `hostName` (its `ipAddr` stays 127.0.0.1).
    pub async fn register_as(
        &self,
        server: &Server,
        app: &str,
        status: &str,
        host_name: &str,
        metadata: &[(&str, &str)],
    ) {
        let metadata: serde_json::Map<String, serde_json::Value> = metadata
            .iter()
            .map(|(key, value)| (key.to_string(), serde_json::Value::from(*value)))
            .collect();
        let body = serde_json::json!({"instance": {
            "instanceId": self.name, "app": app, "hostName": host_name, "ipAddr": "127.0.0.1",
            "status": status, "port": {"$": self.port, "@enabled": "true"},
            "vipAddress": app.to_lowercase(), "metadata": metadata,
            "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo", "name": "MyOwn"},
            "leaseInfo": {"renewalIntervalInSecs": 30, "durationInSecs": 90}
        }});
        let response = reqwest::Client::new()
            .post(format!("{}apps/{app}", server.service_url()))
            .json_body(&body)
            .sent()
            .await;
        assert_eq!(response.status(), 204, "register {app}/{}", self.name);
    }
}

/// `.json()` needs reqwest's `json` feature, which the client crate does not enable.
trait JsonBody {
    fn json_body(self, body: &serde_json::Value) -> Self;
}

impl JsonBody for reqwest::RequestBuilder {
    fn json_body(self, body: &serde_json::Value) -> Self {
        self.header("Content-Type", "application/json")
            .body(body.to_string())
    }
}

async fn answer(mut stream: TcpStream, name: &str) -> std::io::Result<()> {
    let mut request = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = find(&request, b"\r\n\r\n") {
            break end + 4;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 || request.len() > MAX_REQUEST {
            return Ok(());
        }
        request.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&request[..head_end]).into_owned();
    let length = head
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(key, _)| key.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_REQUEST);
    while request.len() < head_end + length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        request.extend_from_slice(&chunk[..n]);
    }
    let mut request_line = head.lines().next().unwrap_or("").split(' ');
    let method = request_line.next().unwrap_or("");
    let path = request_line.next().unwrap_or("");
    let body = String::from_utf8_lossy(&request[head_end..]);
    let status = path
        .strip_prefix("/status/")
        .and_then(|code| code.parse::<u16>().ok())
        .unwrap_or(200);
    let text = format!("{name} {method} {path} {body}");
    let response = format!(
        "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// A client of `server` (registered as `BILLING`) whose registry copy holds the `count` `UP`
/// instances of `app` registered before the call.
pub async fn client_seeing(server: &Server, app: &str, count: usize) -> EurekaClient {
    let client = billing_client(server).await;
    // No waiting: `start` fetched the registry, where every instance was registered before.
    assert_eq!(client.instances(app).len(), count, "UP instances of {app}");
    client
}

/// `near` (zone-a, registered `near_status`) and `far` (zone-b, `UP`): two `ORDERS` instances
/// of `server`.
pub async fn near_and_far(server: &Server, near_status: &str) -> (Backend, Backend) {
    let near = Backend::start("near").await;
    let far = Backend::start("far").await;
    near.register(server, "ORDERS", near_status, &[("zone", "zone-a")])
        .await;
    far.register(server, "ORDERS", "UP", &[("zone", "zone-b")])
        .await;
    (near, far)
}

/// A service named `name`, registered `UP` as an `ORDERS` instance of `server` with one
/// `metadata` entry.
pub async fn orders_up(server: &Server, name: &str, metadata: (&str, &str)) -> Backend {
    let backend = Backend::start(name).await;
    backend.register(server, "ORDERS", "UP", &[metadata]).await;
    backend
}

/// Calls by name to the instances of `source` that `selector` picks, over a plain reqwest
/// client.
pub fn calling<S: InstanceSource>(source: S, selector: Selector) -> DiscoveryHttpClient<S> {
    DiscoveryHttpClient::new(reqwest::Client::new(), source, selector)
}

/// Which instance answered: the first word of a [`Backend`]'s body.
pub async fn served_by(response: reqwest::Response) -> String {
    let body = response.text().await.unwrap();
    body.split(' ').next().unwrap().to_owned()
}
