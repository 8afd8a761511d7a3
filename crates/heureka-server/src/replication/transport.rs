//! HTTP to one peer: the replication batch, and the registry reads that start-up sync and
//! anti-entropy make. Failures are classified as Eureka's batching dispatcher classifies them,
//! because the dispatcher's next step (retry soon, back off, give up) depends on the class.

use std::time::Duration;

use heureka_core::Applications;
use heureka_wire::{Format, ReplicationItem, ReplicationResult, StampedItem, StampedResult};
use reqwest::header::{ACCEPT, ACCEPT_ENCODING, AUTHORIZATION, CONTENT_TYPE, USER_AGENT};
use reqwest::StatusCode;

use super::peers::PeerUrl;
use crate::error_chain::error_chain;

/// The header on the 403 of a node whose start-up sync is running: a peer's start-up sync
/// does not wait for a node that is itself waiting (`sync.rs`). The HTTP side's error type
/// puts it on that answer; this side reads it.
pub(crate) const STARTING_HEADER: &str = "x-heureka-starting";

/// Why a request to a peer did not produce an answer to act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PeerError {
    /// 503: the peer is overloaded (or not ready); back off longer.
    Congestion(String),
    /// No answer in time: congestion to the dispatcher, as in Eureka; a hung peer to the
    /// start-up sync, which does not wait for it.
    TimedOut(String),
    /// The peer could not be reached (refused, reset, DNS): retry soon.
    Unreachable(String),
    /// The peer answered, but not with something to act on (401, 404, 500, garbage): the
    /// request will not succeed by repeating it.
    Refused(String),
    /// A Heureka-only endpoint answered 404: the peer is a Java server (or an older Heureka),
    /// to be sent Eureka's own batches.
    NotHeureka(String),
    /// A Heureka peer's 403 marked as its own start-up sync's (`STARTING_HEADER`): it holds
    /// no registry to wait for yet. A Java server's 403 is `Refused`.
    Starting(String),
}

impl std::fmt::Display for PeerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerError::Congestion(why) => write!(f, "congested: {why}"),
            PeerError::TimedOut(why) => write!(f, "timed out: {why}"),
            PeerError::Unreachable(why) => write!(f, "unreachable: {why}"),
            PeerError::Refused(why) => write!(f, "refused: {why}"),
            PeerError::NotHeureka(why) => write!(f, "not a Heureka server: {why}"),
            PeerError::Starting(why) => write!(f, "starting: {why}"),
        }
    }
}

/// The timeouts of peer requests.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timeouts {
    /// `peer-node-connect-timeout-ms`.
    pub(crate) connect: Duration,
    /// `peer-node-read-timeout-ms`: for a batch's answer.
    pub(crate) batch: Duration,
    /// For whole-registry reads, which may be megabytes: generous, and not Eureka's.
    pub(crate) registry_read: Duration,
}

/// What a peer request needs: a shared connection pool and the timeouts.
#[derive(Clone, Debug)]
pub(crate) struct PeerClient {
    http: reqwest::Client,
    timeouts: Timeouts,
    compress: bool,
    /// In the dispatcher's paused-time tests, batches go to an in-memory peer instead.
    #[cfg(test)]
    fake: std::sync::Arc<std::sync::OnceLock<std::sync::Arc<fake::FakePeer>>>,
}

/// The user agent Java peers send; some proxies and logs key on it.
const REPLICATION_USER_AGENT: &str = "Java-EurekaClient-Replication";

impl PeerClient {
    /// `compress` is `enable-replicated-request-compression`: gzip batch bodies. `tls` is for
    /// `https://` peers: whom to trust, and the certificate to present when asked.
    pub(crate) fn new(
        timeouts: Timeouts,
        compress: bool,
        tls: heureka_tls::rustls::ClientConfig,
    ) -> PeerClient {
        let http = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .pool_idle_timeout(Duration::from_secs(30))
            .gzip(true)
            .use_preconfigured_tls(tls)
            .build()
            .expect("a client with a rustls configuration always builds");
        PeerClient {
            http,
            timeouts,
            compress,
            #[cfg(test)]
            fake: Default::default(),
        }
    }

    /// Sends every batch to `fake` instead of over HTTP.
    #[cfg(test)]
    pub(crate) fn install_fake(&self, fake: std::sync::Arc<fake::FakePeer>) {
        let _ = self.fake.set(fake);
    }

    /// `POST {peer}peerreplication/batch/`: one answer per item, in order.
    pub(crate) async fn send_batch(
        &self,
        peer: &PeerUrl,
        items: &[ReplicationItem],
    ) -> Result<Vec<ReplicationResult>, PeerError> {
        #[cfg(test)]
        if let Some(fake) = self.fake.get() {
            return fake.answer(items).await;
        }
        let body = heureka_wire::encode_replication_batch(items);
        let request = self
            .post_json(peer, "peerreplication/batch/", body, self.timeouts.batch)
            .header("DiscoveryIdentity-Name", "DefaultServer")
            .header("DiscoveryIdentity-Version", "1.0");
        let body = answer(peer, request, |status| format!("batch answered {status}")).await?;
        heureka_wire::decode_replication_response(&body)
            .map_err(|error| PeerError::Refused(format!("unreadable batch answer: {error}")))
    }

    /// `POST {peer}peerreplication/stamped`: a batch of stamped copies to a Heureka peer, one
    /// answer per item. A 404 means the peer is not a Heureka server ([`PeerError::NotHeureka`]).
    pub(crate) async fn send_stamped_batch(
        &self,
        peer: &PeerUrl,
        items: &[StampedItem],
    ) -> Result<Vec<StampedResult>, PeerError> {
        #[cfg(test)]
        if let Some(fake) = self.fake.get() {
            return fake.answer_stamped(items).await;
        }
        self.post_stamped(peer, "peerreplication/stamped", items, self.timeouts.batch)
            .await
    }

    /// `POST {peer}peerreplication/copies`: the peer's stamped copies of the instances
    /// `keys` names, for anti-entropy; one answer per key (404: it holds nothing of it).
    pub(crate) async fn fetch_copies(
        &self,
        peer: &PeerUrl,
        keys: &[(String, String)],
    ) -> Result<Vec<StampedResult>, PeerError> {
        let items: Vec<StampedItem> = keys
            .iter()
            .map(|(app, id)| StampedItem {
                action: heureka_wire::ReplicationAction::Heartbeat,
                copy: heureka_core::StampedCopy {
                    app: app.clone(),
                    id: id.clone(),
                    parts: heureka_core::Parts::default(),
                    leased: false,
                },
            })
            .collect();
        let timeout = self.timeouts.registry_read;
        self.post_stamped(peer, "peerreplication/copies", &items, timeout)
            .await
    }

    async fn post_stamped(
        &self,
        peer: &PeerUrl,
        path: &str,
        items: &[StampedItem],
        timeout: Duration,
    ) -> Result<Vec<StampedResult>, PeerError> {
        let body = heureka_wire::encode_stamped_batch(items);
        let request = self.post_json(peer, path, body, timeout);
        let answered = answer(peer, request, |status| {
            format!("{} on POST {path}", status.as_u16())
        })
        .await;
        let body = match answered {
            Err(PeerError::Refused(why)) if why.starts_with("404 ") || why.starts_with("405 ") => {
                return Err(PeerError::NotHeureka(why))
            }
            other => other?,
        };
        heureka_wire::decode_stamped_response(&body)
            .map_err(|error| PeerError::Refused(format!("unreadable stamped answer: {error}")))
    }

    /// A JSON `POST` of `body` to `{peer}{path}` as a replicating server sends it, gzipped
    /// when `enable-replicated-request-compression` says so.
    fn post_json(
        &self,
        peer: &PeerUrl,
        path: &str,
        body: Vec<u8>,
        timeout: Duration,
    ) -> reqwest::RequestBuilder {
        let request = self
            .http
            .post(format!("{}{path}", peer.url))
            .timeout(timeout)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .header(USER_AGENT, REPLICATION_USER_AGENT);
        if self.compress {
            request
                .header(reqwest::header::CONTENT_ENCODING, "gzip")
                .body(gzip(&body))
        } else {
            request.body(body)
        }
    }

    /// `GET {peer}apps`: the peer's whole registry, as any Eureka client reads it.
    pub(crate) async fn fetch_applications(
        &self,
        peer: &PeerUrl,
    ) -> Result<Applications, PeerError> {
        let body = self.get(peer, "apps").await?;
        heureka_wire::decode_applications(&body, Format::Json)
            .map_err(|error| PeerError::Refused(format!("unreadable registry: {error}")))
    }

    /// `GET {peer}peerreplication/digest`, Heureka's compact view of a registry for
    /// anti-entropy. `Ok(None)` when the peer has none (a Java server answers 404).
    pub(crate) async fn fetch_digest(
        &self,
        peer: &PeerUrl,
    ) -> Result<Option<heureka_wire::RegistryDigest>, PeerError> {
        let reply = self.get(peer, "peerreplication/digest").await;
        if_offered(reply, "digest", |body| {
            heureka_wire::decode_registry_digest(body, 0)
        })
    }

    /// `GET {peer}peerreplication/health-checks`: the peer's tag and whether it checks
    /// instances (`health_checks/owners.rs`), within a second. `Ok(None)` from a peer without
    /// health checks (a Java server answers 404).
    pub(crate) async fn ask_checker(
        &self,
        peer: &PeerUrl,
    ) -> Result<Option<(u32, bool)>, PeerError> {
        let path = "peerreplication/health-checks";
        let request = self
            .http
            .get(format!("{}{path}", peer.url))
            .timeout(Duration::from_secs(1))
            .header(ACCEPT, "application/json")
            .header(USER_AGENT, REPLICATION_USER_AGENT);
        let reply = answer(peer, request, |status| {
            format!("{} on GET {path}", status.as_u16())
        })
        .await;
        if_offered(reply, "answer", heureka_wire::decode_checker)
    }

    /// `GET {peer}peerreplication/drain?app=…&id=…`: the peer's consumers and whether each
    /// holds the instance's drain. `Ok(None)` from a peer without it (a Java server: 404).
    pub(crate) async fn fetch_drain_progress(
        &self,
        peer: &PeerUrl,
        app: &str,
        id: &str,
    ) -> Result<Option<heureka_wire::ConsumersDoc>, PeerError> {
        let path = format!(
            "peerreplication/drain?app={}&id={}",
            path_segment(app),
            path_segment(id)
        );
        let reply = self.get(peer, &path).await;
        if_offered(reply, "answer", heureka_wire::decode_consumers)
    }

    /// `GET {peer origin}{prefix}` (`http://peer:8761/ns`): the names of the namespaces a
    /// Heureka peer holds. `Ok(None)` from a peer without namespaces (404).
    pub(crate) async fn fetch_namespace_names(
        &self,
        peer: &PeerUrl,
        prefix: &str,
    ) -> Result<Option<Vec<String>>, PeerError> {
        let origin = url::Url::parse(&peer.url)
            .map(|url| url.origin().ascii_serialization())
            .map_err(|error| PeerError::Refused(format!("no origin in the peer's URL: {error}")))?;
        let at_origin = PeerUrl {
            url: format!("{origin}/"),
            authorization: peer.authorization.clone(),
        };
        let reply = self.get(&at_origin, prefix.trim_start_matches('/')).await;
        if_offered(
            reply,
            "namespace listing",
            heureka_wire::decode_namespace_names,
        )
    }

    /// `GET {peer}apps/{app}/{id}`: one instance, as the peer holds it.
    pub(crate) async fn fetch_instance(
        &self,
        peer: &PeerUrl,
        app: &str,
        id: &str,
    ) -> Result<heureka_core::Instance, PeerError> {
        let path = format!("apps/{}/{}", path_segment(app), path_segment(id));
        let body = self.get(peer, &path).await?;
        heureka_wire::decode_instance(&body, Format::Json, 0)
            .map_err(|error| PeerError::Refused(format!("unreadable instance: {error}")))
    }

    async fn get(&self, peer: &PeerUrl, path: &str) -> Result<bytes::Bytes, PeerError> {
        let request = self
            .http
            .get(format!("{}{path}", peer.url))
            .timeout(self.timeouts.registry_read)
            .header(ACCEPT, "application/json")
            .header(ACCEPT_ENCODING, "gzip")
            .header(USER_AGENT, REPLICATION_USER_AGENT);
        answer(peer, request, |status| {
            format!("{} on GET {path}", status.as_u16())
        })
        .await
    }
}

/// The answer of an endpoint only Heureka peers offer, decoded: `Ok(None)` when the peer has
/// none (a Java server answers 404), a body that does not decode is refused as an
/// `unreadable {what}`.
fn if_offered<T, E: std::fmt::Display>(
    answer: Result<bytes::Bytes, PeerError>,
    what: &str,
    decode: impl FnOnce(&[u8]) -> Result<T, E>,
) -> Result<Option<T>, PeerError> {
    match answer {
        Ok(body) => decode(&body)
            .map(Some)
            .map_err(|error| PeerError::Refused(format!("unreadable {what}: {error}"))),
        Err(PeerError::Refused(why)) if why.starts_with("404") => Ok(None),
        Err(error) => Err(error),
    }
}

/// Sends a request with the peer's credentials and returns the body of a 2xx answer; a 503 is
/// congestion, a 403 marked as a Heureka start-up sync's is a starting peer, any other status
/// is refused with the reason `refused` gives.
async fn answer(
    peer: &PeerUrl,
    mut request: reqwest::RequestBuilder,
    refused: impl FnOnce(StatusCode) -> String,
) -> Result<bytes::Bytes, PeerError> {
    if let Some(authorization) = &peer.authorization {
        request = request.header(AUTHORIZATION, authorization);
    }
    let response = request.send().await.map_err(classify)?;
    let status = response.status();
    if status == StatusCode::SERVICE_UNAVAILABLE {
        return Err(PeerError::Congestion("503 Service Unavailable".to_owned()));
    }
    if status == StatusCode::FORBIDDEN && response.headers().contains_key(STARTING_HEADER) {
        return Err(PeerError::Starting(
            "403: its own start-up sync is running".to_owned(),
        ));
    }
    if !status.is_success() {
        return Err(PeerError::Refused(refused(status)));
    }
    response.bytes().await.map_err(classify)
}

/// Eureka's classification: a read time-out is congestion (here its own variant, which the
/// dispatcher treats as congestion), other I/O errors are transient.
fn classify(error: reqwest::Error) -> PeerError {
    let why = error_chain(&error);
    if error.is_timeout() {
        PeerError::TimedOut(why)
    } else if error.is_connect() || error.is_request() || error.is_body() {
        PeerError::Unreachable(why)
    } else {
        PeerError::Refused(why)
    }
}

/// An app name or instance id as one URL path segment.
fn path_segment(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
}

fn gzip(body: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder
        .write_all(body)
        .and_then(|()| encoder.finish())
        .expect("writing to a Vec cannot fail")
}

#[cfg(test)]
pub(crate) mod fake;
