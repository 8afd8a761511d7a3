//! Reading Eureka XML leniently: XStream's documents, fargo's register bodies (no `class` on
//! `dataCenterInfo`, empty elements) and anything in between.
//!
//! The body is parsed with quick-xml into a small element tree, then mapped field by field with
//! the same rules as JSON ([`crate::fields`]). A DOCTYPE is refused outright, so no entity is
//! ever declared, let alone expanded; references to undeclared entities are syntax errors.
//!
//! Every element and attribute name is decoded from XStream's coding as it is read, as XStream's
//! reader does, so `<a_.0020b>` in `metadata` is the key `a b`. A character that XML 1.0 forbids
//! (U+FFFE, most C0 controls), raw or as a character reference, makes the body malformed: the
//! Java server's parser refuses such a body with 400 too, and we would otherwise store text that
//! no XML document can hold.

use std::borrow::Cow;
use std::collections::BTreeMap;

use heureka_core::{Application, Applications, Instance, Millis};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::name_chars::is_xml_char;
use super::names::decode_name;
use crate::error::one_line;
use crate::error::DecodeError;
use crate::fields::{self, InstanceBuilder, Scalar};

/// `versions__delta` when a document has none (the default of Java's `Applications`).
const NO_VERSION: i64 = -1;
/// Deeper nesting than any Eureka document is refused before it can cost anything.
const MAX_DEPTH: usize = 32;

/// One element: its name (decoded from XStream's coding), attributes, text and children.
#[derive(Debug, Default)]
struct Element {
    name: String,
    attributes: Vec<(String, String)>,
    text: String,
    children: Vec<Element>,
}

impl Element {
    fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

pub(crate) fn instance(body: &[u8], now: Millis) -> Result<Instance, DecodeError> {
    let root = parse(body)?;
    if root.name != "instance" {
        return Err(DecodeError::WrongRoot {
            expected: "an <instance> element",
        });
    }
    read_instance(&root, now)
}

pub(crate) fn application(body: &[u8]) -> Result<Application, DecodeError> {
    let root = parse(body)?;
    if root.name != "application" {
        return Err(DecodeError::WrongRoot {
            expected: "an <application> element",
        });
    }
    read_application(&root).map_err(|e| e.within("application"))
}

pub(crate) fn applications(body: &[u8]) -> Result<Applications, DecodeError> {
    let root = parse(body)?;
    if root.name != "applications" {
        return Err(DecodeError::WrongRoot {
            expected: "an <applications> element",
        });
    }
    let mut apps = Applications {
        versions_delta: NO_VERSION,
        apps_hashcode: String::new(),
        applications: Vec::new(),
    };
    for child in &root.children {
        let name = &child.name;
        // Same tolerance as Spring's `@JsonAnySetter`: `version…` is the version, `apps…` the hash.
        if name == "application" {
            let n = apps.applications.len();
            apps.applications
                .push(read_application(child).map_err(|e| e.within(&format!("application[{n}]")))?);
        } else if name.starts_with("version") {
            let field = || name.clone();
            apps.versions_delta = Scalar::Text(&child.text).int(&field)?.unwrap_or(NO_VERSION);
        } else if name.starts_with("apps") {
            apps.apps_hashcode = child.text.clone();
        }
    }
    Ok(apps)
}

fn read_application(element: &Element) -> Result<Application, DecodeError> {
    let mut app = Application {
        name: String::new(),
        instances: Vec::new(),
    };
    for child in &element.children {
        match child.name.as_str() {
            "name" => app.name = fields::upper_case(&child.text),
            "instance" => {
                let n = app.instances.len();
                // No parse time inside a registry document: missing timestamps become 0.
                app.instances.push(
                    read_instance(child, 0).map_err(|e| e.within(&format!("instance[{n}]")))?,
                );
            }
            _ => {}
        }
    }
    Ok(app)
}

fn read_instance(element: &Element, now: Millis) -> Result<Instance, DecodeError> {
    let mut b = InstanceBuilder::new(now);
    for child in &element.children {
        let key = child.name.as_str();
        match key {
            "port" | "securePort" => {
                b.port_number(key, Scalar::Text(&child.text))?;
                // XStream's `InstanceInfo` converter: `port` is enabled unless the attribute says
                // "false", `securePort` only if it says "true". Absent, each keeps its default.
                let flag = |v: &str| v.trim().eq_ignore_ascii_case("true");
                let enabled = match (key, child.attribute("enabled")) {
                    (_, None) => None,
                    ("port", Some(v)) => Some(!v.trim().eq_ignore_ascii_case("false")),
                    (_, Some(v)) => Some(flag(v)),
                };
                b.port_enabled(key, enabled);
            }
            "dataCenterInfo" => {
                let mut name = None;
                let mut metadata = BTreeMap::new();
                for part in &child.children {
                    match part.name.as_str() {
                        "name" => name = Some(part.text.clone()),
                        "metadata" => read_metadata(part, &mut metadata),
                        _ => {}
                    }
                }
                b.set_data_center(fields::data_center(
                    child.attribute("class"),
                    name,
                    metadata,
                )?);
            }
            "leaseInfo" => {
                for part in &child.children {
                    b.lease(&part.name, Scalar::Text(&part.text))?;
                }
            }
            "metadata" => read_metadata(child, b.metadata_mut()),
            _ => b.scalar(key, Scalar::Text(&child.text))?,
        }
    }
    Ok(b.finish())
}

/// Each child is one entry, named by its key.
fn read_metadata(element: &Element, map: &mut BTreeMap<String, String>) {
    for entry in &element.children {
        fields::put_metadata(map, &entry.name, Scalar::Text(&entry.text));
    }
}

/// Parses a whole document into its root element.
fn parse(body: &[u8]) -> Result<Element, DecodeError> {
    // A UTF-8 byte-order mark is allowed before the document; only UTF-8 is accepted.
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let text = std::str::from_utf8(body).map_err(|e| {
        DecodeError::Malformed(format!(
            "XML body is not valid UTF-8 at byte {}",
            e.valid_up_to()
        ))
    })?;
    if text.trim().is_empty() {
        return Err(DecodeError::Empty);
    }
    if let Some((at, c)) = text.char_indices().find(|&(_, c)| !is_xml_char(c)) {
        return Err(DecodeError::Malformed(format!(
            "invalid XML at byte {at}: {}",
            forbidden(c)
        )));
    }
    let mut reader = Reader::from_str(text);
    // Our own findings are reported where the reader stands; syntax errors where they start.
    let malformed = |reader: &Reader<&[u8]>, reason: &dyn std::fmt::Display| {
        let reason = one_line(&reason.to_string());
        let at = reader.buffer_position();
        DecodeError::Malformed(format!("invalid XML at byte {at}: {reason}"))
    };
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let event = reader.read_event().map_err(|e| {
            let reason = one_line(&e.to_string());
            DecodeError::Malformed(format!(
                "invalid XML at byte {}: {reason}",
                reader.error_position()
            ))
        })?;
        match event {
            Event::DocType(_) => return Err(DecodeError::DocType),
            Event::Start(start) => {
                if root.is_some() {
                    return Err(malformed(&reader, &"more than one root element"));
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(malformed(&reader, &"elements nested too deeply"));
                }
                stack.push(element(&start).map_err(|e| malformed(&reader, &e))?);
            }
            Event::Empty(start) => {
                let element = element(&start).map_err(|e| malformed(&reader, &e))?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(element),
                    None if root.is_none() => root = Some(element),
                    None => return Err(malformed(&reader, &"more than one root element")),
                }
            }
            Event::End(_) => {
                let done = stack
                    .pop()
                    .expect("quick-xml checks that end tags match start tags");
                match stack.last_mut() {
                    Some(parent) => parent.children.push(done),
                    None => root = Some(done),
                }
            }
            Event::Text(t) => {
                let t = t.unescape().map_err(|e| malformed(&reader, &e))?;
                let t = check_references(t).map_err(|e| malformed(&reader, &e))?;
                match stack.last_mut() {
                    Some(top) => top.text.push_str(&t),
                    None if t.trim().is_empty() => {}
                    None => return Err(malformed(&reader, &"text outside the root element")),
                }
            }
            Event::CData(c) => {
                let raw = c.into_inner();
                let t = std::str::from_utf8(&raw).map_err(|e| malformed(&reader, &e))?;
                match stack.last_mut() {
                    Some(top) => top.text.push_str(t),
                    None => return Err(malformed(&reader, &"text outside the root element")),
                }
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {}
            Event::Eof => break,
        }
    }
    if !stack.is_empty() {
        return Err(malformed(&reader, &"unexpected end of document"));
    }
    root.ok_or_else(|| malformed(&reader, &"no root element"))
}

fn element(start: &BytesStart<'_>) -> Result<Element, String> {
    let name = decoded_name(start.name().as_ref());
    let mut attributes = Vec::new();
    for attribute in start.attributes() {
        let attribute = attribute.map_err(|e| e.to_string())?;
        let value = check_references(attribute.unescape_value().map_err(|e| e.to_string())?)?;
        attributes.push((decoded_name(attribute.key.as_ref()), value.into_owned()));
    }
    Ok(Element {
        name,
        attributes,
        ..Element::default()
    })
}

/// A name as XStream reads it, decoded from its coding. The body is valid UTF-8 already.
fn decoded_name(raw: &[u8]) -> String {
    decode_name(&String::from_utf8_lossy(raw)).into_owned()
}

/// Text or an attribute value after unescaping may hold a forbidden character only through a
/// character reference (`&#x1;`): raw ones were refused before parsing.
fn check_references(unescaped: Cow<'_, str>) -> Result<Cow<'_, str>, String> {
    if let Cow::Owned(s) = &unescaped {
        if let Some(c) = s.chars().find(|&c| !is_xml_char(c)) {
            return Err(forbidden(c));
        }
    }
    Ok(unescaped)
}

fn forbidden(c: char) -> String {
    format!("character U+{:04X} is not allowed in XML 1.0", u32::from(c))
}
