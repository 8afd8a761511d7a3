//! A real Heureka server per test, `heureka-testkit`'s, started in-process on a free port with
//! settings that let a client's effects show at once, and a client config with short
//! intervals.

use std::time::Duration;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use heureka_client::{ClientConfig, ClientEvent, EurekaClient, InstanceStatus};
use heureka_testkit::Sent;
use reqwest::Method;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::broadcast;

pub use heureka_testkit::{dead_url, eventually};

heureka_testkit::in_process_server!(InProcess);

pub struct Server {
    pub port: u16,
    http: reqwest::Client,
    server: heureka_testkit::TestServer<InProcess>,
}

impl Server {
    pub async fn start() -> Server {
        Server::start_with(&[]).await
    }

    /// Starts a server with extra Spring-style `--key=value` arguments.
    pub async fn start_with(extra: &[&str]) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Server::start_on(listener, extra).await
    }

    async fn start_on(listener: TcpListener, extra: &[&str]) -> Server {
        let mut args = vec![
            // Reads see writes at once, so the client's view is what is being tested.
            "--eureka.server.use-read-only-response-cache=false",
            // Leases that lapse go quickly, so "kept alive" can be told from "forgotten".
            "--eureka.server.enable-self-preservation=false",
            "--eureka.server.eviction-interval-timer-in-ms=100",
        ];
        args.extend_from_slice(extra);
        let server = heureka_testkit::TestServer::start_on(listener, &args).await;
        Server {
            port: server.port,
            http: reqwest::Client::new(),
            server,
        }
    }

    /// Stops the server and starts a fresh one, with an empty registry, on the same port.
    pub async fn restart(self) -> Server {
        let port = self.port;
        self.stop().await;
        Server::start_at(port).await
    }

    /// Starts a server with an empty registry on `port`, e.g. where one was stopped.
    pub async fn start_at(port: u16) -> Server {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        Server::start_on(listener, &[]).await
    }

    /// Stops the server and waits until it has closed its port.
    pub async fn stop(self) {
        self.server.stop().await;
    }

    pub fn service_url(&self) -> String {
        self.server.service_url()
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/eureka/{path}", self.port)
    }

    /// A request to `path` under the server's `/eureka/`.
    fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method, self.url(path))
    }

    /// The instance as the server shows it, or `None` on 404.
    pub async fn instance(&self, app: &str, id: &str) -> Option<Value> {
        let response = self
            .request(Method::GET, &format!("apps/{app}/{id}"))
            .header("Accept", "application/json")
            .sent()
            .await;
        if response.status() == 404 {
            return None;
        }
        assert_eq!(response.status(), 200);
        let document: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        Some(document["instance"].clone())
    }

    /// Registers an instance through the REST API, as another service would, with a lease of
    /// `duration_secs`; asserts 204.
    pub async fn register(&self, app: &str, id: &str, duration_secs: u32) {
        let body = format!(
            r#"{{"instance":{{"instanceId":"{id}","app":"{app}","hostName":"10.0.0.9","ipAddr":"10.0.0.9",
"status":"UP","port":{{"$":9000,"@enabled":"true"}},"vipAddress":"{vip}",
"dataCenterInfo":{{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}},
"leaseInfo":{{"renewalIntervalInSecs":1,"durationInSecs":{duration_secs}}}}}}}"#,
            vip = app.to_lowercase()
        );
        let response = self
            .request(Method::POST, &format!("apps/{app}"))
            .header("Content-Type", "application/json")
            .body(body)
            .sent()
            .await;
        assert_eq!(response.status(), 204, "register {app}/{id}");
    }

    /// The instance's status as the server shows it; panics if it is not registered.
    pub async fn status(&self, app: &str, id: &str) -> String {
        let instance = self.instance(app, id).await.expect("registered");
        instance["status"].as_str().unwrap().to_owned()
    }

    /// Cancels an instance through the REST API, as it does at shutdown; asserts 200.
    pub async fn cancel(&self, app: &str, id: &str) {
        let response = self
            .request(Method::DELETE, &format!("apps/{app}/{id}"))
            .sent()
            .await;
        assert_eq!(response.status(), 200, "cancel {app}/{id}");
    }

    /// A document the server answers at `path` under `/eureka/`, as JSON; asserts 200.
    pub async fn json(&self, path: &str) -> Value {
        let response = self
            .request(Method::GET, path)
            .header("Accept", "application/json")
            .sent()
            .await;
        assert_eq!(response.status(), 200, "{path}");
        serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
    }

    /// `PUT path` under `/eureka/`, answered as JSON; asserts 200.
    pub async fn put_json(&self, path: &str) -> Value {
        let response = self
            .request(Method::PUT, path)
            .header("Accept", "application/json")
            .sent()
            .await;
        assert_eq!(response.status(), 200, "{path}");
        serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
    }

    /// Puts a status override on an instance; asserts 200.
    pub async fn set_status(&self, app: &str, id: &str, status: &str) {
        let response = self
            .request(
                Method::PUT,
                &format!("apps/{app}/{id}/status?value={status}"),
            )
            .sent()
            .await;
        assert_eq!(response.status(), 200, "status {app}/{id} {status}");
    }
}

/// A client config for `urls` with one-second heartbeats and fetches.
pub fn client_config(urls: Vec<String>, app: &str, id: &str) -> ClientConfig {
    let mut config = ClientConfig::new(urls, app, id, "127.0.0.1", "127.0.0.1", 8080);
    config.lease_renewal_interval = Duration::from_secs(1);
    config.lease_duration = Duration::from_secs(2);
    config.registry_fetch_interval = Duration::from_secs(1);
    config.request_timeout = Duration::from_secs(5);
    config.instance_info_replication_interval = Duration::from_secs(1);
    config.initial_instance_info_replication_interval = Duration::from_secs(1);
    config
}

/// A client of `server` registering `BILLING/b1`, with [`client_config`]'s short intervals,
/// started.
pub async fn billing_client(server: &Server) -> EurekaClient {
    EurekaClient::start(client_config(vec![server.service_url()], "billing", "b1"))
        .await
        .unwrap()
}

/// A client started with `config`, and its events from then on.
pub async fn subscribed(config: ClientConfig) -> (EurekaClient, broadcast::Receiver<ClientEvent>) {
    let client = EurekaClient::start(config).await.unwrap();
    let events = client.subscribe();
    (client, events)
}

/// A client started with `config`, and its events from before its start: its start-up fetch
/// and registration among them.
pub async fn subscribed_from_start(
    config: ClientConfig,
) -> (EurekaClient, broadcast::Receiver<ClientEvent>) {
    let builder = EurekaClient::builder(config);
    let events = builder.subscribe();
    let client = builder.start().await.unwrap();
    (client, events)
}

/// [`billing_client`], and its events from then on.
pub async fn billing_subscribed(
    server: &Server,
) -> (EurekaClient, broadcast::Receiver<ClientEvent>) {
    subscribed(client_config(vec![server.service_url()], "billing", "b1")).await
}

/// Waits for the first event `matches` accepts, skipping others; panics naming `what` if none
/// comes within a bound that only a broken client reaches.
pub async fn wait_for(
    events: &mut broadcast::Receiver<ClientEvent>,
    what: &str,
    matches: impl Fn(&ClientEvent) -> bool,
) -> ClientEvent {
    let found = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match events.recv().await {
                Ok(event) if matches(&event) => return event,
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => panic!("events closed: {what}"),
            }
        }
    })
    .await;
    found.unwrap_or_else(|_| panic!("no event: {what}"))
}

/// Waits for the next event equal to `expected`, skipping others; `what` names it.
pub async fn published(
    events: &mut broadcast::Receiver<ClientEvent>,
    what: &str,
    expected: ClientEvent,
) {
    wait_for(events, what, |event| *event == expected).await;
}

/// Waits for the client's next registration answered 204 that carried `status`: what makes
/// the server show it. Subscribe before the change that causes it, so that it cannot be missed.
pub async fn registration_of(
    events: &mut broadcast::Receiver<ClientEvent>,
    status: InstanceStatus,
) {
    let what = format!("a registration of the {} instance", status.as_str());
    published(events, &what, ClientEvent::Registered { status }).await;
}

/// Waits for the next refresh that changes `app`'s instances in the client's registry copy.
/// Subscribe before the change on the server that causes it, so that it cannot be missed.
pub async fn instances_changed(events: &mut broadcast::Receiver<ClientEvent>, app: &str) {
    let what = format!("a refresh changing the instances of {app}");
    wait_for(
        events,
        &what,
        |event| matches!(event, ClientEvent::InstancesChanged { app: changed } if changed == app),
    )
    .await;
}

/// Waits until a registry refresh that began after this call has finished, so that the copy
/// holds whatever the server held at the call: the second refresh from now on, since the first
/// may have been under way already (refreshes run one after the other).
pub async fn a_refresh_begun_now(client: &EurekaClient) {
    let mut events = client.subscribe();
    for what in ["a refresh", "a refresh begun after the call"] {
        wait_for(&mut events, what, |event| {
            matches!(event, ClientEvent::CacheRefreshed { .. })
        })
        .await;
    }
}

/// An application's health URL on 127.0.0.1 answering `200 UP` or `503 DOWN`, as the test
/// sets it; the listener lives as long as the test's runtime.
pub struct HealthEndpoint {
    pub url: String,
    healthy: Arc<AtomicBool>,
}

impl HealthEndpoint {
    pub async fn start(healthy: bool) -> HealthEndpoint {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/health", listener.local_addr().unwrap());
        let healthy = Arc::new(AtomicBool::new(healthy));
        let answers = healthy.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let healthy = answers.load(Ordering::SeqCst);
                tokio::spawn(answer_once(stream, health_response(healthy)));
            }
        });
        HealthEndpoint { url, healthy }
    }

    pub fn set_healthy(&self, healthy: bool) {
        self.healthy.store(healthy, Ordering::SeqCst);
    }
}

fn health_response(healthy: bool) -> &'static [u8] {
    if healthy {
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 15\r\nconnection: close\r\n\r\n{\"status\":\"UP\"}"
    } else {
        b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: 17\r\nconnection: close\r\n\r\n{\"status\":\"DOWN\"}"
    }
}

/// Reads the request head and writes `response`, closing the connection.
async fn answer_once(mut stream: tokio::net::TcpStream, response: &'static [u8]) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buffer = [0u8; 4096];
    let _ = stream.read(&mut buffer).await;
    let _ = stream.write_all(response).await;
}

/// A URL whose listener answers every request `503 Service Unavailable`, as a Eureka server
/// behind a proxy does while it is down; the listener lives as long as the test's runtime.
pub async fn unavailable_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(answer_once(
                stream,
                b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            ));
        }
    });
    format!("http://127.0.0.1:{port}/eureka/")
}
