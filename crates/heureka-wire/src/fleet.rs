//! What the dashboard's System Status shows of the other protocols the registry is served over
//! (Prometheus HTTP SD, DNS, xDS): one entry each, whether it is on, where it answers, and the
//! few numbers worth watching. Generic on purpose: a new protocol is a new entry, not a new
//! field in the dashboard's document.

use crate::json::encode::string;
use crate::json::object::{bool_text, field_str, field_u64, list};

/// One protocol the registry is served over besides Eureka's REST API.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FleetEndpoint {
    /// How the dashboard names it: `Prometheus HTTP SD`, `DNS`, `xDS`.
    pub name: String,
    /// The key that turns it on, shown when it is off.
    pub key: String,
    pub enabled: bool,
    /// Where it answers: a path under the API, or the bound address of its own port.
    pub address: String,
    /// Counters and gauges, in the order shown (`("queries", 12)`).
    pub figures: Vec<(String, u64)>,
    /// The latest problem worth an operator's eye (a refused subscription, a NACK), if any.
    pub last_error: Option<String>,
}

/// `[{"name":…,"key":…,"enabled":true,"address":…,"figures":{"queries":12},"lastError":…}]`
/// (`lastError` only when there is one).
pub fn push_fleet(out: &mut Vec<u8>, endpoints: &[FleetEndpoint]) {
    list(out, endpoints, |out, endpoint| {
        out.extend_from_slice(br#"{"name":"#);
        string(out, &endpoint.name);
        field_str(out, "key", &endpoint.key);
        out.extend_from_slice(br#","enabled":"#);
        out.extend_from_slice(bool_text(endpoint.enabled));
        field_str(out, "address", &endpoint.address);
        out.extend_from_slice(br#","figures":{"#);
        for (n, (label, value)) in endpoint.figures.iter().enumerate() {
            if n == 0 {
                string(out, label);
                out.push(b':');
                crate::numbers::push_u64(out, *value);
            } else {
                field_u64(out, label, *value);
            }
        }
        out.push(b'}');
        if let Some(error) = &endpoint.last_error {
            field_str(out, "lastError", error);
        }
        out.push(b'}');
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(endpoints: &[FleetEndpoint]) -> serde_json::Value {
        let mut out = Vec::new();
        push_fleet(&mut out, endpoints);
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn an_endpoint_is_an_object_with_its_figures_in_order() {
        let json = encoded(&[FleetEndpoint {
            name: "DNS".into(),
            key: "heureka.dns.enabled".into(),
            enabled: true,
            address: "127.0.0.1:8600".into(),
            figures: vec![("queries".into(), 12), ("refused".into(), 1)],
            last_error: None,
        }]);
        assert_eq!(json[0]["name"], "DNS");
        assert_eq!(json[0]["enabled"], true);
        assert_eq!(json[0]["figures"]["queries"], 12);
        assert_eq!(json[0]["figures"]["refused"], 1);
        assert!(json[0].get("lastError").is_none());
    }

    #[test]
    fn the_last_error_is_written_escaped() {
        let json = encoded(&[FleetEndpoint {
            name: "xDS".into(),
            last_error: Some("NACK \"cluster\"".into()),
            ..FleetEndpoint::default()
        }]);
        assert_eq!(json[0]["lastError"], "NACK \"cluster\"");
        assert_eq!(json[0]["figures"], serde_json::json!({}));
    }

    #[test]
    fn no_endpoint_is_an_empty_list() {
        assert_eq!(encoded(&[]), serde_json::json!([]));
    }
}
