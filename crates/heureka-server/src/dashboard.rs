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
//! Every namespace serves the page under its own path (`{prefix}/{name}/`, `namespaces/`):
//! the page carries the namespace it is in and the base its reads go to, so the same script
//! shows one namespace's registry, and lists the namespaces (`GET {prefix}`) to switch.
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
    /// `heureka.base-path`, where each namespace's API is under its root.
    base_path: String,
    /// `heureka.namespaces.path-prefix`: the listing, and the root of every namespace.
    namespaces_prefix: String,
    /// The default namespace's page (unprefixed), rendered once.
    pub(crate) page: String,
}

impl DashboardInfo {
    pub(crate) fn new(config: &Config, port: u16, now: Millis) -> DashboardInfo {
        let node = crate::own_instance::own_instance(config, port, now);
        let dashboard = &config.dashboard;
        let mut info = DashboardInfo {
            enabled: dashboard.enabled,
            path: dashboard.path.clone(),
            environment: dashboard.environment.clone(),
            datacenter: dashboard.datacenter.clone(),
            node_host_name: node.host_name,
            node_ip_addr: node.ip_addr,
            base_path: config.heureka.base_path.clone(),
            namespaces_prefix: config.heureka.namespaces.path_prefix.clone(),
            page: String::new(),
        };
        info.page = info.render("", crate::namespace_name::DEFAULT);
        info
    }

    /// The page of namespace `name` (valid, lower-case): under `{prefix}/{name}`, or
    /// unprefixed for `default`, which is one namespace under either path.
    pub(crate) fn page_in(&self, name: &str) -> String {
        if name == crate::namespace_name::DEFAULT {
            return self.page.clone();
        }
        self.render(&format!("{}/{name}", self.namespaces_prefix), name)
    }

    /// The page with its paths under `root` (empty: unprefixed).
    fn render(&self, root: &str, name: &str) -> String {
        let home = if self.path == "/" {
            format!("{root}/")
        } else {
            format!("{root}{}", self.path)
        };
        let lastn = if self.path == "/" {
            format!("{root}/lastn")
        } else {
            format!("{root}{}/lastn", self.path)
        };
        PAGE.replace("__BASE__", &format!("{root}{}", self.base_path))
            .replace("__HOME__", &home)
            .replace("__LASTN__", &lastn)
            .replace("__PATH__", &self.path)
            .replace("__NAMESPACE__", name)
            .replace("__PREFIX__", &self.namespaces_prefix)
    }
}
