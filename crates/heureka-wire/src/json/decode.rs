//! Reading Eureka JSON leniently: both the legacy string-typed shape (Netflix's
//! `EurekaJacksonCodec`, Python, JS, fargo) and Spring's bean shape (`null`s, numeric timestamps,
//! a real boolean for `isCoordinatingDiscoveryServer`, `port`/`metadata` at the end).
//!
//! The body is parsed into an order-preserving [`Node`] tree first, which keeps the
//! field-by-field rules simple for replication batches. `null` anywhere means "absent", unknown
//! fields are skipped at any depth, and every value error names its field. A register body, an
//! application and a whole registry document are read without the tree, by [`super::stream`], to
//! the same rules; the tree readers for them stay here, for tests, as the oracle.

use std::collections::BTreeMap;

#[cfg(test)]
use heureka_core::{Application, Applications};
use heureka_core::{Instance, Millis};

use std::borrow::Cow;

use super::tree::Node;
use crate::error::one_line;
use crate::error::DecodeError;
use crate::fields::{self, InstanceBuilder, Scalar};

/// `versions__delta` when a document has none (the default of Java's `Applications`).
pub(crate) const NO_VERSION: i64 = -1;

/// The tree reader's register body, which [`super::stream::instance`] must match exactly.
#[cfg(test)]
pub(crate) fn instance(body: &[u8], now: Millis) -> Result<Instance, DecodeError> {
    let root = parse(body)?;
    let node = unwrap_root(&root, "instance", r#"a JSON object {"instance":{…}}"#)?;
    read_instance(node, now)
}

/// The tree reader's single-application document, which the streaming one must match exactly.
#[cfg(test)]
pub(crate) fn tree_application(body: &[u8]) -> Result<Application, DecodeError> {
    let root = parse(body)?;
    let node = unwrap_root(&root, "application", r#"a JSON object {"application":{…}}"#)?;
    read_application(node).map_err(|e| e.within("application"))
}

/// The tree reader's registry document, which the streaming one must match exactly.
#[cfg(test)]
pub(crate) fn tree_applications(body: &[u8]) -> Result<Applications, DecodeError> {
    let root = parse(body)?;
    let node = unwrap_root(
        &root,
        "applications",
        r#"a JSON object {"applications":{…}}"#,
    )?;
    let Node::Object(entries) = node else {
        unreachable!("unwrap_root returns objects")
    };
    let mut apps = Applications {
        versions_delta: NO_VERSION,
        apps_hashcode: String::new(),
        applications: Vec::new(),
    };
    for (key, value) in entries {
        let Some(scalar) = scalar(value) else {
            if key == "application" {
                apps.applications = list(value, "application", read_application)?;
            }
            continue;
        };
        // Spring's `Applications` builder takes any key starting with `version` as the version
        // and any starting with `apps` as the hash (`@JsonAnySetter`); the legacy reader knows
        // only the exact names, which this includes.
        if key.starts_with("version") {
            let name = || key.to_string();
            apps.versions_delta = scalar.int(&name)?.unwrap_or(NO_VERSION);
        } else if key.starts_with("apps") {
            apps.apps_hashcode = scalar.text().into_owned();
        } else if key == "application" {
            return Err(DecodeError::field(
                "application",
                "is not an array or an object",
            ));
        }
    }
    Ok(apps)
}

#[cfg(test)]
fn read_application(node: &Node<'_>) -> Result<Application, DecodeError> {
    let Node::Object(entries) = node else {
        return Err(DecodeError::field("", "is not an object"));
    };
    let mut app = Application {
        name: String::new(),
        instances: Vec::new(),
    };
    for (key, value) in entries {
        match &**key {
            "name" => {
                if let Some(s) = scalar(value) {
                    app.name = fields::upper_case(&s.text());
                }
            }
            // Instances inside a registry document always carry their timestamps; if one does
            // not, 0 ("never") is the honest default, as there is no parse time to speak of.
            "instance" => app.instances = list(value, "instance", |n| read_instance(n, 0))?,
            _ => {}
        }
    }
    Ok(app)
}

/// `application` and `instance` may be an array or, from older servers, a single object.
#[cfg(test)]
fn list<T>(
    node: &Node<'_>,
    name: &str,
    read: impl Fn(&Node<'_>) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    match node {
        Node::Null => Ok(Vec::new()),
        Node::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| read(item).map_err(|e| e.within(&format!("{name}[{i}]"))))
            .collect(),
        Node::Object(_) => Ok(vec![read(node).map_err(|e| e.within(name))?]),
        _ => Err(DecodeError::field(name, "is not an array or an object")),
    }
}

pub(crate) fn read_instance(node: &Node<'_>, now: Millis) -> Result<Instance, DecodeError> {
    let Node::Object(entries) = node else {
        return Err(DecodeError::field("", "is not an object"));
    };
    let mut b = InstanceBuilder::new(now);
    for (key, value) in entries {
        if let Node::Null = value {
            continue;
        }
        match &**key {
            "port" | "securePort" => read_port(&mut b, key, value)?,
            "dataCenterInfo" => b.set_data_center(read_data_center(value)?),
            "leaseInfo" => {
                for (k, v) in object(value, "leaseInfo")? {
                    if let Some(s) = scalar(v) {
                        b.lease(k, s)?;
                    }
                }
            }
            "metadata" => read_metadata(object(value, "metadata")?, "metadata", b.metadata_mut())?,
            _ => match scalar(value) {
                Some(s) => b.scalar(key, s)?,
                None if fields::is_scalar_field(key) => {
                    return Err(DecodeError::field(&**key, "is not a single value"));
                }
                None => {}
            },
        }
    }
    let mut instance = b.finish();
    fill_instance_id_from_metadata(&mut instance);
    Ok(instance)
}

/// `{"$": 8080, "@enabled": "true"}`; the number may be a string and the flag a boolean, a
/// string or a number. Unknown keys inside are skipped (the Java reader would fail on them).
fn read_port(b: &mut InstanceBuilder, key: &str, value: &Node<'_>) -> Result<(), DecodeError> {
    if let Some(s) = scalar(value) {
        return b.scalar(key, s);
    }
    for (k, v) in object(value, key)? {
        match (&**k, scalar(v)) {
            ("$", Some(s)) => b.port_number(key, s)?,
            ("@enabled", Some(s)) => b.port_enabled(key, s.boolean()),
            _ => {}
        }
    }
    Ok(())
}

fn read_data_center(value: &Node<'_>) -> Result<heureka_core::DataCenterInfo, DecodeError> {
    let entries = object(value, "dataCenterInfo")?;
    let mut class = None;
    let mut name = None;
    let mut metadata = BTreeMap::new();
    for (k, v) in entries {
        match (&**k, v) {
            (_, Node::Null) => {}
            ("@class", v) => class = scalar(v).map(|s| s.text().into_owned()),
            ("name", v) => name = scalar(v).map(|s| s.text().into_owned()),
            ("metadata", v) => read_metadata(
                object(v, "dataCenterInfo.metadata")?,
                "dataCenterInfo.metadata",
                &mut metadata,
            )?,
            _ => {}
        }
    }
    fields::data_center(class.as_deref(), name, metadata)
}

/// Values are read as text, so numbers and booleans are fine; `@class` is Jackson's marker for
/// an empty map and is skipped. A nested object or array fails, as in every Java reader.
fn read_metadata(
    entries: &[(Cow<'_, str>, Node<'_>)],
    field: &str,
    map: &mut BTreeMap<String, String>,
) -> Result<(), DecodeError> {
    for (k, v) in entries {
        match (v, scalar(v)) {
            (Node::Null, _) => {}
            (_, Some(s)) => fields::put_metadata(map, k, s),
            (_, None) => return Err(DecodeError::field(format!("{field}.{k}"), "is not text")),
        }
    }
    Ok(())
}

/// Spring's `CloudJacksonJson` (legacy support for the Angel release): an instance without
/// `instanceId` but with `metadata.instanceId` gets `hostName:value`, or the value alone when it
/// already starts with the host name.
pub(crate) fn fill_instance_id_from_metadata(instance: &mut Instance) {
    if instance.instance_id.is_some() {
        return;
    }
    if let Some(id) = instance.metadata.get("instanceId") {
        instance.instance_id = Some(if id.starts_with(&instance.host_name) {
            id.clone()
        } else {
            format!("{}:{}", instance.host_name, id)
        });
    }
}

fn object<'a>(
    node: &'a Node<'a>,
    field: &str,
) -> Result<&'a [(Cow<'a, str>, Node<'a>)], DecodeError> {
    match node {
        Node::Object(entries) => Ok(entries),
        Node::Null => Ok(&[]),
        _ => Err(DecodeError::field(field, "is not an object")),
    }
}

pub(crate) fn scalar<'a>(node: &'a Node<'_>) -> Option<Scalar<'a>> {
    match node {
        Node::Bool(b) => Some(Scalar::Bool(*b)),
        Node::Int(n) => Some(Scalar::Int(*n)),
        Node::Float(x) => Some(Scalar::Float(*x)),
        Node::Str(s) => Some(Scalar::Text(s)),
        Node::Null | Node::Array(_) | Node::Object(_) => None,
    }
}

/// Parses the body, turning serde_json's error into one line that says where.
pub(crate) fn parse(body: &[u8]) -> Result<Node<'_>, DecodeError> {
    let body = prepare(body)?;
    match std::str::from_utf8(body) {
        Ok(text) => serde_json::from_str(text),
        // The byte-by-byte reader finds the same bad byte and says where it is.
        Err(_) => serde_json::from_slice(body),
    }
    .map_err(malformed)
}

/// A body is checked for UTF-8 once, whole, before it is parsed (see [`parse`]): serde_json's
/// byte reader checks every string on its own, which was a twentieth of reading a record.
///
/// The body without a byte-order mark (some Windows-born clients prefix one, which serde_json
/// refuses), or `Empty` when nothing but whitespace is left.
pub(crate) fn prepare(body: &[u8]) -> Result<&[u8], DecodeError> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(DecodeError::Empty);
    }
    Ok(body)
}

/// serde_json's error as one line that says where.
pub(crate) fn malformed(e: serde_json::Error) -> DecodeError {
    let (line, column) = (e.line(), e.column());
    let full = e.to_string();
    let reason = full
        .strip_suffix(&format!(" at line {line} column {column}"))
        .unwrap_or(&full);
    DecodeError::Malformed(format!(
        "invalid JSON at line {line} column {column}: {}",
        one_line(reason)
    ))
}

/// The Java server requires the wrapper object (`{"instance":{…}}`) and answers 400 without it;
/// so do we. Other keys beside the wrapper are ignored.
#[cfg(test)]
fn unwrap_root<'a>(
    root: &'a Node<'a>,
    key: &str,
    expected: &'static str,
) -> Result<&'a Node<'a>, DecodeError> {
    match root.get(key) {
        Some(inner @ Node::Object(_)) => Ok(inner),
        _ => Err(DecodeError::WrongRoot { expected }),
    }
}
