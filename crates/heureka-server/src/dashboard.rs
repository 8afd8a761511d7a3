//! The dashboard (`docs/dashboard.md`): one page served by the binary at `/` (or
//! `eureka.dashboard.path`, off with `eureka.dashboard.enabled=false`), with its script and
//! stylesheet embedded at compile time, so running it needs no build step and no network.
//!
//! The page reads what every client reads (`{base}/apps`, `{base}/status`), the event stream
//! (`{base}/events`) for live updates, and two small documents that exist for it:
//! `{base}/dashboard/summary` (System Status: environment, data center, uptime and the
//! self-preservation numbers) and `{base}/dashboard/lastn` (Spring's last 1,000 registered
//! and cancelled leases). Its actions are the ordinary REST calls, with the same auth.
//!
//! This module is what the dashboard is (its assets and the node facts it shows); its routes
//! are `handlers/dashboard.rs`.

use heureka_core::Millis;

use crate::config::Config;

const PAGE: &str = include_str!("dashboard/index.html");
pub(crate) const SCRIPT: &str = include_str!("dashboard/dashboard.js");
pub(crate) const STYLE: &str = include_str!("dashboard/dashboard.css");

/// What the dashboard shows that the rest of the state does not hold.
#[derive(Debug)]
pub(crate) struct DashboardInfo {
    pub(crate) enabled: bool,
    /// `/` or a path without a trailing `/`.
    pub(crate) path: String,
    pub(crate) environment: String,
    pub(crate) datacenter: String,
    pub(crate) node_host_name: String,
    pub(crate) node_ip_addr: String,
    /// The page with the base path filled in, rendered once.
    pub(crate) page: String,
}

impl DashboardInfo {
    pub(crate) fn new(config: &Config, port: u16, now: Millis) -> DashboardInfo {
        let node = crate::own_instance::own_instance(config, port, now);
        let dashboard = &config.dashboard;
        let lastn = if dashboard.path == "/" {
            "/lastn".to_owned()
        } else {
            format!("{}/lastn", dashboard.path)
        };
        DashboardInfo {
            enabled: dashboard.enabled,
            path: dashboard.path.clone(),
            environment: dashboard.environment.clone(),
            datacenter: dashboard.datacenter.clone(),
            node_host_name: node.host_name,
            node_ip_addr: node.ip_addr,
            page: PAGE
                .replace("__BASE__", &config.heureka.base_path)
                .replace("__HOME__", &dashboard.path)
                .replace("__LASTN__", &lastn),
        }
    }
}
