//! The dashboard's two documents (Heureka's own JSON, documented in `docs/dashboard.md`): the
//! System Status numbers that Eureka's own endpoints do not carry, and the `lastn` lists.

use heureka_core::Millis;

use crate::events::{self_preservation_object, SelfPreservationStatus};
use crate::json::encode::string;
use crate::json::object::{field_i64, field_str};

/// `GET {base}/dashboard/summary`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DashboardSummary {
    /// `eureka.environment` (Spring's default `test`).
    pub environment: String,
    /// `eureka.datacenter` (Spring's default `default`).
    pub datacenter: String,
    pub now: Millis,
    pub started_at: Millis,
    /// `eureka.server.wait-time-in-ms-when-sync-empty`: the banner's grace period after start.
    pub wait_time_in_ms_when_sync_empty: Millis,
    pub self_preservation: SelfPreservationStatus,
    /// This node as it would register itself: host, IP and the status it reports.
    pub node_host_name: String,
    pub node_ip_addr: String,
    pub node_status: String,
    pub version: String,
    /// Whether the user asking may take the page's actions (overrides, deregistration): the
    /// `admin` role, or authentication off. Sent as `"may":{"admin":…}`.
    pub may_admin: bool,
    /// Whether the registry is kept on disk, and its latest write.
    pub persistence: crate::persisted::PersistenceView,
    /// The other protocols the registry is served over (`fleet.rs`), in the order shown.
    pub fleet: Vec<crate::fleet::FleetEndpoint>,
}

/// One line of `lastn`: when, and which instance (`APP(id)` on Spring's page).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseRecord {
    pub at: Millis,
    pub app: String,
    pub id: String,
}

pub fn encode_dashboard_summary(summary: &DashboardSummary) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(br#"{"environment":"#);
    string(&mut out, &summary.environment);
    field_str(&mut out, "datacenter", &summary.datacenter);
    field_i64(&mut out, "now", summary.now);
    field_i64(&mut out, "startedAt", summary.started_at);
    field_i64(
        &mut out,
        "waitTimeInMsWhenSyncEmpty",
        summary.wait_time_in_ms_when_sync_empty,
    );
    out.extend_from_slice(br#","selfPreservation":"#);
    self_preservation_object(&mut out, &summary.self_preservation);
    out.extend_from_slice(br#","node":{"hostName":"#);
    string(&mut out, &summary.node_host_name);
    field_str(&mut out, "ipAddr", &summary.node_ip_addr);
    field_str(&mut out, "status", &summary.node_status);
    out.push(b'}');
    field_str(&mut out, "version", &summary.version);
    out.extend_from_slice(br#","may":{"admin":"#);
    out.extend_from_slice(if summary.may_admin { b"true" } else { b"false" });
    out.extend_from_slice(br#"},"persistence":"#);
    crate::persisted::push_persistence_view(&mut out, &summary.persistence);
    out.extend_from_slice(br#","fleet":"#);
    crate::fleet::push_fleet(&mut out, &summary.fleet);
    out.push(b'}');
    out
}

/// `{"registered":[…],"cancelled":[…]}`, each newest first, as Spring's `/lastn` lists them.
pub fn encode_lastn<'a>(
    registered: impl Iterator<Item = &'a LeaseRecord>,
    cancelled: impl Iterator<Item = &'a LeaseRecord>,
) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(br#"{"registered":"#);
    records(&mut out, registered);
    out.extend_from_slice(br#","cancelled":"#);
    records(&mut out, cancelled);
    out.push(b'}');
    out
}

fn records<'a>(out: &mut Vec<u8>, records: impl Iterator<Item = &'a LeaseRecord>) {
    out.push(b'[');
    for (n, record) in records.enumerate() {
        if n > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#"{"at":"#);
        crate::numbers::push_i64(out, record.at);
        field_str(out, "app", &record.app);
        field_str(out, "id", &record.id);
        out.push(b'}');
    }
    out.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_is_json_with_the_self_preservation_numbers() {
        let summary = DashboardSummary {
            environment: "test".into(),
            datacenter: "default".into(),
            self_preservation: SelfPreservationStatus {
                enabled: true,
                renews_threshold: 3,
                renewal_percent_threshold: 0.85,
                ..SelfPreservationStatus::default()
            },
            ..DashboardSummary::default()
        };
        let json: serde_json::Value =
            serde_json::from_slice(&encode_dashboard_summary(&summary)).unwrap();
        assert_eq!(json["environment"], "test");
        assert_eq!(json["selfPreservation"]["renewsThreshold"], 3);
        assert_eq!(json["selfPreservation"]["renewalPercentThreshold"], 0.85);
    }

    #[test]
    fn summary_says_whether_the_user_may_take_the_admin_actions() {
        let summary = DashboardSummary {
            may_admin: true,
            ..DashboardSummary::default()
        };
        let json: serde_json::Value =
            serde_json::from_slice(&encode_dashboard_summary(&summary)).unwrap();
        assert_eq!(json["may"]["admin"], true);
    }

    #[test]
    fn lastn_lists_records_in_the_order_given() {
        let a = LeaseRecord {
            at: 2,
            app: "A".into(),
            id: "a2".into(),
        };
        let b = LeaseRecord {
            at: 1,
            app: "A".into(),
            id: "a1".into(),
        };
        let json: serde_json::Value =
            serde_json::from_slice(&encode_lastn([&a, &b].into_iter(), std::iter::empty()))
                .unwrap();
        assert_eq!(json["registered"][0]["id"], "a2");
        assert_eq!(json["registered"][1]["at"], 1);
        assert_eq!(json["cancelled"], serde_json::json!([]));
    }
}
