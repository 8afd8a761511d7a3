//! The benchmark's physical ceiling.
//!
//! A trivial HTTP/1.1 server on the same runtime stack as Heureka (tokio + hyper), doing no work:
//! * `GET` answers 200 with a fixed body whose size depends only on which document the request
//!   names (a path ending in `/delta` or `/delta/`, or any other) and how it asks for it (XML if
//!   `Accept` mentions `xml`, else JSON; gzip if `Accept-Encoding` mentions `gzip`, else plain):
//!   the harness passes the size of Heureka's answer to the same request at the same registry
//!   size, so the two servers send the same bytes;
//! * every other method reads the request body and answers 200 with an empty body.
//!
//! Flags are Spring-style like Heureka's: `--server.port=N`, `--payload-bytes=N` (the full
//! document, JSON gzip), `--delta-payload-bytes=N` (the delta, JSON gzip), and per variant
//! `--payload-bytes.{json|xml}.{gzip|plain}=N`, `--delta-payload-bytes.{json|xml}.{gzip|plain}=N`
//! (a variant not given is as large as its document's JSON gzip). Port 0 picks a free port. The
//! bound address is printed on stdout.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ACCEPT, ACCEPT_ENCODING, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// A document as a request names it: which one, in which format, with which encoding.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Variant {
    delta: bool,
    xml: bool,
    gzip: bool,
}

impl Variant {
    fn all() -> impl Iterator<Item = Variant> {
        (0..8).map(|bits| Variant {
            delta: bits & 4 != 0,
            xml: bits & 2 != 0,
            gzip: bits & 1 != 0,
        })
    }

    fn index(self) -> usize {
        usize::from(self.delta) * 4 + usize::from(self.xml) * 2 + usize::from(self.gzip)
    }

    /// The document's JSON gzip variant, whose size a variant not given takes.
    fn json_gzip(self) -> Variant {
        Variant {
            delta: self.delta,
            xml: false,
            gzip: true,
        }
    }
}

struct Config {
    port: u16,
    /// By [`Variant::index`]; None where not given.
    payload_bytes: [Option<usize>; 8],
}

fn parse_args() -> Result<Config, String> {
    let mut config = Config {
        port: 8080,
        payload_bytes: [None; 8],
    };
    for arg in std::env::args().skip(1) {
        let (key, value) = arg
            .strip_prefix("--")
            .and_then(|kv| kv.split_once('='))
            .ok_or_else(|| format!("expected --key=value, got {arg:?}"))?;
        let bad = |e: std::num::ParseIntError| format!("{key}: {e}");
        if key == "server.port" {
            config.port = value.parse().map_err(bad)?;
            continue;
        }
        let variant = payload_flag(key).ok_or_else(|| format!("unknown flag --{key}"))?;
        config.payload_bytes[variant.index()] = Some(value.parse().map_err(bad)?);
    }
    Ok(config)
}

/// The variant a payload flag sets: `payload-bytes` or `delta-payload-bytes`, optionally
/// followed by `.json|.xml` and `.gzip|.plain`.
fn payload_flag(key: &str) -> Option<Variant> {
    let (delta, rest) = if let Some(rest) = key.strip_prefix("delta-payload-bytes") {
        (true, rest)
    } else {
        (false, key.strip_prefix("payload-bytes")?)
    };
    let (xml, gzip) = match rest {
        "" | ".json.gzip" => (false, true),
        ".json.plain" => (false, false),
        ".xml.gzip" => (true, true),
        ".xml.plain" => (true, false),
        _ => return None,
    };
    Some(Variant { delta, xml, gzip })
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

/// The bodies, by [`Variant::index`].
struct Payloads([Bytes; 8]);

impl Payloads {
    fn new(config: &Config) -> Payloads {
        let size = |variant: Variant| {
            config.payload_bytes[variant.index()]
                .or(config.payload_bytes[variant.json_gzip().index()])
                .unwrap_or(0)
        };
        let mut bodies: [Bytes; 8] = Default::default();
        for variant in Variant::all() {
            bodies[variant.index()] = filler(size(variant));
        }
        Payloads(bodies)
    }
}

/// Whether a header's value mentions `needle` (ASCII, case-insensitively).
fn mentions(request: &Request<Incoming>, header: hyper::header::HeaderName, needle: &str) -> bool {
    request.headers().get(header).is_some_and(|value| {
        value
            .as_bytes()
            .windows(needle.len())
            .any(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
    })
}

async fn handle(
    payloads: Arc<Payloads>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if request.method() == Method::GET {
        let variant = Variant {
            delta: request
                .uri()
                .path()
                .trim_end_matches('/')
                .ends_with("/delta"),
            xml: mentions(&request, ACCEPT, "xml"),
            gzip: mentions(&request, ACCEPT_ENCODING, "gzip"),
        };
        let mut response = Response::new(Full::new(payloads.0[variant.index()].clone()));
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
    let payloads = Arc::new(Payloads::new(&config));
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
