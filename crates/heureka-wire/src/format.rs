//! Which of Eureka's two encodings a document is in, and its `Content-Type`.

/// Which of Eureka's two encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Json,
    Xml,
}

impl Format {
    /// The `Content-Type` to send with a body in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Xml => "application/xml",
        }
    }
}
