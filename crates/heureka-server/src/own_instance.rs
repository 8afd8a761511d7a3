//! The server as a client of its own cluster (`eureka.client.register-with-eureka`, Spring's
//! default): a Java Eureka server's embedded client registers it under
//! `spring.application.name`, renews it, and cancels it at shutdown, so every server of a
//! cluster appears in the registry (and the dashboard counts replicas from that).
//!
//! Heureka registers itself in its own registry as a client would; the write path replicates
//! the registration and each renewal to the peers like any other, which is where a Java
//! server's client would have put them. Java's client goes through the first service URL that
//! answers, so with the default URL only a server on 8761 lists itself; here a lone node lists
//! itself on any port (`docs/compat.md` #45): it is alive and serving wherever it runs.

use std::sync::Arc;
use std::time::Duration;

use heureka_core::{InstanceStatus, LeaseInfo, Origin, Port};

use crate::config::Config;
use crate::store::Store;

/// This server's own instance, as Spring's `EurekaInstanceConfigBean` describes it.
pub(crate) fn own_instance(
    config: &Config,
    port: u16,
    now: heureka_core::Millis,
) -> heureka_core::Instance {
    let app = config.application_name.to_lowercase();
    let ip = config
        .instance
        .ip_address
        .map(|ip| ip.to_string())
        .or_else(|| {
            Some(config.server.address)
                .filter(|address| !address.is_unspecified())
                .map(|address| address.to_string())
        })
        .unwrap_or_else(|| "127.0.0.1".to_owned());
    let host = match (&config.instance.hostname, config.instance.prefer_ip_address) {
        (_, true) => ip.clone(),
        (Some(host), false) => host.clone(),
        (None, false) => system_host_name().unwrap_or_else(|| ip.clone()),
    };
    let id = config
        .instance
        .instance_id
        .clone()
        .unwrap_or_else(|| format!("{host}:{app}:{port}"));
    let mut instance = heureka_core::Instance::new(&app, &id, &host, &ip, now);
    instance.status = InstanceStatus::Up;
    instance.port = Port {
        number: u32::from(port),
        enabled: true,
    };
    instance.vip_address = Some(app.clone());
    instance.secure_vip_address = Some(app);
    let base = format!("http://{host}:{port}/");
    instance.home_page_url = Some(base.clone());
    instance.status_page_url = Some(format!("{base}actuator/info"));
    instance.health_check_url = Some(format!("{base}actuator/health"));
    instance.lease_info = LeaseInfo {
        renewal_interval_in_secs: config.instance.lease_renewal_interval_in_seconds,
        duration_in_secs: config.instance.lease_expiration_duration_in_seconds,
        ..LeaseInfo::default()
    };
    instance
}

/// Registers this server, then renews it every renewal interval until the task is aborted.
/// A renewal that finds no lease (evicted during a long pause) registers again, as a
/// client does on 404.
pub(crate) async fn register_and_renew(store: Arc<Store>, instance: heureka_core::Instance) {
    let period = Duration::from_secs(u64::from(instance.lease_info.renewal_interval_in_secs));
    let (app, id) = (instance.app.to_uppercase(), instance.id().to_owned());
    store.write(|registry, now| {
        registry.set_own_instance_id(Some(id.clone()));
        registry.register(instance.clone(), Origin::Client, now);
    });
    let mut timer = tokio::time::interval_at(crate::clock::instant() + period, period);
    loop {
        timer.tick().await;
        let outcome =
            store.write(|registry, now| registry.renew(&app, &id, None, None, Origin::Client, now));
        if outcome != heureka_core::RenewOutcome::Renewed {
            let mut again = instance.clone();
            again.last_dirty_timestamp = store.now();
            store.write(|registry, now| registry.register(again, Origin::Client, now));
        }
    }
}

/// Cancels this server's registration, at shutdown; replicated like a client's cancel.
pub(crate) fn cancel(store: &Store, instance: &heureka_core::Instance) {
    let (app, id) = (instance.app.to_uppercase(), instance.id().to_owned());
    store.write(|registry, now| registry.cancel(&app, &id, Origin::Client, now));
}

/// The machine's host name, as Spring's `InetUtils` would find it first.
pub(crate) fn system_host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
}
