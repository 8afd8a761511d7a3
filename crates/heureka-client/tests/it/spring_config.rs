//! A client configured as a Spring Boot application is (an `application.yml`, environment
//! variables, arguments) registers what the Spring client would.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use heureka_client::{ClientConfig, EurekaClient};

use crate::support::Server;

#[tokio::test]
async fn a_client_configured_from_application_yml_registers_as_spring_would() {
    let server = Server::start().await;
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "heureka-client-it-spring-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("application.yml"),
        "spring.application.name: spring-demo\n\
         eureka:\n  instance:\n    hostname: 127.0.0.1\n    ip-address: 127.0.0.1\n    \
         lease-renewal-interval-in-seconds: 1\n    metadata-map:\n      zone: zone1\n  \
         client:\n    registry-fetch-interval-seconds: 1\n",
    )
    .unwrap();
    let env = BTreeMap::from([(
        "EUREKA_CLIENT_SERVICEURL_DEFAULTZONE".to_owned(),
        server.service_url(),
    )]);
    let config = ClientConfig::from_spring(
        &[
            "--server.port=8123".to_owned(),
            "--spring.cloud.client.hostname=host-a".to_owned(),
        ],
        &|name| env.get(name).cloned(),
        &dir,
    )
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let client = EurekaClient::start(config).await.unwrap();

    let instance = server
        .instance("SPRING-DEMO", "host-a:spring-demo:8123")
        .await
        .expect("registered under Spring's default instance id");
    assert_eq!(instance["status"], "UP");
    assert_eq!(instance["hostName"], "127.0.0.1");
    assert_eq!(instance["port"]["$"], 8123);
    assert_eq!(instance["vipAddress"], "spring-demo");
    assert_eq!(
        instance["statusPageUrl"],
        "http://127.0.0.1:8123/actuator/info"
    );
    assert_eq!(
        instance["healthCheckUrl"],
        "http://127.0.0.1:8123/actuator/health"
    );
    assert_eq!(instance["metadata"]["zone"], "zone1");
    assert_eq!(instance["metadata"]["management.port"], "8123");
    assert_eq!(instance["leaseInfo"]["renewalIntervalInSecs"], 1);
    assert_eq!(instance["dataCenterInfo"]["name"], "MyOwn");
    client.shutdown().await.unwrap();
}
