//! A server per test, and the request bodies real clients send.

use std::path::PathBuf;

use heureka_server::config::{self, Loaded};
use reqwest::{Client, Response};

/// A running server; it stops when the test's runtime ends.
pub struct TestServer {
    pub base: String,
    pub http: Client,
}

impl TestServer {
    /// Starts a server configured by Spring-style `--key=value` arguments.
    pub async fn start(args: &[&str]) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        TestServer::start_on(listener, args).await
    }

    /// Starts a server on a listener bound beforehand, so that peers can name its port.
    pub async fn start_on(listener: tokio::net::TcpListener, args: &[&str]) -> TestServer {
        let port = listener.local_addr().unwrap().port();
        let mut args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
        args.push("--server.address=127.0.0.1".to_owned());
        // A single node unless the test names peers: its only service URL is its own, and it
        // does not register itself (as the Java reference is set up in interop/).
        if !args.iter().any(|arg| arg.contains("service-url")) {
            args.push(format!(
                "--eureka.client.service-url.defaultZone=http://127.0.0.1:{port}/eureka/"
            ));
        }
        if !args.iter().any(|arg| arg.contains("register-with-eureka")) {
            args.push("--eureka.client.register-with-eureka=false".to_owned());
        }
        let empty_dir = empty_dir();
        let Loaded::Run(config) = config::load(&args, &|_| None, &empty_dir).expect("config loads")
        else {
            panic!("expected a runnable config");
        };
        tokio::spawn(heureka_server::serve(
            config,
            listener,
            std::future::pending(),
        ));
        let http = Client::builder().no_gzip().build().unwrap();
        TestServer {
            base: format!("http://127.0.0.1:{port}/eureka"),
            http,
        }
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
        self.http
            .post(self.url(path))
            .header("Content-Type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .unwrap()
    }

    pub async fn get(&self, path: &str, accept: Option<&str>) -> Response {
        let mut request = self.http.get(self.url(path));
        if let Some(accept) = accept {
            request = request.header("Accept", accept);
        }
        request.send().await.unwrap()
    }

    pub async fn get_text(&self, path: &str, accept: Option<&str>) -> (u16, String) {
        let response = self.get(path, accept).await;
        (response.status().as_u16(), response.text().await.unwrap())
    }

    /// The full registry as JSON: what "the registry is unchanged" is checked against.
    pub async fn registry_json(&self) -> String {
        let (status, body) = self.get_text("/apps", Some("application/json")).await;
        assert_eq!(status, 200);
        body
    }

    pub async fn put(&self, path: &str) -> u16 {
        self.http
            .put(self.url(path))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    pub async fn delete(&self, path: &str) -> u16 {
        self.http
            .delete(self.url(path))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }
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

/// A working directory with no config files in it. One for every run, inside cargo's temp
/// directory for tests, and nothing writes to it: a fresh one per process was left in /tmp.
fn empty_dir() -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("empty-cwd");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
