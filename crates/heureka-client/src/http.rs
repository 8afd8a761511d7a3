//! Calling a service by name: `http://orders/api/x` goes to an instance of `ORDERS` chosen by a
//! [`Selector`] from an [`InstanceSource`], and a connection failure is retried on another
//! instance, as Spring Cloud LoadBalancer's `@LoadBalanced` clients do.
//!
//! This is a thin client around `reqwest::Client` rather than a `reqwest-middleware` layer: the
//! errors stay typed ([`DiscoveryError::NoInstance`] rather than an `anyhow` to downcast), no
//! dependency is added, and requests and responses are reqwest's own. [`DiscoveryRequest::with`]
//! reaches any `reqwest::RequestBuilder` method, and [`DiscoveryHttpClient::execute`] takes a
//! built `reqwest::Request`.

use std::time::Duration;

use heureka_core::Instance;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Body, IntoUrl, Method, Request, RequestBuilder, Response, Url};

use crate::select::{InstanceSource, Selector};

#[cfg(test)]
mod tests;

/// Which registered address of an instance a call connects to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Address {
    /// `hostName`, as Spring Cloud's `EurekaServiceInstance.getHost()` uses; Spring instances
    /// with `prefer-ip-address` register their IP there.
    HostName,
    /// `ipAddr`, for instances whose host names do not resolve where the caller runs.
    IpAddr,
}

/// Why a call by name failed.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// The URL has no host, so it names no application.
    #[error("the URL {url} names no application (it has no host)")]
    NoApplication { url: String },
    /// The request could not be built (a bad URL or header, as reqwest reports it).
    #[error("building the request: {0}")]
    Build(#[source] reqwest::Error),
    /// The instance picked registered an address no URL can hold, such as a port above 65535.
    #[error("instance {instance} of {app} has no usable address ({address})")]
    BadAddress {
        app: String,
        instance: String,
        address: String,
    },
    /// The source knows no instance of the application that passes the selector's filters.
    #[error("no instance of {app} is available (none UP and matching the selector)")]
    NoInstance { app: String },
    /// Every attempt failed to connect; `attempts` instances were tried, each once.
    #[error("no instance of {app} could be reached ({attempts} tried); last error: {last}")]
    Unreachable {
        app: String,
        attempts: usize,
        #[source]
        last: reqwest::Error,
    },
    /// The request reached an instance and failed there (a timeout, a broken response): not
    /// retried, since the instance may have acted on it.
    #[error("request to {app} failed: {source}")]
    Request {
        app: String,
        #[source]
        source: reqwest::Error,
    },
}

/// Which instance answered a call and after how many attempts, in the extensions of every
/// response [`DiscoveryHttpClient`] returns: `response.extensions().get::<ServedBy>()`. A call
/// that needed a retry has `attempts > 1`, which a service may log or count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServedBy {
    /// The id of the instance that answered.
    pub instance_id: String,
    /// The instances tried, this one included: 1 when the first one answered.
    pub attempts: usize,
}

/// An HTTP client whose URLs name applications: `client.get("http://orders/api/x").send()`.
///
/// The host is an application name (any case), resolved through `source` at each call; the
/// instance's address ([`Address`], `hostName` by default) and port replace it, the secure port
/// for `https` URLs when the instance enables it. A connection failure (the request was never
/// sent) moves on to an instance not yet tried, up to `max_attempts` instances per call; an HTTP
/// status, even 5xx, is an answer and is returned as it is.
///
/// ```no_run
/// # async fn run(eureka: heureka_client::EurekaClient) -> Result<(), heureka_client::DiscoveryError> {
/// use heureka_client::{ClientTls, DiscoveryHttpClient, Selector, Strategy};
///
/// let selector = Selector::new(Strategy::RoundRobin).prefer_zone("zone-a");
/// // https:// instances verified against the public roots; `reqwest::Client::new()` does http://
/// let http = ClientTls::reqwest_builder(None).unwrap().build().unwrap();
/// let orders = DiscoveryHttpClient::new(http, &eureka, selector);
/// let response = orders.post("http://orders/api/orders").body("{}").send().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct DiscoveryHttpClient<S> {
    http: reqwest::Client,
    source: S,
    selector: Selector,
    address: Address,
    max_attempts: usize,
    secure_port_for_https: bool,
}

impl<S: InstanceSource> DiscoveryHttpClient<S> {
    /// Spring Cloud LoadBalancer's retry default: one retry, on the next instance.
    pub const DEFAULT_MAX_ATTEMPTS: usize = 2;

    /// A client sending through `http` to instances `selector` picks from `source`; `source`
    /// can be an `EurekaClient`, a reference or an `Arc` to one, or a `Vec<Instance>`.
    pub fn new(http: reqwest::Client, source: S, selector: Selector) -> DiscoveryHttpClient<S> {
        DiscoveryHttpClient {
            http,
            source,
            selector,
            address: Address::HostName,
            max_attempts: Self::DEFAULT_MAX_ATTEMPTS,
            secure_port_for_https: true,
        }
    }

    /// Which address of the instance to connect to (`hostName` by default).
    pub fn address(mut self, address: Address) -> DiscoveryHttpClient<S> {
        self.address = address;
        self
    }

    /// How many instances one call may try (at least 1; 2 by default).
    pub fn max_attempts(mut self, attempts: usize) -> DiscoveryHttpClient<S> {
        self.max_attempts = attempts.max(1);
        self
    }

    /// Whether `https` URLs go to the instance's secure port when it is enabled (the default),
    /// or always to its plain port.
    pub fn secure_port_for_https(mut self, enabled: bool) -> DiscoveryHttpClient<S> {
        self.secure_port_for_https = enabled;
        self
    }

    pub fn selector(&self) -> &Selector {
        &self.selector
    }

    pub fn request<U: IntoUrl>(&self, method: Method, url: U) -> DiscoveryRequest<'_, S> {
        DiscoveryRequest {
            client: self,
            builder: self.http.request(method, url),
        }
    }

    pub fn get<U: IntoUrl>(&self, url: U) -> DiscoveryRequest<'_, S> {
        self.request(Method::GET, url)
    }

    pub fn post<U: IntoUrl>(&self, url: U) -> DiscoveryRequest<'_, S> {
        self.request(Method::POST, url)
    }

    pub fn put<U: IntoUrl>(&self, url: U) -> DiscoveryRequest<'_, S> {
        self.request(Method::PUT, url)
    }

    pub fn delete<U: IntoUrl>(&self, url: U) -> DiscoveryRequest<'_, S> {
        self.request(Method::DELETE, url)
    }

    /// Sends `request`, whose URL host names an application. Retrying needs a copy of the
    /// request, so a streaming body gets one attempt; bytes and string bodies are retried.
    pub async fn execute(&self, request: Request) -> Result<Response, DiscoveryError> {
        let app = request
            .url()
            .host_str()
            .ok_or_else(|| DiscoveryError::NoApplication {
                url: request.url().to_string(),
            })?
            .to_owned();
        let instances = self.source.instances(&app);
        let mut tried: Vec<&str> = Vec::new();
        let mut last_error = None;
        let mut pending = Some(request);
        while let Some(mut request) = pending.take() {
            let chosen = if tried.is_empty() {
                self.selector.choose(&instances)
            } else {
                self.selector.choose_retry(&instances, &tried)
            };
            let Some(instance) = chosen else {
                break;
            };
            // The copy is taken before the URL is rewritten, so the next attempt starts again
            // from the application's name.
            let next = (tried.len() + 1 < self.max_attempts)
                .then(|| request.try_clone())
                .flatten();
            *request.url_mut() = self.instance_url(request.url(), instance)?;
            match self.http.execute(request).await {
                Ok(mut response) => {
                    response.extensions_mut().insert(ServedBy {
                        instance_id: instance.id().to_owned(),
                        attempts: tried.len() + 1,
                    });
                    return Ok(response);
                }
                Err(error) if error.is_connect() => {
                    tracing::debug!(%app, instance = instance.id(), %error, "connection failed; trying another instance");
                    tried.push(instance.id());
                    last_error = Some(error);
                    pending = next;
                }
                Err(source) => return Err(DiscoveryError::Request { app, source }),
            }
        }
        match last_error {
            Some(last) => Err(DiscoveryError::Unreachable {
                app,
                attempts: tried.len(),
                last,
            }),
            None => Err(DiscoveryError::NoInstance { app }),
        }
    }

    fn instance_url(&self, url: &Url, instance: &Instance) -> Result<Url, DiscoveryError> {
        instance_url(url, instance, self.address, self.secure_port_for_https)
    }
}

/// `url` with its host and port replaced by `instance`'s.
fn instance_url(
    url: &Url,
    instance: &Instance,
    address: Address,
    secure_port_for_https: bool,
) -> Result<Url, DiscoveryError> {
    let host = match address {
        Address::HostName => &instance.host_name,
        Address::IpAddr => &instance.ip_addr,
    };
    let port = if url.scheme() == "https" && secure_port_for_https && instance.secure_port.enabled {
        instance.secure_port.number
    } else {
        instance.port.number
    };
    let bad_address = || DiscoveryError::BadAddress {
        app: instance.app.clone(),
        instance: instance.id().to_owned(),
        address: format!("{host}:{port}"),
    };
    let port = u16::try_from(port).map_err(|_| bad_address())?;
    let mut resolved = url.clone();
    // An IPv6 address is a host only in brackets.
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.clone()
    };
    resolved.set_host(Some(&host)).map_err(|_| bad_address())?;
    resolved.set_port(Some(port)).map_err(|()| bad_address())?;
    Ok(resolved)
}

/// A request being built for [`DiscoveryHttpClient`]: reqwest's builder, sent by name.
#[derive(Debug)]
pub struct DiscoveryRequest<'a, S> {
    client: &'a DiscoveryHttpClient<S>,
    builder: RequestBuilder,
}

impl<'a, S: InstanceSource> DiscoveryRequest<'a, S> {
    pub fn header<K, V>(self, key: K, value: V) -> DiscoveryRequest<'a, S>
    where
        HeaderName: TryFrom<K>,
        <HeaderName as TryFrom<K>>::Error: Into<http::Error>,
        HeaderValue: TryFrom<V>,
        <HeaderValue as TryFrom<V>>::Error: Into<http::Error>,
    {
        self.with(|builder| builder.header(key, value))
    }

    pub fn headers(self, headers: HeaderMap) -> DiscoveryRequest<'a, S> {
        self.with(|builder| builder.headers(headers))
    }

    /// The body; give bytes or a string so that a retry can send it again.
    pub fn body<T: Into<Body>>(self, body: T) -> DiscoveryRequest<'a, S> {
        self.with(|builder| builder.body(body))
    }

    /// The timeout of each attempt, from connecting to the end of the response.
    pub fn timeout(self, timeout: Duration) -> DiscoveryRequest<'a, S> {
        self.with(|builder| builder.timeout(timeout))
    }

    /// Any other `reqwest::RequestBuilder` method: `.with(|b| b.basic_auth("u", Some("p")))`.
    pub fn with(
        self,
        build: impl FnOnce(RequestBuilder) -> RequestBuilder,
    ) -> DiscoveryRequest<'a, S> {
        DiscoveryRequest {
            client: self.client,
            builder: build(self.builder),
        }
    }

    pub async fn send(self) -> Result<Response, DiscoveryError> {
        let request = self.builder.build().map_err(DiscoveryError::Build)?;
        self.client.execute(request).await
    }
}
