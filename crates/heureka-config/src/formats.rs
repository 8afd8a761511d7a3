//! Parsers for the two file formats Spring Boot reads, YAML and `.properties`, into flat
//! `key = value` documents.
//!
//! Both formats may hold several documents (`---` in YAML, `#---` in `.properties`); a document
//! can name the profiles it applies to with `spring.config.activate.on-profile`.

use yaml_rust2::{Yaml, YamlLoader};

use crate::names::Names;

/// One document of a file, flattened to dotted keys in file order.
#[derive(Debug, Default)]
pub(crate) struct Document {
    pub(crate) entries: Vec<(String, String)>,
}

impl Document {
    /// The profile expression of `spring.config.activate.on-profile` (or the legacy
    /// `spring.profiles`), if the document has one.
    pub(crate) fn on_profile(&self) -> Option<&str> {
        let names = Names::default();
        let activation = ["spring.config.activate.on-profile", "spring.profiles"]
            .map(|key| names.canonical(key));
        self.entries
            .iter()
            .rev()
            .find(|(key, _)| activation.contains(&names.canonical(key)))
            .map(|(_, value)| value.as_str())
    }
}

/// Parses YAML: nested maps become dotted keys and sequences `key[0]`, `key[1]`, as Spring's
/// `YamlPropertySourceLoader` does. Nulls become empty strings.
pub(crate) fn parse_yaml(text: &str) -> Result<Vec<Document>, String> {
    let documents = YamlLoader::load_from_str(text).map_err(|error| error.to_string())?;
    let mut parsed = Vec::new();
    for root in &documents {
        let mut document = Document::default();
        match root {
            Yaml::Hash(_) => flatten("", root, &mut document.entries),
            Yaml::Null | Yaml::BadValue => {}
            _ => return Err("the top level of a document must be a mapping".to_owned()),
        }
        parsed.push(document);
    }
    Ok(parsed)
}

/// Parses a Java `.properties` file: `key=value`, `key: value` or `key value`; `#` and `!`
/// comment lines; a trailing backslash continues the line; `\t`, `\n`, `\uXXXX` escapes.
pub(crate) fn parse_properties(text: &str) -> Vec<Document> {
    let mut documents = vec![Document::default()];
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line == "#---" || line == "!---" {
            documents.push(Document::default());
            continue;
        }
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
            continue;
        }
        let mut logical = trimmed.to_owned();
        while ends_with_continuation(&logical) {
            logical.pop();
            match lines.next() {
                Some(next) => logical.push_str(next.trim_start()),
                None => break,
            }
        }
        let (key, value) = split_property(&logical);
        if let Some(document) = documents.last_mut() {
            document.entries.push((key, value));
        }
    }
    documents
}

fn flatten(prefix: &str, node: &Yaml, out: &mut Vec<(String, String)>) {
    match node {
        Yaml::Hash(map) if map.is_empty() && !prefix.is_empty() => {
            out.push((prefix.to_owned(), String::new()));
        }
        Yaml::Hash(map) => {
            for (key, value) in map {
                let key = scalar_text(key);
                let path = if prefix.is_empty() {
                    key
                } else if key.starts_with('[') {
                    format!("{prefix}{key}")
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&path, value, out);
            }
        }
        Yaml::Array(items) if items.is_empty() => out.push((prefix.to_owned(), String::new())),
        Yaml::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{index}]"), item, out);
            }
        }
        scalar => out.push((prefix.to_owned(), scalar_text(scalar))),
    }
}

fn scalar_text(node: &Yaml) -> String {
    match node {
        Yaml::Real(text) | Yaml::String(text) => text.clone(),
        Yaml::Integer(number) => number.to_string(),
        Yaml::Boolean(flag) => flag.to_string(),
        _ => String::new(),
    }
}

fn ends_with_continuation(line: &str) -> bool {
    line.chars().rev().take_while(|c| *c == '\\').count() % 2 == 1
}

/// Splits a logical line at the first unescaped `=`, `:` or whitespace.
fn split_property(line: &str) -> (String, String) {
    let mut key_end = line.len();
    let mut escaped = false;
    for (at, c) in line.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || c.is_whitespace() {
            key_end = at;
            break;
        }
    }
    let mut rest = line[key_end..].trim_start();
    if let Some(after) = rest.strip_prefix(['=', ':']) {
        rest = after.trim_start();
    }
    (unescape(&line[..key_end]), unescape(rest))
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(decoded) => out.push(decoded),
                    None => out.push_str(&hex),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}
