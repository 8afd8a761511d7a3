//! Writing Eureka XML as XStream's `PrettyPrintWriter` does: two-space indent, `\n` line breaks,
//! no XML declaration, no trailing newline.
//!
//! The element order is that of the JSON writer, with XStream's lower-case `overriddenstatus`.
//! Lists have no wrapper: applications and instances are repeated elements, so an empty registry
//! has no `<application>` at all. A field set to the empty string is an open/close pair
//! (`<apps__hashcode></apps__hashcode>`); only an empty map is self-closing. Python's reader
//! needs the `enabled` and `class` attributes and integer text in every numeric element.

use std::collections::BTreeMap;

use heureka_core::{Application, Applications, DataCenterClass, Instance, Port};

use super::names::{metadata_key_fits_xml, push_encoded_name};
use crate::fields::{AMAZON_DC_CLASS, DEFAULT_DC_CLASS, EMPTY_MAP_CLASS};
use crate::numbers::{push_i64, push_u64};
use crate::size;

/// Markup of one instance beyond its variable text, rounded up.
const INSTANCE_MARKUP: usize = 1350;
/// Markup of one metadata entry: indent, the name a second time, brackets.
const ENTRY_MARKUP: usize = 16;

pub(crate) fn applications(apps: &Applications) -> Vec<u8> {
    let mut out = Vec::with_capacity(size::applications(apps, INSTANCE_MARKUP, ENTRY_MARKUP));
    out.extend_from_slice(b"<applications>");
    leaf_int(&mut out, 1, b"versions__delta", apps.versions_delta);
    leaf(&mut out, 1, b"apps__hashcode", &apps.apps_hashcode);
    for app in &apps.applications {
        application_element(&mut out, 1, app);
    }
    out.extend_from_slice(b"\n</applications>");
    out
}

/// The start of an `applications` document, up to the first `<application>`.
pub(crate) fn applications_head(versions_delta: i64, apps_hashcode: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + apps_hashcode.len());
    out.extend_from_slice(b"<applications>");
    leaf_int(&mut out, 1, b"versions__delta", versions_delta);
    leaf(&mut out, 1, b"apps__hashcode", apps_hashcode);
    out
}

/// One `<application>` element as nested in an `applications` document.
pub(crate) fn applications_entry(app: &Application) -> Vec<u8> {
    let hint = size::application(app, INSTANCE_MARKUP);
    let mut out = Vec::with_capacity(hint + 64);
    // Written out rather than through `application_element`, whose `indent` starts no new line
    // in an empty buffer: in the document this element does follow a line.
    out.extend_from_slice(b"\n  <application>");
    leaf(&mut out, 2, b"name", &app.name);
    for instance in &app.instances {
        instance_element(&mut out, 2, instance);
    }
    close(&mut out, 1, b"application");
    out
}

pub(crate) const APPLICATIONS_SEPARATOR: &[u8] = b"";
pub(crate) const APPLICATIONS_TAIL: &[u8] = b"\n</applications>";

pub(crate) fn application(app: &Application) -> Vec<u8> {
    let hint = size::application(app, INSTANCE_MARKUP);
    let mut out = Vec::with_capacity(hint + 64);
    application_element(&mut out, 0, app);
    out
}

pub(crate) fn instance(instance: &Instance) -> Vec<u8> {
    let mut out = Vec::with_capacity(INSTANCE_MARKUP + size::instance_text(instance));
    instance_element(&mut out, 0, instance);
    out
}

fn application_element(out: &mut Vec<u8>, depth: usize, app: &Application) {
    open(out, depth, b"application");
    leaf(out, depth + 1, b"name", &app.name);
    for instance in &app.instances {
        instance_element(out, depth + 1, instance);
    }
    close(out, depth, b"application");
}

fn instance_element(out: &mut Vec<u8>, depth: usize, i: &Instance) {
    let d = depth + 1;
    open(out, depth, b"instance");
    if let Some(id) = &i.instance_id {
        leaf(out, d, b"instanceId", id);
    }
    leaf(out, d, b"hostName", &i.host_name);
    leaf(out, d, b"app", &i.app);
    leaf(out, d, b"ipAddr", &i.ip_addr);
    if i.sid != "na" && i.sid != "unknown" {
        leaf(out, d, b"sid", &i.sid);
    }
    leaf(out, d, b"status", i.status.as_str());
    leaf(out, d, b"overriddenstatus", i.overridden_status.as_str());
    port(out, d, b"port", i.port);
    port(out, d, b"securePort", i.secure_port);
    leaf_int(out, d, b"countryId", i64::from(i.country_id));
    if let Some(dc) = &i.data_center_info {
        indent(out, d);
        out.extend_from_slice(b"<dataCenterInfo class=\"");
        out.extend_from_slice(match dc.class {
            DataCenterClass::Default => DEFAULT_DC_CLASS.as_bytes(),
            DataCenterClass::Amazon => AMAZON_DC_CLASS.as_bytes(),
        });
        out.extend_from_slice(b"\">");
        leaf(out, d + 1, b"name", &dc.name);
        if dc.class == DataCenterClass::Amazon {
            metadata(out, d + 1, &dc.metadata);
        }
        close(out, d, b"dataCenterInfo");
    }
    let lease = &i.lease_info;
    open(out, d, b"leaseInfo");
    leaf_int(
        out,
        d + 1,
        b"renewalIntervalInSecs",
        i64::from(lease.renewal_interval_in_secs),
    );
    leaf_int(
        out,
        d + 1,
        b"durationInSecs",
        i64::from(lease.duration_in_secs),
    );
    leaf_int(
        out,
        d + 1,
        b"registrationTimestamp",
        lease.registration_timestamp,
    );
    leaf_int(
        out,
        d + 1,
        b"lastRenewalTimestamp",
        lease.last_renewal_timestamp,
    );
    leaf_int(out, d + 1, b"evictionTimestamp", lease.eviction_timestamp);
    leaf_int(
        out,
        d + 1,
        b"serviceUpTimestamp",
        lease.service_up_timestamp,
    );
    close(out, d, b"leaseInfo");
    metadata(out, d, &i.metadata);
    optional(out, d, b"appGroupName", &i.app_group_name);
    optional(out, d, b"homePageUrl", &i.home_page_url);
    optional(out, d, b"statusPageUrl", &i.status_page_url);
    optional(out, d, b"healthCheckUrl", &i.health_check_url);
    optional(out, d, b"secureHealthCheckUrl", &i.secure_health_check_url);
    optional(out, d, b"vipAddress", &i.vip_address);
    optional(out, d, b"secureVipAddress", &i.secure_vip_address);
    let coordinating = if i.is_coordinating_discovery_server {
        "true"
    } else {
        "false"
    };
    leaf(out, d, b"isCoordinatingDiscoveryServer", coordinating);
    leaf_int(out, d, b"lastUpdatedTimestamp", i.last_updated_timestamp);
    leaf_int(out, d, b"lastDirtyTimestamp", i.last_dirty_timestamp);
    if let Some(action) = i.action_type {
        leaf(out, d, b"actionType", action.as_str());
    }
    optional(out, d, b"asgName", &i.asg_name);
    close(out, depth, b"instance");
}

/// `<port enabled="true">8080</port>`.
fn port(out: &mut Vec<u8>, depth: usize, tag: &[u8], port: Port) {
    indent(out, depth);
    out.push(b'<');
    out.extend_from_slice(tag);
    out.extend_from_slice(if port.enabled {
        b" enabled=\"true\">"
    } else {
        b" enabled=\"false\">"
    });
    push_u64(out, u64::from(port.number));
    end_tag(out, tag);
}

/// A metadata map, keys in XStream's name coding. The empty key, which no element name can
/// spell, is left out (see [`metadata_key_fits_xml`]); if none is left, the map is written as
/// empty.
fn metadata(out: &mut Vec<u8>, depth: usize, map: &BTreeMap<String, String>) {
    if !map.keys().any(|k| metadata_key_fits_xml(k)) {
        indent(out, depth);
        out.extend_from_slice(b"<metadata class=\"");
        out.extend_from_slice(EMPTY_MAP_CLASS.as_bytes());
        out.extend_from_slice(b"\"/>");
        return;
    }
    open(out, depth, b"metadata");
    for (key, value) in map.iter().filter(|(k, _)| metadata_key_fits_xml(k)) {
        indent(out, depth + 1);
        out.push(b'<');
        push_encoded_name(out, key);
        out.push(b'>');
        text(out, value);
        out.extend_from_slice(b"</");
        push_encoded_name(out, key);
        out.push(b'>');
    }
    close(out, depth, b"metadata");
}

fn optional(out: &mut Vec<u8>, depth: usize, tag: &[u8], value: &Option<String>) {
    if let Some(value) = value {
        leaf(out, depth, tag, value);
    }
}

fn leaf(out: &mut Vec<u8>, depth: usize, tag: &[u8], value: &str) {
    indent(out, depth);
    out.push(b'<');
    out.extend_from_slice(tag);
    out.push(b'>');
    text(out, value);
    end_tag(out, tag);
}

fn leaf_int(out: &mut Vec<u8>, depth: usize, tag: &[u8], value: i64) {
    indent(out, depth);
    out.push(b'<');
    out.extend_from_slice(tag);
    out.push(b'>');
    push_i64(out, value);
    end_tag(out, tag);
}

fn open(out: &mut Vec<u8>, depth: usize, tag: &[u8]) {
    indent(out, depth);
    out.push(b'<');
    out.extend_from_slice(tag);
    out.push(b'>');
}

fn close(out: &mut Vec<u8>, depth: usize, tag: &[u8]) {
    indent(out, depth);
    end_tag(out, tag);
}

fn end_tag(out: &mut Vec<u8>, tag: &[u8]) {
    out.extend_from_slice(b"</");
    out.extend_from_slice(tag);
    out.push(b'>');
}

/// A line break and `depth` levels of two-space indent; nothing before the root element.
fn indent(out: &mut Vec<u8>, depth: usize) {
    const SPACES: &[u8; 32] = b"                                ";
    if out.is_empty() {
        return;
    }
    out.push(b'\n');
    let mut n = depth * 2;
    while n > 0 {
        let chunk = n.min(SPACES.len());
        out.extend_from_slice(&SPACES[..chunk]);
        n -= chunk;
    }
}

/// Element text, escaped as XStream's `PrettyPrintWriter` does (`& < > " '` and `\r`).
///
/// Characters that XML 1.0 forbids (C0 controls other than tab and line feed, U+FFFE, U+FFFF)
/// become U+FFFD, as in XStream's `XML_1_0_REPLACEMENT` mode. Eureka runs XStream in its default
/// quirks mode, which writes them as character references (`&#x1;`, `&#xfffe;`) that every strict
/// parser rejects, so one such registration would break every XML client's fetch.
fn text(out: &mut Vec<u8>, s: &str) {
    const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();
    let bytes = s.as_bytes();
    let mut start = 0;
    for (n, &b) in bytes.iter().enumerate() {
        let (escaped, width): (&[u8], usize) = match b {
            b'&' => (b"&amp;", 1),
            b'<' => (b"&lt;", 1),
            b'>' => (b"&gt;", 1),
            b'"' => (b"&quot;", 1),
            b'\'' => (b"&apos;", 1),
            b'\r' => (b"&#xd;", 1),
            b'\t' | b'\n' => continue,
            0x00..=0x1f => (REPLACEMENT, 1),
            // U+FFFE and U+FFFF are EF BF BE and EF BF BF in UTF-8.
            0xEF if matches!(bytes.get(n + 1..n + 3), Some([0xBF, 0xBE | 0xBF])) => {
                (REPLACEMENT, 3)
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..n]);
        out.extend_from_slice(escaped);
        start = n + width;
    }
    out.extend_from_slice(&bytes[start..]);
}
