//! The instance a client registers, built from its [`ClientConfig`] as Spring Cloud builds it
//! (`InstanceInfoFactory` and the URLs `EurekaClientAutoConfiguration` sets): the configured
//! status, ports, lease, metadata, VIP addresses and absolute page URLs, in the `MyOwn` data
//! center (`../shared/spec/clients.md` §3.2).

use std::time::Duration;

use heureka_core::{Instance, Millis, Port};

use crate::config::ClientConfig;

/// What an explicit URL may say in place of the host name (Netflix's
/// `${<namespace>hostname}` with Spring's namespace `eureka.`).
const HOST_NAME_PLACEHOLDER: &str = "${eureka.hostname}";

/// The instance as Spring registers it once started, dirty as of `now`.
pub(crate) fn own_instance(config: &ClientConfig, now: Millis) -> Instance {
    let mut instance = Instance::new(
        &config.app_name,
        &config.instance_id,
        host_name(config),
        &config.ip_addr,
        now,
    );
    instance.status = config.initial_status;
    instance.port = Port {
        number: u32::from(config.port),
        enabled: config.port_enabled,
    };
    instance.secure_port = Port {
        number: u32::from(config.secure_port),
        enabled: config.secure_port_enabled,
    };
    instance.lease_info.renewal_interval_in_secs = whole_secs(config.lease_renewal_interval);
    instance.lease_info.duration_in_secs = whole_secs(config.lease_duration);
    instance.metadata = config.metadata.clone();
    instance.vip_address = Some(config.vip_address.clone()).filter(|vip| !vip.is_empty());
    instance.secure_vip_address =
        Some(config.secure_vip_address.clone()).filter(|vip| !vip.is_empty());

    let urls = &config.urls;
    let host = host_name(config);
    let plain = |port: u16, path: &str| format!("http://{host}:{port}{path}");
    let management_port = urls.management_port.unwrap_or(config.port);
    instance.home_page_url = Some(explicit_or(&urls.home_page, config, || {
        plain(config.port, &urls.home_page_path)
    }));
    instance.status_page_url = Some(explicit_or(&urls.status_page, config, || {
        plain(management_port, &urls.status_page_path)
    }));
    instance.health_check_url = match &urls.health_check {
        Some(explicit) => Some(with_host(explicit, config)),
        None => config
            .port_enabled
            .then(|| plain(management_port, &urls.health_check_path)),
    };
    instance.secure_health_check_url = match &urls.secure_health_check {
        Some(explicit) => Some(with_host(explicit, config)),
        None => config.secure_port_enabled.then(|| {
            let port = urls.management_port.unwrap_or(config.secure_port);
            format!("https://{host}:{port}{}", urls.health_check_path)
        }),
    };
    instance
}

fn explicit_or(
    explicit: &Option<String>,
    config: &ClientConfig,
    relative: impl FnOnce() -> String,
) -> String {
    match explicit {
        Some(url) => with_host(url, config),
        None => relative(),
    }
}

fn with_host(url: &str, config: &ClientConfig) -> String {
    url.replace(HOST_NAME_PLACEHOLDER, host_name(config))
}

/// The host name registered, and the host of the page URLs: the IP address with
/// `prefer_ip_address`, as Spring's `EurekaInstanceConfigBean.getHostname` answers.
fn host_name(config: &ClientConfig) -> &str {
    if config.prefer_ip_address {
        &config.ip_addr
    } else {
        &config.host_name
    }
}

fn whole_secs(duration: Duration) -> u32 {
    u32::try_from(duration.as_secs()).unwrap_or(u32::MAX).max(1)
}

#[cfg(test)]
mod tests;
