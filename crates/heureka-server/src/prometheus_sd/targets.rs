//! What a Prometheus HTTP SD answer holds, given the registry's applications and a query. Pure.
//!
//! Only instances UP as readers see them (health verdicts and overrides applied, the status
//! the registry's documents carry) are targets. One target group per instance, since every
//! instance's labels differ. The target is the
//! address `eureka_sd_configs` scrapes, `hostName:port` (the plain port, enabled or not), with
//! the prometheus.io conventions applied from the instance's metadata:
//!
//! * `prometheus.io/port` replaces the port (a number from 1 to 65535; anything else is
//!   ignored, so a typo scrapes the instance's port rather than dropping it);
//! * `prometheus.io/path` sets `__metrics_path__` (when it starts with `/`);
//! * `prometheus.io/scheme` sets `__scheme__` (`http` or `https` only: Prometheus refuses a
//!   target with another scheme).

use heureka_core::{Application, Instance, InstanceStatus};
use heureka_wire::Target;

use super::query::SdQuery;

const PORT_KEY: &str = "prometheus.io/port";
const PATH_KEY: &str = "prometheus.io/path";
const SCHEME_KEY: &str = "prometheus.io/scheme";

/// The targets answering `query`: the UP instances it selects, application by application as
/// `applications` lists them (the registry's order: by name, instances by id); heureka-wire
/// writes each as a group.
pub(crate) fn targets<'a>(applications: &'a [Application], query: &SdQuery) -> Vec<Target<'a>> {
    applications
        .iter()
        .filter(|application| query.selects_app(&application.name))
        .flat_map(|application| {
            application
                .instances
                .iter()
                .filter(|instance| instance.status == InstanceStatus::Up)
                .filter(|instance| query.selects(instance))
                .map(|instance| target(&application.name, instance))
        })
        .collect()
}

fn target<'a>(app: &'a str, instance: &'a Instance) -> Target<'a> {
    let metadata = |key: &str| instance.metadata.get(key).map(String::as_str);
    let port = metadata(PORT_KEY)
        .and_then(|port| port.trim().parse::<u16>().ok())
        .filter(|port| *port > 0)
        .map_or(instance.port.number, u32::from);
    Target {
        app,
        instance,
        address: address(&instance.host_name, port),
        metrics_path: metadata(PATH_KEY).filter(|path| path.starts_with('/')),
        scheme: metadata(SCHEME_KEY).filter(|s| matches!(*s, "http" | "https")),
    }
}

/// `host:port`, an IPv6 address in brackets (Go's `net.JoinHostPort`, which Prometheus uses).
fn address(host: &str, port: u32) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

#[cfg(test)]
mod tests;
