//! What people read: aligned tables, key/value listings, timestamps and ages. Always aligned,
//! whether or not stdout is a terminal, so that what a person sees is what `grep` and `awk`
//! see; `--json` is the format meant for programs.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use heureka_core::{Application, Instance, InstanceStatus, Millis};

/// `text` with every control character escaped (`\n`, `\u{1b}`): what a registry holds comes
/// from its clients, and an app name with a line break or a terminal escape sequence must not
/// forge a row or reach the operator's terminal.
pub(crate) fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Columns separated by two spaces, each as wide as its widest cell; the last one unpadded.
/// Cells are [`printable`].
pub(crate) fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| printable(cell)).collect())
        .collect();
    let rows = &rows;
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (column, cell) in row.iter().enumerate() {
            if column + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[column]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `apps`: one row per application, instance counts by status.
pub(crate) fn applications_table(apps: &[Application]) -> String {
    let statuses = [
        InstanceStatus::Up,
        InstanceStatus::Down,
        InstanceStatus::Starting,
        InstanceStatus::OutOfService,
        InstanceStatus::Unknown,
    ];
    let mut headers = vec!["APP", "INSTANCES"];
    headers.extend(statuses.iter().map(|status| status.as_str()));
    let rows: Vec<Vec<String>> = sorted(apps)
        .into_iter()
        .map(|app| {
            let mut row = vec![app.name.clone(), app.instances.len().to_string()];
            for status in statuses {
                let count = app.instances.iter().filter(|i| i.status == status).count();
                row.push(count.to_string());
            }
            row
        })
        .collect();
    table(&headers, &rows)
}

pub(crate) const INSTANCE_HEADERS: [&str; 8] = [
    "ID",
    "STATUS",
    "OVERRIDE",
    "HOST",
    "IP",
    "PORT",
    "ZONE",
    "LAST RENEW",
];

/// `app NAME` and `apps --wide`: one row per instance, sorted by id.
pub(crate) fn instance_rows(instances: &[Instance], now: Millis) -> Vec<Vec<String>> {
    let mut instances: Vec<&Instance> = instances.iter().collect();
    instances.sort_by_key(|instance| instance.id());
    instances
        .into_iter()
        .map(|instance| {
            vec![
                instance.id().to_owned(),
                instance.status.to_string(),
                override_text(instance.overridden_status).to_owned(),
                instance.host_name.clone(),
                instance.ip_addr.clone(),
                ports(instance),
                zone(instance).unwrap_or("-").to_owned(),
                age(now, instance.lease_info.last_renewal_timestamp),
            ]
        })
        .collect()
}

pub(crate) fn sorted(apps: &[Application]) -> Vec<&Application> {
    let mut apps: Vec<&Application> = apps.iter().collect();
    apps.sort_by(|a, b| a.name.cmp(&b.name));
    apps
}

/// `instance ID`: every field, one per line, then the metadata.
pub(crate) fn instance_details(instance: &Instance, now: Millis) -> String {
    let opt = |value: &Option<String>| value.clone().unwrap_or_else(|| "-".to_owned());
    let port = |port: heureka_core::Port| {
        format!(
            "{} ({})",
            port.number,
            if port.enabled { "enabled" } else { "disabled" }
        )
    };
    let lease = &instance.lease_info;
    let at = |ms: Millis| match ms {
        ms if ms <= 0 => "-".to_owned(),
        ms => format!("{} ({})", timestamp(ms), age(now, ms)),
    };
    let data_center = instance
        .data_center_info
        .as_ref()
        .map(|dc| dc.name.clone())
        .unwrap_or_else(|| "-".to_owned());
    let mut fields: Vec<(String, String)> = vec![
        ("instanceId".into(), instance.id().to_owned()),
        ("app".into(), instance.app.clone()),
        ("appGroupName".into(), opt(&instance.app_group_name)),
        ("hostName".into(), instance.host_name.clone()),
        ("ipAddr".into(), instance.ip_addr.clone()),
        ("status".into(), instance.status.to_string()),
        (
            "overriddenStatus".into(),
            instance.overridden_status.to_string(),
        ),
        ("port".into(), port(instance.port)),
        ("securePort".into(), port(instance.secure_port)),
        ("vipAddress".into(), opt(&instance.vip_address)),
        ("secureVipAddress".into(), opt(&instance.secure_vip_address)),
        ("homePageUrl".into(), opt(&instance.home_page_url)),
        ("statusPageUrl".into(), opt(&instance.status_page_url)),
        ("healthCheckUrl".into(), opt(&instance.health_check_url)),
        (
            "secureHealthCheckUrl".into(),
            opt(&instance.secure_health_check_url),
        ),
        ("dataCenterInfo".into(), data_center),
    ];
    if let Some(dc) = &instance.data_center_info {
        for (key, value) in &dc.metadata {
            fields.push((format!("dataCenterInfo.{key}"), value.clone()));
        }
    }
    fields.extend([
        (
            "leaseInfo.renewalIntervalInSecs".into(),
            lease.renewal_interval_in_secs.to_string(),
        ),
        (
            "leaseInfo.durationInSecs".into(),
            lease.duration_in_secs.to_string(),
        ),
        (
            "leaseInfo.registrationTimestamp".into(),
            at(lease.registration_timestamp),
        ),
        (
            "leaseInfo.lastRenewalTimestamp".into(),
            at(lease.last_renewal_timestamp),
        ),
        (
            "leaseInfo.serviceUpTimestamp".into(),
            at(lease.service_up_timestamp),
        ),
        (
            "leaseInfo.evictionTimestamp".into(),
            at(lease.eviction_timestamp),
        ),
        ("countryId".into(), instance.country_id.to_string()),
        ("sid".into(), instance.sid.clone()),
        (
            "isCoordinatingDiscoveryServer".into(),
            instance.is_coordinating_discovery_server.to_string(),
        ),
        (
            "lastUpdatedTimestamp".into(),
            at(instance.last_updated_timestamp),
        ),
        (
            "lastDirtyTimestamp".into(),
            at(instance.last_dirty_timestamp),
        ),
        (
            "actionType".into(),
            instance
                .action_type
                .map_or("-", |action| action.as_str())
                .to_owned(),
        ),
        ("asgName".into(), opt(&instance.asg_name)),
    ]);
    for (key, value) in &instance.metadata {
        fields.push((format!("metadata.{key}"), value.clone()));
    }
    let width = fields
        .iter()
        .map(|(key, _)| key.len() + 1)
        .max()
        .unwrap_or(0);
    fields
        .iter()
        .map(|(key, value)| {
            let (key, value) = (printable(key), printable(value));
            format!("{key:<width$}  {value}\n", key = format!("{key}:"))
        })
        .collect()
}

/// `UNKNOWN` is Eureka's "no override"; shown as `-` so that real overrides stand out.
pub(crate) fn override_text(status: InstanceStatus) -> &'static str {
    match status {
        InstanceStatus::Unknown => "-",
        status => status.as_str(),
    }
}

/// The enabled ports: `8080`, `https:8443` or both.
fn ports(instance: &Instance) -> String {
    let mut ports = Vec::new();
    if instance.port.enabled {
        ports.push(instance.port.number.to_string());
    }
    if instance.secure_port.enabled {
        ports.push(format!("https:{}", instance.secure_port.number));
    }
    if ports.is_empty() {
        "-".to_owned()
    } else {
        ports.join(",")
    }
}

/// Spring's `eureka.instance.metadata-map.zone`, else AWS's availability zone.
fn zone(instance: &Instance) -> Option<&str> {
    instance
        .metadata
        .get("zone")
        .map(String::as_str)
        .or_else(|| {
            instance
                .data_center_info
                .as_ref()
                .and_then(|dc| dc.metadata.get("availability-zone"))
                .map(String::as_str)
        })
}

/// How long ago `then` was, coarsely: `42s ago`, `5m ago`, `3h ago`, `2d ago`; `-` for never.
/// A time in the future counts as now: clocks differ, and the Java server's renewed leases
/// carry renewal time plus duration (`Lease.renew`).
pub(crate) fn age(now: Millis, then: Millis) -> String {
    if then <= 0 {
        return "-".to_owned();
    }
    let seconds = (now - then).max(0) / 1000;
    match seconds {
        s if s < 120 => format!("{s}s ago"),
        s if s < 2 * 3600 => format!("{}m ago", s / 60),
        s if s < 2 * 86400 => format!("{}h ago", s / 3600),
        s => format!("{}d ago", s / 86400),
    }
}

/// RFC 3339 in UTC, to the second.
pub(crate) fn timestamp(ms: Millis) -> String {
    let time = UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64);
    humantime::format_rfc3339_seconds(time).to_string()
}

pub(crate) fn now_ms() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as Millis)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cell_cannot_forge_a_row_or_reach_the_terminal() {
        let rows = vec![vec!["ORDERS\nEVIL  1".to_owned(), "\u{1b}[2J".to_owned()]];
        let out = super::table(&["APP", "X"], &rows);
        assert_eq!(out.lines().count(), 2, "{out}");
        assert!(
            out.contains("ORDERS\\nEVIL  1") && out.contains("\\u{1b}[2J"),
            "{out}"
        );
    }

    use super::*;

    #[test]
    fn columns_are_as_wide_as_their_widest_cell() {
        let rows = vec![
            vec!["ORDERS".to_owned(), "2".to_owned(), "x".to_owned()],
            vec!["A".to_owned(), "10".to_owned(), "y".to_owned()],
        ];
        assert_eq!(
            table(&["APP", "N", "LAST"], &rows),
            "APP     N   LAST\nORDERS  2   x\nA       10  y\n"
        );
    }

    #[test]
    fn ages_are_coarse_and_never_negative() {
        assert_eq!(age(100_000, 0), "-");
        assert_eq!(age(100_000, 58_000), "42s ago");
        assert_eq!(age(100_000, 200_000), "0s ago");
        assert_eq!(age(10 * 60_000, 1), "9m ago");
        assert_eq!(age(5 * 86_400_000, 1), "4d ago");
    }

    #[test]
    fn timestamps_are_rfc_3339_in_utc() {
        assert_eq!(timestamp(1_764_588_000_123), "2025-12-01T11:20:00Z");
    }
}
