//! Entry points for the fuzz targets in `fuzz/`: the server's own request-handling steps,
//! without sockets, so libFuzzer can drive them millions of times a minute. Not an API: hidden
//! from the docs and used by nothing else.

use axum::http::{header, HeaderMap, HeaderValue};
use heureka_core::{Origin, Registry, RegistryPolicy};
use heureka_wire::Format;

use crate::http::negotiate;

/// What a register request would leave behind: `Err` with the status it would be refused
/// with, or every document a reader could then fetch, in both formats.
pub fn register_then_read(
    content_type: Option<&[u8]>,
    path_app: &str,
    body: &[u8],
) -> Result<Vec<(Format, Vec<u8>)>, u16> {
    let mut headers = HeaderMap::new();
    if let Some(value) = content_type.and_then(|value| HeaderValue::from_bytes(value).ok()) {
        headers.insert(header::CONTENT_TYPE, value);
    }
    use axum::response::IntoResponse;
    let status = |error: crate::http::error::ApiError| error.into_response().status().as_u16();
    let format = negotiate::body_format(&headers).map_err(status)?;
    let now = 1_800_000_000_000;
    let mut instance = heureka_wire::decode_instance(body, format, now).map_err(|_| 400_u16)?;
    heureka_core::validate_registration(&mut instance, path_app, &Default::default())
        .map_err(|invalid| status(invalid.into()))?;
    let (app, id) = (instance.app.clone(), instance.id().to_owned());
    let mut registry = Registry::new(RegistryPolicy::default(), now);
    registry.register(instance, Origin::Client, now);
    let mut documents = Vec::new();
    for format in [Format::Json, Format::Xml] {
        documents.push((
            format,
            heureka_wire::encode_applications(&registry.applications(), format),
        ));
        documents.push((
            format,
            heureka_wire::encode_applications(&registry.delta(), format),
        ));
        if let Some(application) = registry.application(&app) {
            documents.push((
                format,
                heureka_wire::encode_application(&application, format),
            ));
        }
        if let Some(stored) = registry.instance(&app, &id, now) {
            documents.push((format, heureka_wire::encode_instance(&stored, format)));
        }
    }
    Ok(documents)
}

/// The two response-format rules for an `Accept` header: (collection reads, instance reads).
pub fn negotiate(accept: &[u8]) -> (Format, Format) {
    let mut headers = HeaderMap::new();
    if let Ok(value) = HeaderValue::from_bytes(accept) {
        headers.insert(header::ACCEPT, value);
    }
    (
        negotiate::collection_format(&headers),
        negotiate::instance_format(&headers),
    )
}

/// One request through the server's real service (dispatcher, fast lane, router), over an in-memory state holding [`SEEDED`],
/// and what a reader sees afterwards.
#[derive(Debug)]
pub struct Exchange {
    /// The response's status.
    pub status: u16,
    /// Its `Content-Type`, if any.
    pub content_type: Option<String>,
    /// Its body; empty for an event stream, which never ends.
    pub body: Vec<u8>,
    /// After a method that may write: the full registry fetched through the router in the
    /// `read_back` format, with the status the read was answered.
    pub full_fetch: Vec<(Format, u16, Vec<u8>)>,
    /// After a method that may write: the registry's own view, `(app, id, status)` of every
    /// instance.
    pub registry: Vec<(String, String, heureka_core::InstanceStatus)>,
}

/// `(app, instance id)` of the instances every [`request`] starts with: one id with colons
/// (which clients percent-encode), one plain.
pub const SEEDED: [(&str, &str); 2] = [("ORDERS", "10.0.0.1:orders:8080"), ("ORDERS", "node-b")];

/// Sends `method target` with no body and no header but `Accept` (`None`: no header) through
/// the service [`crate::serve`] serves (the dispatcher, the fast lane and the router), on a
/// current-thread runtime. The state is built once
/// (a fresh one per request ran at 200 a second, most of it compressing the full-fetch
/// cache) and put back to the [`SEEDED`] instances after every request that changed what a
/// reader sees (its [`Registry::version`] moved), so the registry a request meets is the same
/// for every input. Most fuzzed writes are refused and change nothing; not reseeding after
/// them keeps the cached documents, which a reseed would have to compress again. `None` when `target` is not a
/// request target hyper would accept (hyper answers 400 before any router sees it).
///
/// After a method that may write, the full registry is read back in one format, `read_back`:
/// each format's document is compressed afresh after a write, which is most of an input's cost.
pub fn request(
    method: &str,
    target: &[u8],
    accept: Option<Format>,
    read_back: Format,
) -> Option<Exchange> {
    let uri = axum::http::Uri::from_maybe_shared(bytes::Bytes::copy_from_slice(target)).ok()?;
    let method = axum::http::Method::from_bytes(method.as_bytes()).ok()?;
    let reads_only = matches!(method.as_str(), "GET" | "HEAD" | "OPTIONS");
    let server = fuzz_server();
    let version_before = server.state.store.read().version();
    server.runtime.block_on(async {
        let mut request = axum::http::Request::builder().method(method).uri(uri);
        if let Some(format) = accept {
            request = request.header(header::ACCEPT, format.content_type());
        }
        let request = request.body(axum::body::Body::empty()).ok()?;
        let response = server.call(request).await;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        let streaming = content_type
            .as_deref()
            .is_some_and(|value| value.starts_with("text/event-stream"));
        let body = if streaming {
            Vec::new()
        } else {
            axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .ok()?
                .to_vec()
        };
        let mut exchange = Exchange {
            status,
            content_type,
            body,
            full_fetch: Vec::new(),
            registry: Vec::new(),
        };
        if !reads_only {
            for format in [read_back] {
                let path = format!("{}/apps", server.config.heureka.base_path);
                let read = axum::http::Request::get(path)
                    .header(header::ACCEPT, format.content_type())
                    .body(axum::body::Body::empty())
                    .ok()?;
                let response = server.call(read).await;
                let status = response.status().as_u16();
                let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                    .await
                    .ok()?;
                exchange.full_fetch.push((format, status, body.to_vec()));
            }
            exchange.registry = server
                .state
                .store
                .read()
                .applications()
                .applications
                .into_iter()
                .flat_map(|application| application.instances)
                .map(|instance| {
                    (
                        instance.app.clone(),
                        instance.id().to_owned(),
                        instance.status,
                    )
                })
                .collect();
            if server.state.store.read().version() != version_before {
                server.reseed();
            }
        }
        Some(exchange)
    })
}

struct FuzzServer {
    runtime: tokio::runtime::Runtime,
    config: crate::config::Config,
    state: crate::state::SharedState,
    app: tower_http::normalize_path::NormalizePath<crate::dispatch::Dispatch>,
    seeded: Vec<heureka_core::Instance>,
}

/// The default configuration without peers (nothing replicates or syncs) and without creating
/// namespaces, its state holding the [`SEEDED`] instances, and its service.
fn fuzz_server() -> &'static FuzzServer {
    static SERVER: std::sync::OnceLock<FuzzServer> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("builds a current-thread runtime");
        let mut config = crate::config::Config::default();
        config.client.service_url.clear();
        config.client.register_with_eureka = false;
        config.client.fetch_registry = false;
        // The fuzzer exercises the handlers behind the peers-only gate; its requests cross no
        // socket, so the gate would refuse every replication request as from no peer.
        config.heureka.replication.peers_only = false;
        // A namespace a write created would outlive its input, with timers of its own, and
        // answer later inputs otherwise: `/ns/{name}/…` is refused (404), the same every time.
        config.heureka.namespaces.auto_create = false;
        let _entered = runtime.enter();
        let state = crate::state::AppState::new(&config, crate::clock::Clock::System, 8761)
            .expect("no persistence here");
        let app = crate::serve::service(&state, &config, None, crate::serve::Lanes::FastLane);
        let seeded = SEEDED
            .iter()
            .map(|(app, id)| {
                let document = format!(
                    r#"{{"instance":{{"instanceId":"{id}","hostName":"10.0.0.1","app":"{app}","ipAddr":"10.0.0.1","port":{{"$":8080,"@enabled":"true"}},"vipAddress":"orders","dataCenterInfo":{{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}},"status":"UP","metadata":{{"zone":"a"}}}}}}"#
                );
                heureka_wire::decode_instance(document.as_bytes(), Format::Json, state.store.now())
                    .expect("the seeded instances decode")
            })
            .collect();
        drop(_entered);
        let server = FuzzServer {
            runtime,
            config,
            state,
            app,
            seeded,
        };
        server.runtime.block_on(async { server.reseed() });
        server
    })
}

impl FuzzServer {
    /// `request` as a connection serves it: offered to be answered at once (the fast lane's
    /// heartbeats, `connection.rs`), else through the dispatcher, the lane and the router.
    async fn call(
        &self,
        request: axum::http::Request<axum::body::Body>,
    ) -> axum::response::Response {
        use crate::connection::AnswersAtOnce;
        use tower::ServiceExt;

        if let Some(response) = self.app.answer_at_once(&request) {
            return response;
        }
        match self.app.clone().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }

    /// Cancels every instance (which drops its status override too) and registers the seeded
    /// ones afresh, through the write path, so the caches see new versions.
    fn reseed(&self) {
        self.state.store.write(|registry, now| {
            let held: Vec<(String, String)> = registry
                .applications()
                .applications
                .into_iter()
                .flat_map(|application| application.instances)
                .map(|instance| (instance.app.clone(), instance.id().to_owned()))
                .collect();
            for (app, id) in held {
                registry.cancel(&app, &id, Origin::Client, now);
            }
            for instance in &self.seeded {
                registry.register(instance.clone(), Origin::Client, now);
            }
        });
    }
}
