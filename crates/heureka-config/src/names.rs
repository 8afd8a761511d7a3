//! Spring's relaxed property names: the canonical form that makes `enableSelfPreservation`,
//! `enable-self-preservation` and `enable_self_preservation` one key, and the environment
//! variable names (`EUREKA_SERVER_ENABLESELFPRESERVATION`) that map to a key; and the checks
//! an application's key table runs on its own names, written as patterns (`server.port`,
//! `logging.level.<target>`, `heureka.webhooks[<n>].url`).

use std::collections::HashMap;
use std::sync::Arc;

#[cfg(test)]
mod tests;

/// The relaxed-name rules of one application: which keys are maps whose keys are kept as
/// written (`eureka.client.service-url.defaultZone` keeps its `Z`, as Spring's binder keeps a
/// `Map<String, …>` key). Cheap to clone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    /// The map prefixes in canonical form.
    map_prefixes: Arc<[String]>,
}

impl Names {
    /// Names whose elements after any of `map_prefixes` (written in any relaxed form, e.g.
    /// `eureka.client.service-url`) are map keys, kept verbatim.
    pub fn new(map_prefixes: &[&str]) -> Names {
        Names {
            map_prefixes: map_prefixes.iter().map(|p| canonical_plain(p)).collect(),
        }
    }

    /// The map prefixes, in canonical form.
    pub fn map_prefixes(&self) -> &[String] {
        &self.map_prefixes
    }

    /// Whether `name` is an entry of one of the maps (`prefix.<key>`).
    pub fn is_map_entry(&self, name: &str) -> bool {
        let canonical = self.canonical(name);
        self.map_prefixes.iter().any(|prefix| {
            canonical.starts_with(prefix.as_str()) && canonical[prefix.len()..].starts_with('.')
        })
    }

    /// The first of `names` that is the same key as an earlier one in relaxed form, with that
    /// earlier one: `(later, first)`. A key table uses it to hold each key once.
    pub fn first_repeat<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Option<(&'a str, &'a str)> {
        let mut seen = HashMap::new();
        names
            .into_iter()
            .find_map(|name| Some((name, seen.insert(self.canonical(name), name)?)))
    }

    /// Spring's canonical form of a property name, used to compare relaxed spellings: each
    /// dot-separated element lower-cased without `-` and `_`; indices kept as `[n]`; the map
    /// key after a map prefix kept verbatim.
    pub fn canonical(&self, name: &str) -> String {
        let mut out = String::new();
        let mut in_map_key = false;
        for element in elements(name) {
            let index = element.strip_prefix('[').and_then(|e| e.strip_suffix(']'));
            match index {
                Some(inner) if inner.chars().all(|c| c.is_ascii_digit()) => {
                    out.push_str(element);
                    continue;
                }
                _ => {}
            }
            if !out.is_empty() {
                out.push('.');
            }
            if in_map_key {
                out.push_str(index.unwrap_or(element));
                continue;
            }
            let element = index.unwrap_or(element);
            out.extend(
                element
                    .chars()
                    .filter(|c| *c != '-' && *c != '_')
                    .flat_map(char::to_lowercase),
            );
            in_map_key = self.map_prefixes.contains(&out);
        }
        out
    }

    /// The environment variable names Spring's `SystemEnvironmentPropertyMapper` maps to
    /// `name`: `EUREKA_SERVER_ENABLESELFPRESERVATION` first, then the legacy
    /// `EUREKA_SERVER_ENABLE_SELF_PRESERVATION`. Map keys are upper-cased with `.`/`-` as `_`.
    pub fn env_names(&self, name: &str) -> Vec<String> {
        let canonical_name = self.canonical(name);
        let map_prefix = self
            .map_prefixes
            .iter()
            .find(|prefix| canonical_name.starts_with(&format!("{prefix}.")));
        let (head, map_key) = match &map_prefix {
            Some(prefix) => (
                (*prefix).clone(),
                Some(canonical_name[prefix.len() + 1..].replace(['.', '-'], "_")),
            ),
            None => (canonical_name.clone(), None),
        };
        let written_head: Vec<&str> = elements(name)
            .into_iter()
            .take(head.split('.').count())
            .collect();
        let uniform = head.replace('.', "_");
        let legacy = written_head.join("_").replace('-', "_");
        let mut names = Vec::new();
        for base in [uniform, legacy] {
            let full = match &map_key {
                Some(map_key) => format!("{base}_{map_key}"),
                None => base,
            }
            .to_uppercase();
            if !names.contains(&full) {
                names.push(full);
            }
        }
        names
    }
}

/// The shapes of key a table's name pattern stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One key: `server.port`.
    Single,
    /// A map's entries, the map key last as a marker: `logging.level.<target>`.
    Map,
    /// One property of a list's entries, the index as `[<n>]`: `heureka.webhooks[<n>].url`.
    Indexed,
}

/// Whether `pattern` is in Spring's canonical form: lower-case kebab-case elements, then
/// `.<key>` for a map's entries or `[<n>].` before a list entry's property.
pub fn is_canonical(pattern: &str) -> bool {
    let pattern = pattern.replace("[<n>].", ".");
    let pattern = match pattern.rsplit_once('.') {
        Some((prefix, last)) if is_marker(last) => prefix,
        _ => &pattern,
    };
    pattern.split('.').all(|element| {
        !element.is_empty()
            && !element.starts_with('-')
            && !element.ends_with('-')
            && element
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    })
}

/// The shape `pattern` stands for, or `None` when its markers are misplaced.
pub fn shape_of(pattern: &str) -> Option<Shape> {
    let markers = pattern.matches('<').count();
    if let Some((list, property)) = pattern.split_once("[<n>].") {
        return (markers == 1 && !list.contains('[') && !property.contains(['[', '.']))
            .then_some(Shape::Indexed);
    }
    match pattern.rsplit_once('.') {
        Some((_, last)) if is_marker(last) => (markers == 1).then_some(Shape::Map),
        _ => (markers == 0 && !pattern.contains('[')).then_some(Shape::Single),
    }
}

/// `logging.level` for `logging.level.<target>`: the map a map pattern's entries belong to.
pub fn map_prefix(pattern: &str) -> &str {
    pattern
        .rsplit_once('.')
        .map_or(pattern, |(prefix, _)| prefix)
}

/// `<zone>`, `<target>`: a map key written as a marker.
fn is_marker(element: &str) -> bool {
    element.len() > 2 && element.starts_with('<') && element.ends_with('>')
}

/// Splits `a.b[0].c` into `a`, `b`, `[0]`, `c`; a bracketed element may contain dots.
fn elements(name: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut depth = 0usize;
    for (at, c) in name.char_indices() {
        match c {
            '[' if depth == 0 => {
                if at > start {
                    parts.push(&name[start..at]);
                }
                start = at;
                depth = 1;
            }
            '[' => depth += 1,
            ']' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    parts.push(&name[start..=at]);
                    start = at + 1;
                }
            }
            '.' if depth == 0 => {
                if at > start {
                    parts.push(&name[start..at]);
                }
                start = at + 1;
            }
            _ => {}
        }
    }
    if start < name.len() {
        parts.push(&name[start..]);
    }
    parts
}

/// The canonical form of a name without map-key handling (used on the prefixes themselves).
fn canonical_plain(name: &str) -> String {
    name.split('.')
        .map(|element| {
            element
                .chars()
                .filter(|c| *c != '-' && *c != '_')
                .flat_map(char::to_lowercase)
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(".")
}
