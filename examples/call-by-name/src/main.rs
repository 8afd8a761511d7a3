//! Two roles of one small program, to show a Rust service registering with Eureka and calling
//! another by name (see README.md):
//!
//! * `call-by-name serve PORT` runs an `ORDERS` instance on PORT: it answers `GET /hello` and is
//!   registered (and kept alive) by an `EurekaClient` until Ctrl-C, when it cancels.
//! * `call-by-name call` registers as `BILLING` and calls `http://orders/hello` a few times; each
//!   call goes to the instance a round-robin `Selector` picks, and a call whose instance is gone
//!   is retried on another.
//!
//! The Eureka server is `EUREKA_URL` (default `http://localhost:8761/eureka/`), Heureka or Java.

use std::time::Duration;

use axum::routing::get;
use axum::Router;
use heureka_client::{
    ClientConfig, DiscoveryError, DiscoveryHttpClient, EurekaClient, Selector, Strategy,
};

const USAGE: &str = "usage: call-by-name serve PORT | call-by-name call";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["serve", port] => serve(port.parse().map_err(|_| USAGE)?).await,
        ["call"] => call().await,
        _ => Err(USAGE.into()),
    }
}

fn eureka_url() -> String {
    std::env::var("EUREKA_URL").unwrap_or_else(|_| "http://localhost:8761/eureka/".to_owned())
}

/// An `ORDERS` instance on `port`, registered for as long as it runs.
async fn serve(port: u16) -> Result<(), Box<dyn std::error::Error>> {
    let id = format!("orders-{port}");
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let answer = format!("hello from {id}\n");
    let app = Router::new().route("/hello", get(move || async move { answer }));

    // Registered once the port is open, so that nobody is sent to an instance not yet listening.
    let config = ClientConfig::new(
        vec![eureka_url()],
        "orders",
        &id,
        "127.0.0.1",
        "127.0.0.1",
        port,
    );
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

/// Registers as `BILLING` and calls `ORDERS` by name.
async fn call() -> Result<(), Box<dyn std::error::Error>> {
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
    let orders = DiscoveryHttpClient::new(
        reqwest::Client::new(),
        &eureka,
        Selector::new(Strategy::RoundRobin),
    );

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
