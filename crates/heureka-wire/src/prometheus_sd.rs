//! Prometheus' HTTP service discovery document (`http_sd_configs`: a JSON list of target
//! groups, each `{"targets":["host:port"],"labels":{…}}`), and the labels Prometheus' own
//! `eureka_sd_configs` gives an instance, so that relabelling rules written for one work on
//! the other.
//!
//! Prometheus' Eureka discovery reads the XML full fetch, so a metadata key reaches it as the
//! element name XStream codes it into (`xml/names.rs`), which Prometheus then sanitises as it
//! does every label name (each character outside `[a-zA-Z0-9_]` becomes `_`). The key
//! `prometheus.io/scrape` travels as `<prometheus.io_.002fscrape>` and is labelled
//! `__meta_eureka_app_instance_metadata_prometheus_io__002fscrape`; `management.port` is
//! `…_metadata_management_port`. Keys that sanitise to the same name keep the value of the
//! last in the document's order, as there.
//!
//! Labels with an empty value are left out: Prometheus drops them from a target either way.

use std::collections::BTreeMap;

use heureka_core::{DataCenterClass, Instance};

use crate::json::encode::string;
use crate::json::object::list;
use crate::xml::push_encoded_name;

/// One target group of the document: its targets and the labels they share.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetGroup {
    /// `host:port` addresses, as Prometheus' `__address__`.
    pub targets: Vec<String>,
    /// Label names to values, written in name order.
    pub labels: BTreeMap<String, String>,
}

const META: &str = "__meta_eureka_";
const INSTANCE: &str = "__meta_eureka_app_instance_";

/// The document: `[{"targets":[…],"labels":{…}},…]`.
pub fn encode_target_groups(groups: &[TargetGroup]) -> Vec<u8> {
    let mut out = Vec::with_capacity(groups.len() * 640 + 2);
    list(&mut out, groups, |out, group| {
        out.extend_from_slice(b"{\"targets\":");
        list(out, &group.targets, |out, target| string(out, target));
        out.extend_from_slice(b",\"labels\":{");
        for (n, (name, value)) in group.labels.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            string(out, name);
            out.push(b':');
            string(out, value);
        }
        out.extend_from_slice(b"}}");
    });
    out
}

/// The labels `eureka_sd_configs` gives `instance` of application `app`: the
/// `__meta_eureka_*` labels and `instance` (the instance id), values as its XML carries them.
pub fn eureka_sd_labels(app: &str, instance: &Instance) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    let mut put = |name: String, value: &str| {
        if !value.is_empty() {
            labels.insert(name, value.to_owned());
        }
    };
    let id = instance.instance_id.as_deref().unwrap_or_default();
    put("instance".to_owned(), id);
    put(format!("{META}app_name"), app);
    put(format!("{INSTANCE}id"), id);
    put(format!("{INSTANCE}hostname"), &instance.host_name);
    put(format!("{INSTANCE}ip_addr"), &instance.ip_addr);
    put(format!("{INSTANCE}status"), instance.status.as_str());
    let optional = |value: &Option<String>| value.clone().unwrap_or_default();
    put(
        format!("{INSTANCE}homepage_url"),
        &optional(&instance.home_page_url),
    );
    put(
        format!("{INSTANCE}statuspage_url"),
        &optional(&instance.status_page_url),
    );
    put(
        format!("{INSTANCE}healthcheck_url"),
        &optional(&instance.health_check_url),
    );
    put(
        format!("{INSTANCE}vip_address"),
        &optional(&instance.vip_address),
    );
    put(
        format!("{INSTANCE}secure_vip_address"),
        &optional(&instance.secure_vip_address),
    );
    put(
        format!("{INSTANCE}country_id"),
        &instance.country_id.to_string(),
    );
    let (port, secure) = (instance.port, instance.secure_port);
    put(format!("{INSTANCE}port"), &port.number.to_string());
    put(format!("{INSTANCE}port_enabled"), bool_text(port.enabled));
    put(format!("{INSTANCE}secure_port"), &secure.number.to_string());
    put(
        format!("{INSTANCE}secure_port_enabled"),
        bool_text(secure.enabled),
    );
    if let Some(dc) = &instance.data_center_info {
        put(format!("{INSTANCE}datacenterinfo_name"), &dc.name);
        // The XML document carries a data centre's metadata for Amazon only.
        if dc.class == DataCenterClass::Amazon {
            for (key, value) in &dc.metadata {
                if let Some(name) =
                    metadata_label(&format!("{INSTANCE}datacenterinfo_metadata_"), key)
                {
                    put(name, value);
                }
            }
        }
    }
    for (key, value) in &instance.metadata {
        if let Some(name) = metadata_label(&format!("{INSTANCE}metadata_"), key) {
            put(name, value);
        }
    }
    labels
}

/// The label name of metadata key `key` under `prefix`, as `eureka_sd_configs` names it; None
/// for the empty key, which no XML element can name (the XML document leaves it out).
fn metadata_label(prefix: &str, key: &str) -> Option<String> {
    if key.is_empty() {
        return None;
    }
    let mut coded = Vec::with_capacity(key.len());
    push_encoded_name(&mut coded, key);
    let mut name = String::with_capacity(prefix.len() + coded.len());
    name.push_str(prefix);
    sanitize_label_name_into(&mut name, &String::from_utf8_lossy(&coded));
    Some(name)
}

/// Prometheus' `SanitizeLabelName`: every character (not byte) outside `[a-zA-Z0-9_]` is `_`.
fn sanitize_label_name_into(out: &mut String, name: &str) {
    out.extend(name.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '_'
        }
    }));
}

fn bool_text(value: bool) -> &'static str {
    if value {
        "true"
    } else {
        "false"
    }
}

#[cfg(test)]
mod tests;
