//! A client fetching remote regions, against a scripted Eureka server on a real socket that
//! records each request line and answers `apps` and `apps/delta` with one local and one
//! remote-region instance of ORDERS: what the fetches ask for (`?regions=` on both, as the Java
//! client sends it), that the push is not asked for, and which region's instances are offered.
//! The server side of remote regions is tested with the server.

use std::time::Duration;

use heureka_client::{ClientConfig, EurekaClient, Instance, InstanceStatus};
use heureka_core::{Application, Applications};
use heureka_wire::{encode_applications, Format};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use crate::support::client_config;

/// The scripted server: the request lines it received, in order.
struct Scripted {
    requests: mpsc::UnboundedReceiver<String>,
    url: String,
}

impl Scripted {
    async fn start() -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/eureka/", listener.local_addr().unwrap());
        let (sender, requests) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((connection, _)) = listener.accept().await {
                tokio::spawn(answer(connection, sender.clone()));
            }
        });
        Scripted { requests, url }
    }

    /// The next request line (`GET /eureka/apps?regions=eu-west HTTP/1.1`).
    async fn next(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(10), self.requests.recv())
            .await
            .expect("a request within 10 s")
            .expect("the server runs")
    }
}

/// Answers each request on one connection: the registry to `apps`, an empty delta with the
/// same hash to `apps/delta`, 404 to anything else.
async fn answer(mut connection: TcpStream, requests: mpsc::UnboundedSender<String>) {
    loop {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            if connection.read(&mut byte).await.unwrap_or(0) == 0 {
                return;
            }
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head).into_owned();
        let line = head.lines().next().unwrap_or_default().to_owned();
        let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
        let _ = requests.send(line);
        let (status, body) = if path.starts_with("/eureka/apps/delta") {
            ("200 OK", registry(false))
        } else if path.starts_with("/eureka/apps") {
            ("200 OK", registry(true))
        } else {
            ("404 Not Found", Vec::new())
        };
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        if connection.write_all(response.as_bytes()).await.is_err()
            || connection.write_all(&body).await.is_err()
        {
            return;
        }
    }
}

/// ORDERS with `near` in the local region (zone us-east-1a) and `far` in eu-west (dublin-1),
/// both UP; as a delta, nothing changed.
fn registry(full: bool) -> Vec<u8> {
    let instance = |id: &str, zone: &str| {
        let mut instance = Instance::new("ORDERS", id, id, "127.0.0.1", 8080);
        instance.status = InstanceStatus::Up;
        instance.metadata.insert("zone".to_owned(), zone.to_owned());
        instance
    };
    let instances = if full {
        vec![instance("near", "us-east-1a"), instance("far", "dublin-1")]
    } else {
        Vec::new()
    };
    let applications = Applications {
        versions_delta: 1,
        apps_hashcode: "UP_2_".to_owned(),
        applications: vec![Application {
            name: "ORDERS".to_owned(),
            instances,
        }],
    };
    encode_applications(&applications, Format::Json)
}

/// A reading client in us-east-1 fetching eu-west (zone dublin-1), push left on.
fn fetching_eu_west(url: &str) -> ClientConfig {
    let mut config = client_config(vec![url.to_owned()], "billing", "b1");
    config.register_with_eureka = false;
    config.fetch_remote_regions_registry = vec!["eu-west".to_owned()];
    config
        .availability_zones
        .insert("eu-west".to_owned(), vec!["dublin-1".to_owned()]);
    config
}

#[tokio::test]
async fn full_and_delta_fetches_name_the_remote_regions_and_the_push_is_not_asked_for() {
    let mut server = Scripted::start().await;
    let client = EurekaClient::start(fetching_eu_west(&server.url))
        .await
        .unwrap();
    assert_eq!(
        server.next().await,
        "GET /eureka/apps?regions=eu-west HTTP/1.1"
    );
    // The push would be asked for at once after the start; the next request is the periodic
    // delta, a second later.
    assert_eq!(
        server.next().await,
        "GET /eureka/apps/delta?regions=eu-west HTTP/1.1"
    );
    client.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_local_regions_instances_are_offered_and_the_remote_ones_on_request() {
    let server = Scripted::start().await;
    let client = EurekaClient::start(fetching_eu_west(&server.url))
        .await
        .unwrap();
    let ids = |instances: Vec<Instance>| -> Vec<String> {
        instances.iter().map(|i| i.id().to_owned()).collect()
    };
    assert_eq!(ids(client.instances("ORDERS")), ["near"]);
    assert_eq!(
        ids(client.instances_in_region("ORDERS", "eu-west")),
        ["far"]
    );
    assert_eq!(client.all_instances("ORDERS").len(), 2);
    client.shutdown().await.unwrap();
}
