//! The server's health checks in Heureka's own JSON: what a node answers a peer that asks
//! whether it checks (`GET {base}/peerreplication/health-checks`), and what it shows of its
//! probes (`GET {base}/dashboard/health-checks`).
//!
//! ```json
//! {"node":3735928559,"checking":true}
//! {"enabled":true,"suspended":false,"reason":"","checkers":3,"probes":[{"app":"ORDERS",
//!   "id":"o1","target":"GET http://10.0.0.7:8080/actuator/health","health":"PASSING",
//!   "passed":true,"detail":"200","latencyMs":3,"at":1714550400000}]}
//! ```
//!
//! A probe refused because the instance's address is outside
//! `heureka.health-checks.allowed-networks` is `"passed":false,"refused":true`, with the
//! reason as its `detail`; `refused` is left out otherwise.

use heureka_core::{Health, Millis};

use crate::error::DecodeError;
use crate::json::decode::parse;
use crate::json::object::{field_i64, field_str, field_u64};
use crate::json::tree::Node;

/// `{"node":…,"checking":…}`: the node's tag and whether it checks instances.
pub fn encode_checker(node: u32, checking: bool) -> Vec<u8> {
    format!(r#"{{"node":{node},"checking":{checking}}}"#).into_bytes()
}

/// Reads a peer's [`encode_checker`] answer.
pub fn decode_checker(body: &[u8]) -> Result<(u32, bool), DecodeError> {
    let root = parse(body)?;
    let node = match root.get("node") {
        Some(Node::Int(node)) => {
            u32::try_from(*node).map_err(|_| DecodeError::field("node", "is out of range"))?
        }
        _ => return Err(DecodeError::field("node", "is not an integer")),
    };
    let checking = match root.get("checking") {
        Some(Node::Bool(checking)) => *checking,
        _ => return Err(DecodeError::field("checking", "is not a boolean")),
    };
    Ok((node, checking))
}

/// What this node's health checks are doing, for the dashboard.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HealthChecksView {
    pub enabled: bool,
    /// The guard holds: no instance is marked DOWN (`reason` says why).
    pub suspended: bool,
    pub reason: String,
    /// Nodes sharing the checks, this one included.
    pub checkers: usize,
    /// The instances this node probes, by app and id.
    pub probes: Vec<ProbeView>,
}

/// One instance's latest probe from this node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeView {
    pub app: String,
    pub id: String,
    /// `GET <url>` or `connect <host>:<port>`.
    pub target: String,
    /// The verdict the registry holds.
    pub health: Health,
    pub passed: bool,
    /// Not probed: its address is outside the networks this node may probe (`detail` says
    /// which); the instance gets no verdict.
    pub refused: bool,
    /// The answer's status code, or why there was none.
    pub detail: String,
    pub latency_ms: u64,
    pub at: Millis,
    /// Since when its probes have failed, if they do.
    pub failing_since: Option<Millis>,
}

pub fn encode_health_checks(view: &HealthChecksView) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 + view.probes.len() * 192);
    out.extend_from_slice(format!(r#"{{"enabled":{}"#, view.enabled).as_bytes());
    out.extend_from_slice(format!(r#","suspended":{}"#, view.suspended).as_bytes());
    field_str(&mut out, "reason", &view.reason);
    field_u64(&mut out, "checkers", view.checkers as u64);
    out.extend_from_slice(br#","probes":["#);
    for (n, probe) in view.probes.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#"{"app":"#);
        crate::json::encode::string(&mut out, &probe.app);
        field_str(&mut out, "id", &probe.id);
        field_str(&mut out, "target", &probe.target);
        field_str(&mut out, "health", probe.health.as_str());
        out.extend_from_slice(format!(r#","passed":{}"#, probe.passed).as_bytes());
        if probe.refused {
            out.extend_from_slice(br#","refused":true"#);
        }
        field_str(&mut out, "detail", &probe.detail);
        field_u64(&mut out, "latencyMs", probe.latency_ms);
        field_i64(&mut out, "at", probe.at);
        if let Some(since) = probe.failing_since {
            field_i64(&mut out, "failingSince", since);
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checker_answer_reads_back() {
        assert_eq!(
            decode_checker(&encode_checker(u32::MAX, true)).unwrap(),
            (u32::MAX, true)
        );
    }

    #[test]
    fn a_checker_answer_without_a_node_is_refused() {
        let error = decode_checker(br#"{"checking":true}"#).unwrap_err();
        assert_eq!(error.to_string(), "node is not an integer");
    }

    #[test]
    fn a_view_is_one_json_object_with_every_probe() {
        let view = HealthChecksView {
            enabled: true,
            checkers: 2,
            probes: vec![ProbeView {
                app: "ORDERS".to_owned(),
                id: "o\"1".to_owned(),
                target: "connect 10.0.0.7:8080".to_owned(),
                health: Health::Failing,
                passed: false,
                refused: false,
                detail: "connection refused".to_owned(),
                latency_ms: 1,
                at: 5,
                failing_since: Some(2),
            }],
            ..HealthChecksView::default()
        };
        let text = String::from_utf8(encode_health_checks(&view)).unwrap();
        assert_eq!(
            text,
            r#"{"enabled":true,"suspended":false,"reason":"","checkers":2,"probes":[{"app":"ORDERS","id":"o\"1","target":"connect 10.0.0.7:8080","health":"FAILING","passed":false,"detail":"connection refused","latencyMs":1,"at":5,"failingSince":2}]}"#
        );
    }
}
