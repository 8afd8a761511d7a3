//! Spring Boot Actuator's documents, which operators' tooling (Kubernetes probes, load
//! balancers, dashboards) already reads: `/actuator/health` (`{"status":"UP","components":{…}}`,
//! Boot's v3 shape) and `/actuator/info` (`{"app":…,"build":…,"git":…}`).
//!
//! Written by hand, status first, as Boot writes them.

use crate::json::encode::string;
use crate::json::object::list;
use crate::numbers::push_u64;
use crate::persisted::PersistenceView;
use crate::status::{json_peer, PeerStatus};

/// Spring Boot's `Status`: the four it defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HealthStatus {
    Up,
    Down,
    /// What Boot's readiness state reports while refusing traffic.
    OutOfService,
    Unknown,
}

impl HealthStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            HealthStatus::Up => "UP",
            HealthStatus::Down => "DOWN",
            HealthStatus::OutOfService => "OUT_OF_SERVICE",
            HealthStatus::Unknown => "UNKNOWN",
        }
    }

    /// Boot's default `HttpCodeStatusMapper`: DOWN and OUT_OF_SERVICE are 503, the rest 200.
    pub fn http_code(self) -> u16 {
        match self {
            HealthStatus::Down | HealthStatus::OutOfService => 503,
            HealthStatus::Up | HealthStatus::Unknown => 200,
        }
    }

    /// Boot's `SimpleStatusAggregator` order: the first status in DOWN, OUT_OF_SERVICE, UP,
    /// UNKNOWN that any component has.
    pub fn aggregate(statuses: impl IntoIterator<Item = HealthStatus>) -> HealthStatus {
        let rank = |status: HealthStatus| match status {
            HealthStatus::Down => 0,
            HealthStatus::OutOfService => 1,
            HealthStatus::Up => 2,
            HealthStatus::Unknown => 3,
        };
        statuses
            .into_iter()
            .min_by_key(|status| rank(*status))
            .unwrap_or(HealthStatus::Unknown)
    }
}

/// The registry's numbers shown in the `registry` component.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegistryHealth {
    pub applications: u64,
    pub instances: u64,
    pub renews_last_minute: u64,
    pub renews_threshold: u64,
    pub expected_clients: u64,
    pub self_preservation_active: bool,
}

/// The components of `/actuator/health` when details are shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthComponents {
    pub liveness: HealthStatus,
    pub readiness: HealthStatus,
    pub registry: RegistryHealth,
    pub peers: Vec<PeerStatus>,
    /// Whether the registry is kept on disk (`heureka.persistence.*`).
    pub persistence: PersistenceView,
}

impl HealthComponents {
    /// The overall status the components add up to. The registry and replication
    /// components are always UP: a node whose peers are down still serves its clients, and
    /// failing its health for that would take it out of service too.
    pub fn status(&self) -> HealthStatus {
        HealthStatus::aggregate([self.liveness, self.readiness])
    }
}

/// `{"status":"UP"}`, with `components` when `components` is given.
pub fn encode_health(status: HealthStatus, components: Option<&HealthComponents>) -> Vec<u8> {
    let mut out = vec![b'{'];
    status_field(&mut out, status);
    if let Some(components) = components {
        out.extend_from_slice(b",\"components\":{\"livenessState\":{");
        status_field(&mut out, components.liveness);
        out.extend_from_slice(b"},\"readinessState\":{");
        status_field(&mut out, components.readiness);
        out.extend_from_slice(b"},\"registry\":{");
        status_field(&mut out, HealthStatus::Up);
        let registry = &components.registry;
        out.extend_from_slice(b",\"details\":{");
        for (n, (name, value)) in [
            ("applications", registry.applications),
            ("instances", registry.instances),
            ("renewsLastMinute", registry.renews_last_minute),
            ("renewsThreshold", registry.renews_threshold),
            ("expectedClients", registry.expected_clients),
        ]
        .into_iter()
        .enumerate()
        {
            if n > 0 {
                out.push(b',');
            }
            string(&mut out, name);
            out.push(b':');
            push_u64(&mut out, value);
        }
        out.extend_from_slice(if registry.self_preservation_active {
            b",\"selfPreservationActive\":true}}"
        } else {
            b",\"selfPreservationActive\":false}}"
        });
        out.extend_from_slice(b",\"replication\":{");
        status_field(&mut out, HealthStatus::Up);
        out.extend_from_slice(b",\"details\":{\"peers\":");
        list(&mut out, &components.peers, json_peer);
        out.extend_from_slice(b"}},\"persistence\":{");
        // DOWN while writes do not reach the disk; the overall status stays as it was: the
        // node still serves its clients, as with peers down.
        let persistence = &components.persistence;
        let status = match persistence.last_error {
            Some(_) => HealthStatus::Down,
            None => HealthStatus::Up,
        };
        status_field(&mut out, status);
        out.extend_from_slice(b",\"details\":");
        crate::persisted::push_persistence_view(&mut out, persistence);
        out.extend_from_slice(b"}}");
    }
    out.push(b'}');
    out
}

/// What `/actuator/info` tells about the running build.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildInfo {
    /// `spring.application.name`.
    pub app_name: String,
    pub artifact: String,
    pub name: String,
    pub version: String,
    /// The commit the binary was built from, when the build knew it.
    pub git_commit: Option<String>,
}

/// `{"app":{"name":…},"build":{"artifact":…,"name":…,"version":…},"git":{"commit":{"id":…}}}`:
/// the keys Boot's `BuildInfoContributor` and `GitInfoContributor` write.
pub fn encode_info(info: &BuildInfo) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"{\"app\":{\"name\":");
    string(&mut out, &info.app_name);
    out.extend_from_slice(b"},\"build\":{\"artifact\":");
    string(&mut out, &info.artifact);
    out.extend_from_slice(b",\"name\":");
    string(&mut out, &info.name);
    out.extend_from_slice(b",\"version\":");
    string(&mut out, &info.version);
    out.push(b'}');
    if let Some(commit) = &info.git_commit {
        out.extend_from_slice(b",\"git\":{\"commit\":{\"id\":");
        string(&mut out, commit);
        out.extend_from_slice(b"}}");
    }
    out.push(b'}');
    out
}

/// `"status":"UP"`.
fn status_field(out: &mut Vec<u8>, status: HealthStatus) {
    out.extend_from_slice(b"\"status\":");
    string(out, status.as_str());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> serde_json::Value {
        serde_json::from_slice(bytes).expect("valid JSON")
    }

    #[test]
    fn status_only_health_is_one_field() {
        assert_eq!(encode_health(HealthStatus::Up, None), br#"{"status":"UP"}"#);
    }

    #[test]
    fn health_with_components_has_boots_shape() {
        let components = HealthComponents {
            liveness: HealthStatus::Up,
            readiness: HealthStatus::OutOfService,
            registry: RegistryHealth {
                instances: 3,
                self_preservation_active: true,
                ..RegistryHealth::default()
            },
            peers: vec![PeerStatus {
                url: "http://b/eureka/".into(),
                up: true,
                ..PeerStatus::default()
            }],
            persistence: PersistenceView {
                enabled: true,
                path: "/var/lib/heureka/registry.redb".into(),
                last_write: Some(1_700_000_000_000),
                pending: 2,
                restored: 10,
                last_error: None,
                restore_checked: Some(true),
            },
        };
        let text = encode_health(components.status(), Some(&components));
        assert!(text.starts_with(br#"{"status":"OUT_OF_SERVICE","components":{"#));
        let json = parse(&text);
        assert_eq!(
            json["components"]["readinessState"]["status"],
            "OUT_OF_SERVICE"
        );
        assert_eq!(json["components"]["registry"]["details"]["instances"], 3);
        let persistence = &json["components"]["persistence"];
        assert_eq!(persistence["status"], "UP");
        assert_eq!(persistence["details"]["lastWrite"], 1_700_000_000_000i64);
        assert_eq!(persistence["details"]["pendingRecords"], 2);
        assert_eq!(
            json["components"]["registry"]["details"]["selfPreservationActive"],
            true
        );
        assert_eq!(
            json["components"]["replication"]["details"]["peers"][0]["url"],
            "http://b/eureka/"
        );
    }

    #[test]
    fn the_worst_status_wins_and_out_of_service_is_503() {
        let worst = HealthStatus::aggregate([HealthStatus::Up, HealthStatus::OutOfService]);
        assert_eq!(
            (worst, worst.http_code()),
            (HealthStatus::OutOfService, 503)
        );
        assert_eq!(HealthStatus::aggregate([HealthStatus::Up]).http_code(), 200);
    }

    #[test]
    fn info_omits_git_when_the_commit_is_unknown() {
        let info = BuildInfo {
            app_name: "eureka".into(),
            artifact: "heureka-server".into(),
            name: "heureka".into(),
            version: "0.1.0".into(),
            git_commit: None,
        };
        let json = parse(&encode_info(&info));
        assert_eq!(json["build"]["version"], "0.1.0");
        assert!(json.get("git").is_none());
        let json = parse(&encode_info(&BuildInfo {
            git_commit: Some("abc1234".into()),
            ..info
        }));
        assert_eq!(json["git"]["commit"]["id"], "abc1234");
    }
}
