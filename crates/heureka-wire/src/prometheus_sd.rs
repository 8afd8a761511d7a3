//! Prometheus' HTTP service discovery document (`http_sd_configs`: a JSON list of target
//! groups, each `{"targets":["host:port"],"labels":{…}}`), one group per instance, labelled
//! as Prometheus' own `eureka_sd_configs` labels it, so that relabelling rules written for one
//! work on the other.
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
//! The document is written as it goes, without a map of labels per instance: at 10,000
//! instances the allocations of such maps cost more than the encoding.

use heureka_core::{DataCenterClass, Instance};

use crate::json::encode::string;
use crate::numbers::push_i64;
use crate::xml::push_encoded_name;

/// One target: an instance of application `app`, scraped at `address`.
#[derive(Clone, Debug)]
pub struct Target<'a> {
    pub app: &'a str,
    pub instance: &'a Instance,
    /// `host:port`, Prometheus' `__address__`.
    pub address: String,
    /// `__metrics_path__`, when the instance names one.
    pub metrics_path: Option<&'a str>,
    /// `__scheme__`, when the instance names one.
    pub scheme: Option<&'a str>,
}

const INSTANCE: &str = "__meta_eureka_app_instance_";

/// The document: `[{"targets":["host:port"],"labels":{…}},…]`, a group per target.
pub fn encode_target_groups(targets: &[Target<'_>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(targets.len() * GROUP_BYTES + 2);
    out.push(b'[');
    push_target_groups(&mut out, targets);
    out.push(b']');
    out
}

/// About what one group takes, so that a large document is written without growing its buffer.
pub const GROUP_BYTES: usize = 1152;

/// The groups of `targets`, comma-separated, without the list's brackets: a piece of the
/// document that a server may keep and join with others (a comma between non-empty pieces).
pub fn push_target_groups(out: &mut Vec<u8>, targets: &[Target<'_>]) {
    for (n, target) in targets.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"targets\":[");
        string(out, &target.address);
        out.extend_from_slice(b"],\"labels\":{");
        let mut labels = Labels { out, first: true };
        if let Some(path) = target.metrics_path {
            labels.put("__metrics_path__", "", path);
        }
        if let Some(scheme) = target.scheme {
            labels.put("__scheme__", "", scheme);
        }
        eureka_sd_labels(&mut labels, target.app, target.instance);
        out.extend_from_slice(b"}}");
    }
}

/// Writes a target group's labels as `"name":"value"` members.
struct Labels<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl Labels<'_> {
    /// The label `prefix` + `name`, both plain label characters, unless `value` is empty.
    fn put(&mut self, prefix: &str, name: &str, value: &str) {
        if value.is_empty() {
            return;
        }
        self.name(prefix, name);
        string(self.out, value);
    }

    /// A number's label, written without a string made for it.
    fn put_number(&mut self, prefix: &str, name: &str, value: i64) {
        self.name(prefix, name);
        self.out.push(b'"');
        push_i64(self.out, value);
        self.out.push(b'"');
    }

    fn name(&mut self, prefix: &str, name: &str) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.push(b'"');
        self.out.extend_from_slice(prefix.as_bytes());
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"\":");
    }
}

/// The labels `eureka_sd_configs` gives `instance` of application `app`: `instance` (the id)
/// and the `__meta_eureka_*` labels, values as its XML carries them.
fn eureka_sd_labels(labels: &mut Labels<'_>, app: &str, instance: &Instance) {
    let id = instance.instance_id.as_deref().unwrap_or_default();
    labels.put("instance", "", id);
    labels.put("__meta_eureka_app_name", "", app);
    labels.put(INSTANCE, "id", id);
    labels.put(INSTANCE, "hostname", &instance.host_name);
    labels.put(INSTANCE, "ip_addr", &instance.ip_addr);
    labels.put(INSTANCE, "status", instance.status.as_str());
    labels.put(INSTANCE, "homepage_url", optional(&instance.home_page_url));
    labels.put(
        INSTANCE,
        "statuspage_url",
        optional(&instance.status_page_url),
    );
    labels.put(
        INSTANCE,
        "healthcheck_url",
        optional(&instance.health_check_url),
    );
    labels.put(INSTANCE, "vip_address", optional(&instance.vip_address));
    labels.put(
        INSTANCE,
        "secure_vip_address",
        optional(&instance.secure_vip_address),
    );
    labels.put_number(INSTANCE, "country_id", i64::from(instance.country_id));
    let (port, secure) = (instance.port, instance.secure_port);
    labels.put_number(INSTANCE, "port", i64::from(port.number));
    labels.put(INSTANCE, "port_enabled", bool_text(port.enabled));
    labels.put_number(INSTANCE, "secure_port", i64::from(secure.number));
    labels.put(INSTANCE, "secure_port_enabled", bool_text(secure.enabled));
    if let Some(dc) = &instance.data_center_info {
        labels.put(INSTANCE, "datacenterinfo_name", &dc.name);
        // The XML document carries a data centre's metadata for Amazon only.
        if dc.class == DataCenterClass::Amazon {
            metadata_labels(labels, "datacenterinfo_metadata_", &dc.metadata);
        }
    }
    metadata_labels(labels, "metadata_", &instance.metadata);
}

fn optional(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or_default()
}

/// One label per metadata entry, named `INSTANCE` + `kind` + the key's label name; of keys
/// whose names coincide, the last in key order (the XML document's) wins.
fn metadata_labels<'m>(
    labels: &mut Labels<'_>,
    kind: &str,
    metadata: impl IntoIterator<Item = (&'m String, &'m String)>,
) {
    let mut named: Vec<(String, &str)> = metadata
        .into_iter()
        // The empty key names no XML element: the document leaves it out.
        .filter(|(key, _)| !key.is_empty())
        .map(|(key, value)| (label_name(key), value.as_str()))
        .collect();
    // Stable: among equal names the later key stays later, and is the one kept.
    named.sort_by(|a, b| a.0.cmp(&b.0));
    for (n, (name, value)) in named.iter().enumerate() {
        if named.get(n + 1).is_none_or(|next| next.0 != *name) {
            labels.put(INSTANCE, &format!("{kind}{name}"), value);
        }
    }
}

/// A metadata key's label name: its XStream element name, sanitised as Prometheus'
/// `SanitizeLabelName` does (every character, not byte, outside `[a-zA-Z0-9_]` is `_`).
fn label_name(key: &str) -> String {
    let mut coded = Vec::with_capacity(key.len());
    push_encoded_name(&mut coded, key);
    String::from_utf8_lossy(&coded)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
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
