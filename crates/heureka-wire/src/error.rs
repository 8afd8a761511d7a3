//! Why a body could not be read.
//!
//! Every message is one line that names the offending field where there is one, so the server can
//! send it back verbatim in a 400 response. All variants mean "bad request": choosing 415 for an
//! unsupported `Content-Type` happens before decoding, in the server.

/// Why a body could not be read. The message is one line, fit for a 400 response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The body is not well-formed JSON or XML, or not UTF-8. The message says where.
    #[error("{0}")]
    Malformed(String),
    /// The body has no content at all.
    #[error("request body is empty")]
    Empty,
    /// An XML body declares a DOCTYPE (and so possibly entities). Never expanded, always refused.
    #[error("XML DOCTYPE declarations are not allowed")]
    DocType,
    /// The document is well-formed but its root is not the expected wrapper, e.g. an unwrapped
    /// instance object (the Java server answers 400 to those too).
    #[error("expected {expected} at the root of the body")]
    WrongRoot { expected: &'static str },
    /// A known field holds a value of the wrong kind, e.g. `port.$ is not a number`.
    #[error("{field} {reason}")]
    InvalidField { field: String, reason: &'static str },
}

impl DecodeError {
    /// A field path may hold a client's metadata key, so it is made [`one_line`].
    pub(crate) fn field(field: impl Into<String>, reason: &'static str) -> DecodeError {
        DecodeError::InvalidField {
            field: one_line(&field.into()),
            reason,
        }
    }

    /// Prefixes the field path with where the instance sits in a larger document, so that an
    /// error deep in a registry document still names the exact place.
    pub(crate) fn within(self, prefix: &str) -> DecodeError {
        match self {
            DecodeError::InvalidField { field, reason } => {
                let field = if field.is_empty() {
                    prefix.to_owned()
                } else {
                    format!("{prefix}.{field}")
                };
                DecodeError::InvalidField { field, reason }
            }
            other => other,
        }
    }
}

/// Longest piece of a client's text quoted in a message.
const MAX_QUOTED_CHARS: usize = 200;

/// `text` fit for a one-line message: control characters and Unicode's line and paragraph
/// separators written as escapes (`\n`, `\u{2028}`), and cut once [`MAX_QUOTED_CHARS`]
/// characters are written, since it may quote a client's metadata key or element name.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_QUOTED_CHARS));
    let mut written = 0;
    for c in text.chars() {
        if written >= MAX_QUOTED_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
            let escaped = c.escape_debug();
            written += escaped.len();
            out.extend(escaped);
        } else {
            written += 1;
            out.push(c);
        }
    }
    out
}
