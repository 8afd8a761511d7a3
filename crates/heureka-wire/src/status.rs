//! `GET {base}/status`: the server's own status (Eureka's `StatusInfo`, spec §3.16).
//!
//! The Java server writes it with XStream only: XML under the root
//! `com.netflix.eureka.util.StatusInfo`, the stats as elements named by their keys and the
//! server's own instance as `instanceInfo`; asked for JSON it answers 500. Heureka writes the
//! same XML, and answers JSON with the same three parts plus its peers' replication state.

use heureka_core::{Instance, Millis};

use crate::format::Format;
use crate::json::encode::{instance_body, string};
use crate::json::object::list;
use crate::numbers::{push_i64, push_u64};

/// What the status document shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusInfo {
    /// `generalStats`: `num-of-cpus`, `total-avail-memory`, `current-memory-usage`,
    /// `server-uptime`, in this order.
    pub general_stats: Vec<(String, String)>,
    /// `applicationStats`: `registered-replicas`, `available-replicas`,
    /// `unavailable-replicas`.
    pub application_stats: Vec<(String, String)>,
    /// This server's own instance, when it registers itself.
    pub instance: Option<Instance>,
    /// The replication state of every peer (JSON only).
    pub peers: Vec<PeerStatus>,
}

/// One peer's replication state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerStatus {
    pub url: String,
    pub up: bool,
    pub queue_depth: u64,
    pub dropped_tasks: u64,
    pub batches_sent: u64,
    pub tasks_sent: u64,
    pub failures: u64,
    pub last_success_at: Option<Millis>,
    pub replication_lag_ms: Option<Millis>,
    pub last_error: Option<String>,
}

pub fn encode_status(status: &StatusInfo, format: Format) -> Vec<u8> {
    match format {
        Format::Xml => xml(status),
        Format::Json => json(status),
    }
}

const ROOT: &str = "com.netflix.eureka.util.StatusInfo";

fn xml(status: &StatusInfo) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(format!("<{ROOT}>\n").as_bytes());
    xml_stats(&mut out, "generalStats", &status.general_stats);
    xml_stats(&mut out, "applicationStats", &status.application_stats);
    if let Some(instance) = &status.instance {
        // XStream names a field's element after the field: the instance element, renamed.
        let element = crate::xml::encode::instance(instance);
        let element = String::from_utf8_lossy(&element);
        let inner = element
            .trim_end()
            .strip_prefix("<instance>")
            .and_then(|rest| rest.strip_suffix("</instance>"))
            .unwrap_or("");
        out.extend_from_slice(b"  <instanceInfo>");
        for line in inner.trim_end().lines() {
            if !line.is_empty() {
                out.extend_from_slice(b"\n  ");
                out.extend_from_slice(line.as_bytes());
            }
        }
        out.extend_from_slice(b"\n  </instanceInfo>\n");
    }
    out.extend_from_slice(format!("</{ROOT}>").as_bytes());
    out
}

fn xml_stats(out: &mut Vec<u8>, name: &str, stats: &[(String, String)]) {
    out.extend_from_slice(format!("  <{name}>\n").as_bytes());
    for (key, value) in stats {
        let value = value
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        out.extend_from_slice(format!("    <{key}>{value}</{key}>\n").as_bytes());
    }
    out.extend_from_slice(format!("  </{name}>\n").as_bytes());
}

fn json(status: &StatusInfo) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"{\"generalStats\":");
    json_stats(&mut out, &status.general_stats);
    out.extend_from_slice(b",\"applicationStats\":");
    json_stats(&mut out, &status.application_stats);
    if let Some(instance) = &status.instance {
        out.extend_from_slice(b",\"instanceInfo\":");
        instance_body(&mut out, instance);
    }
    out.extend_from_slice(b",\"peers\":");
    list(&mut out, &status.peers, json_peer);
    out.push(b'}');
    out
}

fn json_stats(out: &mut Vec<u8>, stats: &[(String, String)]) {
    out.push(b'{');
    for (n, (key, value)) in stats.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        string(out, key);
        out.push(b':');
        string(out, value);
    }
    out.push(b'}');
}

pub(crate) fn json_peer(out: &mut Vec<u8>, peer: &PeerStatus) {
    out.extend_from_slice(b"{\"url\":");
    string(out, &peer.url);
    out.extend_from_slice(if peer.up {
        b",\"up\":true"
    } else {
        b",\"up\":false"
    });
    for (name, value) in [
        ("queueDepth", peer.queue_depth),
        ("droppedTasks", peer.dropped_tasks),
        ("batchesSent", peer.batches_sent),
        ("tasksSent", peer.tasks_sent),
        ("failures", peer.failures),
    ] {
        out.extend_from_slice(format!(",\"{name}\":").as_bytes());
        push_u64(out, value);
    }
    for (name, value) in [
        ("lastSuccessAt", peer.last_success_at),
        ("replicationLagMs", peer.replication_lag_ms),
    ] {
        if let Some(value) = value {
            out.extend_from_slice(format!(",\"{name}\":").as_bytes());
            push_i64(out, value);
        }
    }
    if let Some(error) = &peer.last_error {
        out.extend_from_slice(b",\"lastError\":");
        string(out, error);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status() -> StatusInfo {
        StatusInfo {
            general_stats: vec![("num-of-cpus".into(), "2".into())],
            application_stats: vec![("registered-replicas".into(), "http://b/eureka/".into())],
            instance: Some(Instance::new("eureka", "i1", "h", "10.0.0.1", 5)),
            peers: vec![PeerStatus {
                url: "http://b/eureka/".into(),
                up: false,
                last_error: Some("refused: 401".into()),
                ..PeerStatus::default()
            }],
        }
    }

    #[test]
    fn xml_status_has_the_java_root_and_the_instance_as_instance_info() {
        let xml = String::from_utf8(encode_status(&status(), Format::Xml)).unwrap();
        assert!(xml.starts_with("<com.netflix.eureka.util.StatusInfo>\n  <generalStats>\n    <num-of-cpus>2</num-of-cpus>"), "{xml}");
        assert!(
            xml.contains("  <instanceInfo>\n    <instanceId>i1</instanceId>"),
            "{xml}"
        );
        assert!(
            xml.ends_with("  </instanceInfo>\n</com.netflix.eureka.util.StatusInfo>"),
            "{xml}"
        );
    }

    #[test]
    fn json_status_lists_the_peers() {
        let json = String::from_utf8(encode_status(&status(), Format::Json)).unwrap();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["generalStats"]["num-of-cpus"], "2");
        assert_eq!(value["instanceInfo"]["instanceId"], "i1");
        assert_eq!(value["peers"][0]["up"], false);
        assert_eq!(value["peers"][0]["lastError"], "refused: 401");
    }
}
