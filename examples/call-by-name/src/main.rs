//! Two roles of one small program, to show a Rust service registering with Eureka and calling
//! another by name (see README.md):
//!
//! * `call-by-name serve PORT [VERSION]` runs an `ORDERS` instance on PORT: it answers
//!   `GET /hello` and is registered (and kept alive) by an `EurekaClient` until Ctrl-C, when it
//!   cancels. With VERSION it registers the metadata `version=VERSION`.
//! * `call-by-name call [VERSION]` registers as `BILLING` and calls `http://orders/hello` a few
//!   times; each call goes to the instance a round-robin `Selector` picks (with VERSION, only
//!   among instances whose `version` metadata is VERSION: a gray release's route), and a call
//!   whose instance is gone is retried on another.
//!
//! The Eureka server is `EUREKA_URL` (default `http://localhost:8761/eureka/`), Heureka or Java.

use std::time::Duration;

use axum::routing::get;
use axum::Router;
use heureka_client::{
    ClientConfig, DiscoveryError, DiscoveryHttpClient, EurekaClient, Selector, Strategy,
};

const USAGE: &str = "usage: call-by-name serve PORT [VERSION] | call-by-name call [VERSION]";

/// The metadata key a gray release routes on.
const VERSION_KEY: &str = "version";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["serve", port] => serve(port.parse().map_err(|_| USAGE)?, None).await,
        ["serve", port, version] => serve(port.parse().map_err(|_| USAGE)?, Some(version)).await,
        ["call"] => call(None).await,
        ["call", version] => call(Some(version)).await,
        _ => Err(USAGE.into()),
    }
}

fn eureka_url() -> String {
    std::env::var("EUREKA_URL").unwrap_or_else(|_| "http://localhost:8761/eureka/".to_owned())
}

/// An `ORDERS` instance on `port`, registered for as long as it runs, with `version` metadata
/// if given.
async fn serve(port: u16, version: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    let id = format!("orders-{port}");
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let answer = match version {
        Some(version) => format!("hello from {id} (version {version})\n"),
        None => format!("hello from {id}\n"),
    };
    let app = Router::new().route("/hello", get(move || async move { answer }));

    // Registered once the port is open, so that nobody is sent to an instance not yet listening.
    let mut config = ClientConfig::new(
        vec![eureka_url()],
        "orders",
        &id,
        "127.0.0.1",
        "127.0.0.1",
        port,
    );
    if let Some(version) = version {
        // As `eureka.instance.metadata-map.version` would in application.yml.
        config
            .metadata
            .insert(VERSION_KEY.to_owned(), version.to_owned());
    }
    let eureka = EurekaClient::start(config).await?;
    println!(
        "{id} registered as ORDERS at {}; Ctrl-C to stop",
        eureka_url()
    );

    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    // Cancelling tells callers at once rather than after the lease lapses.
    eureka.shutdown().await?;
    println!("{id} cancelled its registration");
    Ok(())
}

/// Registers as `BILLING` and calls `ORDERS` by name, only instances of `version` if given.
async fn call(version: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    // BILLING serves nothing here; it registers so that the call is a service's, visible on the
    // dashboard.
    let config = ClientConfig::new(
        vec![eureka_url()],
        "billing",
        "billing-1",
        "127.0.0.1",
        "127.0.0.1",
        8090,
    );
    let eureka = EurekaClient::start(config).await?;
    let mut selector = Selector::new(Strategy::RoundRobin);
    if let Some(version) = version {
        selector = selector.require_metadata(VERSION_KEY, version);
    }
    let orders = DiscoveryHttpClient::new(reqwest::Client::new(), &eureka, selector);

    for _ in 0..6 {
        match orders.get("http://orders/hello").send().await {
            Ok(response) => print!("{} {}", response.status(), response.text().await?),
            // The registry copy is refreshed every 30 s; an instance started a moment ago may
            // not be in it yet.
            Err(error @ DiscoveryError::NoInstance { .. }) => println!("{error}; retrying"),
            Err(error) => println!("call failed: {error}"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    drop(orders);
    eureka.shutdown().await?;
    Ok(())
}
