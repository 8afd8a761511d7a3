//! The benchmark's physical ceiling.
//!
//! A trivial HTTP/1.1 server on the same runtime stack as Heureka (tokio + hyper), doing no work:
//! * `GET` on a path ending in `/delta` (or `/delta/`) answers 200 with `--delta-payload-bytes`
//!   bytes;
//! * any other `GET` answers 200 with `--payload-bytes` bytes (the harness passes the size of
//!   Heureka's gzip full fetch at the same registry size);
//! * every other method reads the request body and answers 200 with an empty body.
//!
//! Flags are Spring-style like Heureka's: `--server.port=N --payload-bytes=N
//! --delta-payload-bytes=N`. Port 0 picks a free port. The bound address is printed on stdout.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

struct Config {
    port: u16,
    payload_bytes: usize,
    delta_payload_bytes: usize,
}

fn parse_args() -> Result<Config, String> {
    let mut config = Config {
        port: 8080,
        payload_bytes: 0,
        delta_payload_bytes: 0,
    };
    for arg in std::env::args().skip(1) {
        let (key, value) = arg
            .strip_prefix("--")
            .and_then(|kv| kv.split_once('='))
            .ok_or_else(|| format!("expected --key=value, got {arg:?}"))?;
        let bad = |e: std::num::ParseIntError| format!("{key}: {e}");
        match key {
            "server.port" => config.port = value.parse().map_err(bad)?,
            "payload-bytes" => config.payload_bytes = value.parse().map_err(bad)?,
            "delta-payload-bytes" => config.delta_payload_bytes = value.parse().map_err(bad)?,
            _ => return Err(format!("unknown flag --{key}")),
        }
    }
    Ok(config)
}

/// Deterministic, incompressible filler (xorshift64), so the payload is as heavy as a gzip body.
fn filler(len: usize) -> Bytes {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.extend_from_slice(&state.to_le_bytes());
    }
    out.truncate(len);
    Bytes::from(out)
}

struct Payloads {
    full: Bytes,
    delta: Bytes,
}

async fn handle(
    payloads: Arc<Payloads>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if request.method() == Method::GET {
        let path = request.uri().path();
        let body = if path.trim_end_matches('/').ends_with("/delta") {
            payloads.delta.clone()
        } else {
            payloads.full.clone()
        };
        let mut response = Response::new(Full::new(body));
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        return Ok(response);
    }
    // Receive the whole body, as a real server must; its content is ignored.
    let _ = request.into_body().collect().await;
    Ok(Response::new(Full::new(Bytes::new())))
}

#[tokio::main]
async fn main() {
    let config = match parse_args() {
        Ok(config) => config,
        Err(message) => {
            eprintln!("heureka-bench-baseline: {message}");
            std::process::exit(2);
        }
    };
    let payloads = Arc::new(Payloads {
        full: filler(config.payload_bytes),
        delta: filler(config.delta_payload_bytes),
    });
    let listener = match TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], config.port))).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!(
                "heureka-bench-baseline: cannot bind port {}: {error}",
                config.port
            );
            std::process::exit(1);
        }
    };
    if let Ok(addr) = listener.local_addr() {
        println!("heureka-bench-baseline listening on {addr}");
    }
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            // E.g. out of file descriptors: back off instead of spinning.
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let payloads = payloads.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| handle(payloads.clone(), request));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
