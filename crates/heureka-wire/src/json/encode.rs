//! Writing Eureka JSON byte for byte as the Java server does.
//!
//! The shape, field order and value types are those of `EurekaJacksonCodec.InstanceInfoSerializer`
//! (the legacy codec, which Spring's `CloudJacksonJson` subclasses): compact output, `application`
//! and `instance` always arrays, `@enabled` a string, `countryId` a number, the `@Auto` fields of
//! `InstanceInfo` as strings. Spring's client reads this with a strict bean mapper, so nothing
//! outside §4.1 of the protocol spec may ever appear here.
//!
//! Everything is appended to one pre-sized `Vec<u8>`: no intermediate `Value`, no per-field
//! allocation. A full fetch is the server's hottest path.

use std::collections::BTreeMap;

use heureka_core::{Application, Applications, DataCenterClass, Instance, Port};

use crate::fields::{AMAZON_DC_CLASS, DEFAULT_DC_CLASS, EMPTY_MAP_CLASS};
use crate::numbers::{push_i64, push_u64};
use crate::size;

/// Markup of one instance beyond its variable text (field names, fixed values), rounded up.
pub(crate) const INSTANCE_MARKUP: usize = 720;
/// Markup of one metadata entry: two quotes per string, colon, comma.
const ENTRY_MARKUP: usize = 6;

pub(crate) fn applications(apps: &Applications) -> Vec<u8> {
    let mut out = Vec::with_capacity(size::applications(apps, INSTANCE_MARKUP, ENTRY_MARKUP));
    out.extend_from_slice(br#"{"applications":{"versions__delta":""#);
    push_i64(&mut out, apps.versions_delta);
    out.extend_from_slice(br#"","apps__hashcode":"#);
    string(&mut out, &apps.apps_hashcode);
    out.extend_from_slice(br#","application":["#);
    for (n, app) in apps.applications.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        application_body(&mut out, app);
    }
    out.extend_from_slice(b"]}}");
    out
}

/// The start of an `applications` document, up to and including the `[` of its list.
pub(crate) fn applications_head(versions_delta: i64, apps_hashcode: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + apps_hashcode.len());
    out.extend_from_slice(br#"{"applications":{"versions__delta":""#);
    push_i64(&mut out, versions_delta);
    out.extend_from_slice(br#"","apps__hashcode":"#);
    string(&mut out, apps_hashcode);
    out.extend_from_slice(br#","application":["#);
    out
}

/// One application as an element of the `applications` list (no separator).
pub(crate) fn applications_entry(app: &Application) -> Vec<u8> {
    let hint = size::application(app, INSTANCE_MARKUP);
    let mut out = Vec::with_capacity(hint + 32);
    application_body(&mut out, app);
    out
}

pub(crate) const APPLICATIONS_SEPARATOR: &[u8] = b",";
pub(crate) const APPLICATIONS_TAIL: &[u8] = b"]}}";

pub(crate) fn application(app: &Application) -> Vec<u8> {
    let hint = size::application(app, INSTANCE_MARKUP);
    let mut out = Vec::with_capacity(hint + 64);
    out.extend_from_slice(br#"{"application":"#);
    application_body(&mut out, app);
    out.push(b'}');
    out
}

pub(crate) fn instance(instance: &Instance) -> Vec<u8> {
    let mut out = Vec::with_capacity(INSTANCE_MARKUP + size::instance_text(instance));
    out.extend_from_slice(br#"{"instance":"#);
    instance_body(&mut out, instance);
    out.push(b'}');
    out
}

/// `{"name":"APP","instance":[…]}`. The `instance` array is written even when empty: Spring's
/// `Application` constructor loops over it and fails on a missing list.
fn application_body(out: &mut Vec<u8>, app: &Application) {
    out.extend_from_slice(br#"{"name":"#);
    string(out, &app.name);
    out.extend_from_slice(br#","instance":["#);
    for (n, instance) in app.instances.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        instance_body(out, instance);
    }
    out.extend_from_slice(b"]}");
}

/// One instance object without the `{"instance":…}` wrapper, as it sits inside larger documents.
pub(crate) fn instance_body(out: &mut Vec<u8>, i: &Instance) {
    out.push(b'{');
    if let Some(id) = &i.instance_id {
        out.extend_from_slice(br#""instanceId":"#);
        string(out, id);
        out.push(b',');
    }
    out.extend_from_slice(br#""hostName":"#);
    string(out, &i.host_name);
    out.extend_from_slice(br#","app":"#);
    string(out, &i.app);
    out.extend_from_slice(br#","ipAddr":"#);
    string(out, &i.ip_addr);
    // The serializer leaves out the deprecated `sid` while it holds one of its two defaults.
    if i.sid != "na" && i.sid != "unknown" {
        out.extend_from_slice(br#","sid":"#);
        string(out, &i.sid);
    }
    out.extend_from_slice(br#","status":""#);
    out.extend_from_slice(i.status.as_str().as_bytes());
    out.extend_from_slice(br#"","overriddenStatus":""#);
    out.extend_from_slice(i.overridden_status.as_str().as_bytes());
    out.extend_from_slice(br#"","port":"#);
    port(out, i.port);
    out.extend_from_slice(br#","securePort":"#);
    port(out, i.secure_port);
    out.extend_from_slice(br#","countryId":"#);
    push_i64(out, i64::from(i.country_id));
    if let Some(dc) = &i.data_center_info {
        out.extend_from_slice(br#","dataCenterInfo":{"@class":""#);
        out.extend_from_slice(match dc.class {
            DataCenterClass::Default => DEFAULT_DC_CLASS.as_bytes(),
            DataCenterClass::Amazon => AMAZON_DC_CLASS.as_bytes(),
        });
        out.extend_from_slice(br#"","name":"#);
        string(out, &dc.name);
        // Only `AmazonInfo` has metadata; Spring's reader rejects it on the default class. It is
        // a plain `HashMap` in Java, so an empty one is `{}`, without the `@class` marker.
        if dc.class == DataCenterClass::Amazon {
            out.extend_from_slice(br#","metadata":"#);
            map(out, &dc.metadata);
        }
        out.push(b'}');
    }
    let lease = &i.lease_info;
    out.extend_from_slice(br#","leaseInfo":{"renewalIntervalInSecs":"#);
    push_u64(out, u64::from(lease.renewal_interval_in_secs));
    out.extend_from_slice(br#","durationInSecs":"#);
    push_u64(out, u64::from(lease.duration_in_secs));
    out.extend_from_slice(br#","registrationTimestamp":"#);
    push_i64(out, lease.registration_timestamp);
    out.extend_from_slice(br#","lastRenewalTimestamp":"#);
    push_i64(out, lease.last_renewal_timestamp);
    out.extend_from_slice(br#","evictionTimestamp":"#);
    push_i64(out, lease.eviction_timestamp);
    out.extend_from_slice(br#","serviceUpTimestamp":"#);
    push_i64(out, lease.service_up_timestamp);
    out.extend_from_slice(br#"},"metadata":"#);
    if i.metadata.is_empty() {
        // Java's empty map is `Collections.emptyMap()`, which Jackson writes with its type id.
        out.extend_from_slice(br#"{"@class":""#);
        out.extend_from_slice(EMPTY_MAP_CLASS.as_bytes());
        out.extend_from_slice(br#""}"#);
    } else {
        map(out, &i.metadata);
    }
    // The `@Auto` fields of `InstanceInfo`, in declaration order, each a string, each only
    // when set.
    optional(out, br#","appGroupName":"#, &i.app_group_name);
    optional(out, br#","homePageUrl":"#, &i.home_page_url);
    optional(out, br#","statusPageUrl":"#, &i.status_page_url);
    optional(out, br#","healthCheckUrl":"#, &i.health_check_url);
    optional(
        out,
        br#","secureHealthCheckUrl":"#,
        &i.secure_health_check_url,
    );
    optional(out, br#","vipAddress":"#, &i.vip_address);
    optional(out, br#","secureVipAddress":"#, &i.secure_vip_address);
    out.extend_from_slice(if i.is_coordinating_discovery_server {
        br#","isCoordinatingDiscoveryServer":"true""#
    } else {
        br#","isCoordinatingDiscoveryServer":"false""#
    });
    out.extend_from_slice(br#","lastUpdatedTimestamp":""#);
    push_i64(out, i.last_updated_timestamp);
    out.extend_from_slice(br#"","lastDirtyTimestamp":""#);
    push_i64(out, i.last_dirty_timestamp);
    out.push(b'"');
    if let Some(action) = i.action_type {
        out.extend_from_slice(br#","actionType":""#);
        out.extend_from_slice(action.as_str().as_bytes());
        out.push(b'"');
    }
    optional(out, br#","asgName":"#, &i.asg_name);
    out.push(b'}');
}

/// `{"$":8080,"@enabled":"true"}`: the number is a number, the flag a string (fargo insists).
fn port(out: &mut Vec<u8>, port: Port) {
    out.extend_from_slice(br#"{"$":"#);
    push_u64(out, u64::from(port.number));
    out.extend_from_slice(if port.enabled {
        br#","@enabled":"true"}"#
    } else {
        br#","@enabled":"false"}"#
    });
}

fn optional(out: &mut Vec<u8>, key: &[u8], value: &Option<String>) {
    if let Some(value) = value {
        out.extend_from_slice(key);
        string(out, value);
    }
}

fn map(out: &mut Vec<u8>, map: &BTreeMap<String, String>) {
    out.push(b'{');
    for (n, (k, v)) in map.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        string(out, k);
        out.push(b':');
        string(out, v);
    }
    out.push(b'}');
}

/// A JSON string literal, escaped as Jackson does: the short forms for `\b \t \n \f \r`,
/// `\u00XX` for other control characters, everything else (non-ASCII included) as UTF-8.
pub(crate) fn string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (n, &b) in bytes.iter().enumerate() {
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\t' => b"\\t",
            b'\r' => b"\\r",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..n]);
        start = n + 1;
        if short.is_empty() {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(short);
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}
