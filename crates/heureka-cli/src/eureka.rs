//! Eureka's REST API as the commands use it: one request, tried on each server in turn, its
//! status code mapped to the command's outcome and its body decoded by heureka-wire.

use std::time::Duration;

use heureka_core::{Application, Applications, Instance};
use heureka_wire::Format;
use reqwest::{Method, Response, StatusCode};

use crate::error::CliError;
use crate::target::Server;

/// A client for a list of Eureka servers, speaking one wire format.
pub(crate) struct Eureka {
    http: reqwest::Client,
    servers: Vec<Server>,
    format: Format,
    timeout: Duration,
}

/// One request: method, path segments below the base (each percent-encoded on its own, so an
/// id like `10.0.0.5:orders:8080` stays one segment), query pairs, and what it is about (for
/// the 404 message).
pub(crate) struct Call<'a> {
    pub method: Method,
    pub path: &'a [&'a str],
    pub query: &'a [(&'a str, &'a str)],
    pub what: String,
}

impl Eureka {
    /// `tls` verifies `https://` servers (and holds the certificate presented when asked).
    pub(crate) fn new(
        servers: Vec<Server>,
        format: Format,
        timeout: Duration,
        tls: heureka_tls::rustls::ClientConfig,
    ) -> Result<Eureka, CliError> {
        let http = reqwest::Client::builder()
            .use_preconfigured_tls(tls)
            .connect_timeout(timeout)
            .user_agent(concat!("heureka-cli/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| CliError::Unreachable(format!("no HTTP client: {error}")))?;
        Ok(Eureka {
            http,
            servers,
            format,
            timeout,
        })
    }

    pub(crate) fn format(&self) -> Format {
        self.format
    }

    /// Sends `call` to each server in turn until one answers with anything but a 5xx; a
    /// connection failure or a 5xx moves on to the next, as Eureka's own clients fail over.
    /// `stream` leaves the body unbounded in time (the event stream).
    pub(crate) async fn send(&self, call: &Call<'_>, stream: bool) -> Result<Answer, CliError> {
        self.send_with(call, stream, &[]).await
    }

    /// [`Eureka::send`] with extra request headers (a stream's `Last-Event-ID`).
    pub(crate) async fn send_with(
        &self,
        call: &Call<'_>,
        stream: bool,
        headers: &[(&str, &str)],
    ) -> Result<Answer, CliError> {
        let mut failure = None;
        for server in &self.servers {
            let url = url(server, call);
            let mut request = self.http.request(call.method.clone(), url.clone()).header(
                "Accept",
                if stream {
                    "text/event-stream"
                } else {
                    self.format.content_type()
                },
            );
            if !stream {
                request = request.timeout(self.timeout);
            }
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            if let Some(credentials) = &server.credentials {
                request = request.basic_auth(&credentials.username, Some(&credentials.password));
            }
            match request.send().await {
                Ok(response) if response.status().is_server_error() => {
                    failure = Some(CliError::Server(format!(
                        "{} {url}: {}",
                        call.method,
                        response.status()
                    )));
                }
                Ok(response) => {
                    return Ok(Answer {
                        response,
                        url: url.to_string(),
                    })
                }
                Err(error) => {
                    failure = Some(CliError::Unreachable(match heureka_tls::explain(&error) {
                        // A certificate failure is about the server, not this request.
                        Some(why) => format!("cannot reach {}: {why}", server.base),
                        None => format!("{} {url}: {}", call.method, reason(&error)),
                    }));
                }
            }
        }
        Err(failure.unwrap_or_else(|| CliError::Usage("no Eureka server to ask".to_owned())))
    }

    /// Sends `call` and requires a 2xx, mapping 404 and 401/403 to their own errors.
    pub(crate) async fn expect_ok(&self, call: &Call<'_>) -> Result<Answer, CliError> {
        let answer = self.send(call, false).await?;
        answer.check(&call.what)?;
        Ok(answer)
    }

    pub(crate) async fn applications(&self, path: &[&str]) -> Result<Applications, CliError> {
        let call = self.get(path, "the registry".to_owned());
        let answer = self.expect_ok(&call).await?;
        let (format, body) = answer.body(self.format).await?;
        heureka_wire::decode_applications(&body, format).map_err(|error| undecodable(&call, error))
    }

    pub(crate) async fn application(&self, name: &str) -> Result<Application, CliError> {
        let path = ["apps", name];
        let call = self.get(&path, format!("no application {name}"));
        let answer = self.expect_ok(&call).await?;
        let (format, body) = answer.body(self.format).await?;
        heureka_wire::decode_application(&body, format).map_err(|error| undecodable(&call, error))
    }

    pub(crate) async fn instance(&self, id: &str) -> Result<Instance, CliError> {
        let path = ["instances", id];
        let call = self.get(&path, format!("no instance {id}"));
        let answer = self.expect_ok(&call).await?;
        let (format, body) = answer.body(self.format).await?;
        heureka_wire::decode_instance(&body, format, 0).map_err(|error| undecodable(&call, error))
    }

    pub(crate) fn get<'a>(&self, path: &'a [&'a str], what: String) -> Call<'a> {
        Call {
            method: Method::GET,
            path,
            query: &[],
            what,
        }
    }
}

/// A server's answer, with the URL it came from (without credentials).
pub(crate) struct Answer {
    pub response: Response,
    pub url: String,
}

impl Answer {
    pub(crate) fn status(&self) -> StatusCode {
        self.response.status()
    }

    /// 2xx is fine; 404 is "not found" (`what` says what); 401 and 403 are refused
    /// credentials (or, for a 403 on a read, a server not ready yet); anything else fails.
    pub(crate) fn check(&self, what: &str) -> Result<(), CliError> {
        let status = self.status();
        match status.as_u16() {
            200..=299 => Ok(()),
            404 => Err(CliError::NotFound(format!(
                "{what} (404 from {})",
                self.url
            ))),
            401 => Err(CliError::Auth(format!(
                "{}: 401 Unauthorized: give credentials in the URL or {} and {}",
                self.url,
                crate::target::ENV_USERNAME,
                crate::target::ENV_PASSWORD
            ))),
            403 => Err(CliError::Auth(format!(
                "{}: 403 Forbidden: credentials refused, or the server does not serve reads yet",
                self.url
            ))),
            _ => Err(CliError::Server(format!("{}: {status}", self.url))),
        }
    }

    /// The body and the format it is in: the response's `Content-Type` says, else the one
    /// asked for.
    pub(crate) async fn body(self, asked: Format) -> Result<(Format, Vec<u8>), CliError> {
        let content_type = self
            .response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let format = if content_type.contains("json") {
            Format::Json
        } else if content_type.contains("xml") {
            Format::Xml
        } else {
            asked
        };
        let url = self.url;
        let body = self
            .response
            .bytes()
            .await
            .map_err(|error| CliError::Unreachable(format!("{url}: {}", reason(&error))))?;
        Ok((format, body.to_vec()))
    }
}

fn url(server: &Server, call: &Call<'_>) -> reqwest::Url {
    let mut url = server.base.clone();
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.pop_if_empty().extend(call.path);
    }
    if !call.query.is_empty() {
        url.query_pairs_mut().extend_pairs(call.query);
    }
    url
}

fn undecodable(call: &Call<'_>, error: heureka_wire::DecodeError) -> CliError {
    CliError::Server(format!(
        "{} {}: the answer does not decode: {error}",
        call.method,
        call.path.join("/")
    ))
}

/// The innermost cause: "Connection refused (os error 111)" rather than reqwest's wrapper.
pub(crate) fn reason(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        return "timed out".to_owned();
    }
    let mut source: &dyn std::error::Error = error;
    while let Some(inner) = source.source() {
        source = inner;
    }
    source.to_string()
}
