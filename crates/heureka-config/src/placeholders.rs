//! `${key}` and `${key:default}` in values, resolved like Spring's
//! `PropertySourcesPlaceholderResolver`: against the merged properties, then the environment
//! (`${server.port}` also finds `SERVER_PORT`), then the placeholder's own default.

use crate::sources::Properties;

/// Nesting deeper than this is taken for a reference cycle.
const MAX_DEPTH: usize = 32;

/// Why a value could not be resolved; each names the placeholder as written.
#[derive(Debug, PartialEq, Eq)]
pub enum PlaceholderError {
    /// No property, variable, default or fallback has a value for it.
    Unresolvable(String),
    /// It refers, through others, to itself.
    Circular(String),
}

/// Resolves placeholders against merged properties and the environment.
pub struct Resolver<'a> {
    /// The merged properties, looked at first.
    pub properties: &'a Properties,
    /// The environment, looked at second.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The application's fallback for a key no source and no `:default` gives: its own
    /// default for the key, or a value Spring computes (`spring.cloud.client.hostname`).
    pub fallback: &'a dyn Fn(&str) -> Option<String>,
}

impl Resolver<'_> {
    /// `text` with every placeholder replaced. `\${` is a literal `${`; an unclosed `${` is
    /// left as it is.
    pub fn resolve(&self, text: &str) -> Result<String, PlaceholderError> {
        self.resolve_at(text, 0)
    }

    fn resolve_at(&self, text: &str, depth: usize) -> Result<String, PlaceholderError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            if rest[..start].ends_with('\\') {
                out.push_str(&rest[..start - 1]);
                out.push_str("${");
                rest = &rest[start + 2..];
                continue;
            }
            out.push_str(&rest[..start]);
            let Some(length) = closing_brace(&rest[start + 2..]) else {
                out.push_str(&rest[start..]);
                return Ok(out);
            };
            let inner = &rest[start + 2..start + 2 + length];
            out.push_str(&self.placeholder(inner, depth)?);
            rest = &rest[start + 3 + length..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The value of one placeholder body, `key` or `key:default`.
    fn placeholder(&self, inner: &str, depth: usize) -> Result<String, PlaceholderError> {
        if depth >= MAX_DEPTH {
            return Err(PlaceholderError::Circular(format!("${{{inner}}}")));
        }
        let (key_part, default) = match default_separator(inner) {
            Some(at) => (&inner[..at], Some(&inner[at + 1..])),
            None => (inner, None),
        };
        let key = self.resolve_at(key_part, depth + 1)?;
        if let Some(property) = self.properties.get(&key) {
            return self.resolve_at(&property.value, depth + 1);
        }
        if let Some(value) = self.env_lookup(&key) {
            return self.resolve_at(&value, depth + 1);
        }
        if let Some(default) = default {
            return self.resolve_at(default, depth + 1);
        }
        if let Some(value) = (self.fallback)(&key) {
            return Ok(value);
        }
        Err(PlaceholderError::Unresolvable(format!("${{{inner}}}")))
    }

    /// Spring's `SystemEnvironmentPropertySource` name variants: as written, with `.` and/or
    /// `-` as `_`, each also upper-cased.
    fn env_lookup(&self, key: &str) -> Option<String> {
        let dots = key.replace('.', "_");
        let dashes = key.replace('-', "_");
        let both = dots.replace('-', "_");
        [key.to_owned(), dots, dashes, both]
            .into_iter()
            .flat_map(|name| [name.to_uppercase(), name])
            .find_map(|name| (self.env)(&name))
    }
}

/// The length of the body up to the `}` closing an opened `${`, honouring nesting.
fn closing_brace(text: &str) -> Option<usize> {
    let mut depth = 1usize;
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at..].starts_with(b"${") {
            depth += 1;
            at += 2;
            continue;
        }
        if bytes[at] == b'}' {
            depth -= 1;
            if depth == 0 {
                return Some(at);
            }
        }
        at += 1;
    }
    None
}

/// The first `:` outside nested placeholders.
fn default_separator(inner: &str) -> Option<usize> {
    let mut depth = 0usize;
    let bytes = inner.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at..].starts_with(b"${") {
            depth += 1;
            at += 2;
            continue;
        }
        match bytes[at] {
            b'}' => depth = depth.saturating_sub(1),
            b':' if depth == 0 => return Some(at),
            _ => {}
        }
        at += 1;
    }
    None
}
