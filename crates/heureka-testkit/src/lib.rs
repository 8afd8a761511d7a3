//! What Heureka's test suites share, written once: a server started in this process on a free
//! port ([`TestServer`]), bounded polling ([`eventually`]), free ports and dead URLs, an empty
//! working directory ([`empty_dir!`]), the register body Spring clients send
//! ([`spring_body`]), test certificates ([`pki::TestPki`]), and a TCP proxy whose connections a
//! test can cut ([`Proxy`]).
//!
//! A dev-dependency of the server, the client and the binary, and itself dependent on no
//! Heureka crate: the server's tests use it, so depending on the server would close a cycle.
//! Starting the server is therefore a type parameter ([`Serve`]), which each test crate
//! implements with [`in_process_server!`].

pub mod pki;
mod proxy;
mod temp_dir;

use std::future::Future;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

use reqwest::{Client, RequestBuilder, Response};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use proxy::Proxy;
pub use temp_dir::TempDir;

/// How long any one step of a test may take before it gives up: a bound against hangs, far
/// above what the step needs, never a measure of speed.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Rounds of [`eventually`]'s polling, [`POLL_INTERVAL`] apart: at least 20 s of waiting, a
/// bound so that a broken server or client fails the test instead of hanging it.
const POLL_ROUNDS: usize = 400;
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// Polls `check` until it holds; panics naming `what` after [`POLL_ROUNDS`] rounds.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    for _ in 0..POLL_ROUNDS {
        if check().await {
            return;
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
    panic!("never happened: {what}");
}

/// A port of 127.0.0.1 that was free a moment ago: bound, read and released.
///
/// Never the same port twice in one test process: the kernel may offer a port again as soon as
/// its probe closes, and tests running side by side must not both start a node on it.
pub fn free_port() -> u16 {
    static HANDED_OUT: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    for _ in 0..1000 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|probe| probe.local_addr())
            .map(|address| address.port())
            .expect("a free port");
        let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
        if !handed_out.contains(&port) {
            handed_out.push(port);
            return port;
        }
    }
    panic!("no port left that this test process has not handed out");
}

/// A Eureka URL on 127.0.0.1 where nothing listens: the port was bound and released.
pub fn dead_url() -> String {
    format!("http://127.0.0.1:{}/eureka/", free_port())
}

/// The arguments that make a server on `port` a standalone node: it listens on 127.0.0.1, its
/// own URL is its only service URL (so it has no peers and serves reads at once) and it does
/// not register itself (as the Java reference is set up in interop/). A service URL or
/// `register-with-eureka` already in `args` is kept.
pub fn standalone_args(port: u16, args: &[String]) -> Vec<String> {
    let mut standalone = vec!["--server.address=127.0.0.1".to_owned()];
    if !args.iter().any(|arg| arg.contains("service-url")) {
        standalone.push(format!(
            "--eureka.client.service-url.defaultZone=http://127.0.0.1:{port}/eureka/"
        ));
    }
    if !args.iter().any(|arg| arg.contains("register-with-eureka")) {
        standalone.push("--eureka.client.register-with-eureka=false".to_owned());
    }
    standalone
}

/// A working directory with no config files in it, `empty-cwd` under `target_tmpdir`. One for
/// every run, and nothing writes to it: a fresh one per process was left in /tmp.
pub fn empty_dir_in(target_tmpdir: &str) -> PathBuf {
    let dir = Path::new(target_tmpdir).join("empty-cwd");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// [`empty_dir_in`] cargo's temp directory for tests, which only the test crate knows
/// (`CARGO_TARGET_TMPDIR` is set when integration tests compile, not libraries).
#[macro_export]
macro_rules! empty_dir {
    () => {
        $crate::empty_dir_in(env!("CARGO_TARGET_TMPDIR"))
    };
}

/// What a server started in this process stops on: [`TestServer::stop`].
pub type Shutdown = Pin<Box<dyn Future<Output = ()> + Send>>;

/// How a test crate starts the server: loads the configuration from `args` (in the empty
/// working directory, so no config file of the machine's is read) and spawns it on `listener`
/// until `shutdown`. Implemented by [`in_process_server!`].
pub trait Serve {
    fn serve(
        args: &[String],
        listener: TcpListener,
        shutdown: Shutdown,
    ) -> JoinHandle<std::io::Result<()>>;
}

/// Declares `$name`, the [`Serve`] that runs `heureka_server` in this process. A macro because
/// the testkit cannot name `heureka_server` (see the crate's docs); the test crate can.
#[macro_export]
macro_rules! in_process_server {
    ($name:ident) => {
        /// `heureka_server` in this process, for [`heureka_testkit::TestServer`].
        pub struct $name;

        impl $crate::Serve for $name {
            fn serve(
                args: &[String],
                listener: ::tokio::net::TcpListener,
                shutdown: $crate::Shutdown,
            ) -> ::tokio::task::JoinHandle<::std::io::Result<()>> {
                let cwd = $crate::empty_dir!();
                let loaded = ::heureka_server::config::load(args, &|_| None, &cwd);
                let ::heureka_server::config::Loaded::Run(config) = loaded.expect("config loads")
                else {
                    panic!("expected a runnable config");
                };
                ::tokio::spawn(::heureka_server::serve(config, listener, shutdown))
            }
        }
    };
}

/// A server running in this process, started by `S`, until [`TestServer::stop`] or the end of
/// the test's runtime (dropping the handle does not stop it).
pub struct TestServer<S> {
    pub port: u16,
    /// `http://127.0.0.1:<port>/eureka`.
    pub base: String,
    /// A client that asks for no compression, so bodies are read as the server wrote them.
    pub http: Client,
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
    serve: PhantomData<S>,
}

impl<S: Serve> TestServer<S> {
    /// Starts a server configured by Spring-style `--key=value` arguments, on a free port.
    pub async fn start(args: &[&str]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::start_on(listener, args).await
    }

    /// Starts a server on a listener bound beforehand, so that peers can name its port. It is
    /// a standalone node ([`standalone_args`]) unless `args` say otherwise.
    pub async fn start_on(listener: TcpListener, args: &[&str]) -> Self {
        let port = listener.local_addr().unwrap().port();
        let mut args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
        args.extend(standalone_args(port, &args));
        let (stop, stopped) = oneshot::channel::<()>();
        let shutdown: Shutdown = Box::pin(async {
            // A dropped handle is not a request to stop: the server runs on to the runtime's end.
            if stopped.await.is_err() {
                std::future::pending::<()>().await;
            }
        });
        let task = S::serve(&args, listener, shutdown);
        TestServer {
            port,
            base: format!("http://127.0.0.1:{port}/eureka"),
            http: Client::builder().no_gzip().build().unwrap(),
            stop,
            task,
            serve: PhantomData,
        }
    }

    /// Stops the server and waits until it has closed its port.
    pub async fn stop(self) {
        self.stop.send(()).unwrap();
        self.task.await.unwrap().unwrap();
    }

    /// The server's service URL, as a client is configured with it.
    pub fn service_url(&self) -> String {
        format!("{}/", self.base)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A URL outside the API's base path: `/actuator/health`, `/metrics`.
    pub fn root_url(&self, path: &str) -> String {
        let origin = self.base.strip_suffix("/eureka").unwrap_or(&self.base);
        format!("{origin}{path}")
    }

    /// Registers an instance with a Spring-client-shaped JSON body; asserts 204.
    pub async fn register(&self, app: &str, id: &str) {
        let response = self
            .post_json(&format!("/apps/{app}"), &spring_body(app, id))
            .await;
        assert_eq!(response.status(), 204, "register {app}/{id}");
    }

    pub async fn post_json(&self, path: &str, body: &str) -> Response {
        self.request(reqwest::Method::POST, path)
            .header("Content-Type", "application/json")
            .body(body.to_owned())
            .sent()
            .await
    }

    pub async fn get(&self, path: &str, accept: Option<&str>) -> Response {
        let mut request = self.request(reqwest::Method::GET, path);
        if let Some(accept) = accept {
            request = request.header("Accept", accept);
        }
        request.sent().await
    }

    pub async fn get_text(&self, path: &str, accept: Option<&str>) -> (u16, String) {
        let response = self.get(path, accept).await;
        (response.status().as_u16(), response.text().await.unwrap())
    }

    /// [`TestServer::get_text`] asking for JSON.
    pub async fn get_json(&self, path: &str) -> (u16, String) {
        self.get_text(path, Some("application/json")).await
    }

    /// `path` read as JSON; asserts 200.
    pub async fn json_ok(&self, path: &str) -> String {
        let (status, body) = self.get_json(path).await;
        assert_eq!(status, 200, "{path}: {body}");
        body
    }

    /// The status `app/id` is served with; `None` when it is not (any answer but 200).
    pub async fn instance_status(&self, app: &str, id: &str) -> Option<String> {
        let (code, body) = self.get_json(&format!("/apps/{app}/{id}")).await;
        if code != 200 {
            return None;
        }
        let start = body.find("\"status\":\"")? + 10;
        Some(body[start..].split('"').next()?.to_owned())
    }

    /// The full registry as JSON: what "the registry is unchanged" is checked against.
    pub async fn registry_json(&self) -> String {
        let (status, body) = self.get_json("/apps").await;
        assert_eq!(status, 200);
        body
    }

    /// Overrides the status of `app/id` to `OUT_OF_SERVICE`; asserts 200.
    pub async fn take_out_of_service(&self, app: &str, id: &str) {
        let path = format!("/apps/{app}/{id}/status?value=OUT_OF_SERVICE");
        assert_eq!(self.put(&path).await, 200, "{path}");
    }

    /// A request to `path` under the API's base, to be finished with headers and a body and
    /// sent with [`Sent::sent`].
    pub fn request(&self, method: reqwest::Method, path: &str) -> RequestBuilder {
        self.http.request(method, self.url(path))
    }

    /// `GET path` authenticated as `user` with `password` (HTTP Basic).
    pub async fn get_as(&self, path: &str, user: &str, password: &str) -> Response {
        self.request(reqwest::Method::GET, path)
            .basic_auth(user, Some(password))
            .sent()
            .await
    }

    /// The status a bare `method` on `path` answers.
    pub async fn status(&self, method: reqwest::Method, path: &str) -> u16 {
        self.request(method, path).sent().await.status().as_u16()
    }

    pub async fn put(&self, path: &str) -> u16 {
        self.status(reqwest::Method::PUT, path).await
    }

    pub async fn delete(&self, path: &str) -> u16 {
        self.status(reqwest::Method::DELETE, path).await
    }
}

/// Sending a request a test built, where a failure to send is the test's failure.
pub trait Sent {
    /// Sends the request; panics if it cannot be sent or no answer comes.
    fn sent(self) -> impl Future<Output = Response> + Send;
}

impl Sent for RequestBuilder {
    async fn sent(self) -> Response {
        self.send().await.unwrap()
    }
}

/// Asserts `response` is a 401 that asks for HTTP Basic credentials.
pub fn assert_basic_challenge(response: &Response) {
    assert_eq!(response.status(), 401);
    let challenge = response.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.starts_with("Basic"), "{challenge}");
}

/// A register body shaped like Spring Cloud's RestClient sends it (nulls, numeric timestamps).
pub fn spring_body(app: &str, id: &str) -> String {
    format!(
        r#"{{"instance":{{"instanceId":"{id}","app":"{app}","appGroupName":null,"ipAddr":"10.0.0.5","sid":"na",
"homePageUrl":"http://10.0.0.5:8080/","statusPageUrl":"http://10.0.0.5:8080/actuator/info",
"healthCheckUrl":"http://10.0.0.5:8080/actuator/health","secureHealthCheckUrl":null,"vipAddress":"{vip}",
"secureVipAddress":"{vip}","countryId":1,
"dataCenterInfo":{{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}},
"hostName":"10.0.0.5","status":"UP","overriddenStatus":"UNKNOWN",
"leaseInfo":{{"renewalIntervalInSecs":30,"durationInSecs":90,"registrationTimestamp":0,"lastRenewalTimestamp":0,
"evictionTimestamp":0,"serviceUpTimestamp":0}},"isCoordinatingDiscoveryServer":false,
"lastUpdatedTimestamp":1714550399000,"lastDirtyTimestamp":1714550399000,"actionType":null,"asgName":null,
"port":{{"$":8080,"@enabled":"true"}},"securePort":{{"$":443,"@enabled":"false"}},
"metadata":{{"management.port":"8080"}}}}}}"#,
        vip = app.to_lowercase()
    )
}

/// A table of tests that differ only in their values: one `#[tokio::test]` per row
/// `name => check;`, whose body awaits `check`, so that each row runs and is reported under its
/// own name. Attributes and doc comments before a row go to its test.
#[macro_export]
macro_rules! async_tests {
    ($($(#[$meta:meta])* $name:ident => $check:expr;)*) => {
        $(
            $(#[$meta])*
            #[::tokio::test]
            async fn $name() {
                $check.await;
            }
        )*
    };
}

/// [`spring_body`] with a `blob` of `size` bytes more in its metadata: a large registration.
pub fn spring_body_with_blob(app: &str, id: &str, size: usize) -> String {
    let metadata = format!(r#""management.port":"8080","blob":"{}""#, "b".repeat(size));
    spring_body(app, id).replace(r#""management.port":"8080""#, &metadata)
}
