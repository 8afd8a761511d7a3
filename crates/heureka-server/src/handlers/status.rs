//! `GET {base}/status`: this server's own status, with its peers (spec §3.16).

use axum::response::Response;
use heureka_core::Millis;
use heureka_wire::{PeerStatus, StatusInfo};
use url::Url;

use crate::handlers::request::Headers;
use crate::handlers::request::Ns;
use crate::handlers::response::document;
use crate::http::negotiate;
use crate::replication::PeerState;
use crate::state::SharedState;

/// XML by default, as the Java server (which only has XML) answers; JSON on request.
pub(crate) async fn status(Ns(state): Ns, Headers(headers): Headers) -> Response {
    let format = negotiate::instance_format(&headers);
    let info = status_info(&state);
    document(format, heureka_wire::encode_status(&info, format))
}

fn status_info(state: &SharedState) -> StatusInfo {
    let now = state.store.now();
    let peers = state.replication.peer_states();
    let (instance, available) = {
        let registry = state.store.read();
        let instance = registry
            .own_instance_id()
            .and_then(|id| registry.instance_by_id(id, now));
        let own_app = registry.application(&state.node.application_name);
        let available: Vec<bool> = peers
            .iter()
            .map(|peer| {
                own_app.as_ref().is_some_and(|app| {
                    app.instances
                        .iter()
                        .any(|i| is_at(&peer.url, &i.host_name, &i.ip_addr, i.port.number))
                })
            })
            .collect();
        (instance, available)
    };
    let listed = |up: bool| -> String {
        peers
            .iter()
            .zip(&available)
            .filter(|(_, available)| **available == up)
            .map(|(peer, _)| format!("{},", peer.url))
            .collect()
    };
    StatusInfo {
        general_stats: vec![
            ("num-of-cpus".into(), cpus().to_string()),
            (
                "total-avail-memory".into(),
                format!("{}mb", total_memory_mb()),
            ),
            ("current-memory-usage".into(), memory_usage()),
            ("server-uptime".into(), uptime(now - state.node.started_at)),
        ],
        application_stats: vec![
            (
                "registered-replicas".into(),
                peers
                    .iter()
                    .map(|peer| peer.url.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            ("available-replicas".into(), listed(true)),
            ("unavailable-replicas".into(), listed(false)),
        ],
        instance,
        peers: peers.iter().map(peer_status).collect(),
    }
}

/// Eureka counts a peer as available when an instance of the server's own app runs on the
/// peer URL's host; Heureka also compares the port, so that nodes sharing a host are told
/// apart.
fn is_at(peer_url: &str, host: &str, ip: &str, port: u32) -> bool {
    let Ok(url) = Url::parse(peer_url) else {
        return false;
    };
    let same_host = url
        .host_str()
        .is_some_and(|peer_host| peer_host.eq_ignore_ascii_case(host) || peer_host == ip);
    same_host && url.port_or_known_default().map(u32::from) == Some(port)
}

pub(crate) fn peer_status(peer: &PeerState) -> PeerStatus {
    PeerStatus {
        url: peer.url.clone(),
        up: peer.up,
        queue_depth: peer.queue_depth as u64,
        dropped_tasks: peer.dropped_tasks,
        batches_sent: peer.batches_sent,
        tasks_sent: peer.tasks_sent,
        failures: peer.failures,
        last_success_at: peer.last_success_at,
        replication_lag_ms: peer.replication_lag_ms,
        last_error: peer.last_error.clone(),
    }
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `MemTotal` of `/proc/meminfo`, in MiB (Java shows its heap limit here).
fn total_memory_mb() -> u64 {
    proc_kib("/proc/meminfo", "MemTotal:") / 1024
}

/// Resident memory, and its share of the total, as Java's `123mb (45%)`.
fn memory_usage() -> String {
    let rss = proc_kib("/proc/self/status", "VmRSS:") / 1024;
    let total = total_memory_mb().max(1);
    format!("{rss}mb ({}%)", rss * 100 / total)
}

fn proc_kib(file: &str, field: &str) -> u64 {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|line| line.starts_with(field))
                .and_then(|line| line.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// `HH:MM`, as Eureka prints uptime.
fn uptime(elapsed_ms: Millis) -> String {
    let minutes = elapsed_ms.max(0) / 60_000;
    format!("{:02}:{:02}", minutes / 60, minutes % 60)
}
