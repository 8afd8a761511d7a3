//! How a cached document is sent: gzipped or plain.

/// How a document is sent: gzipped, or plain for a client that does not accept gzip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Encoding {
    Gzip,
    Plain,
}

impl Encoding {
    pub(crate) const ALL: [Encoding; 2] = [Encoding::Gzip, Encoding::Plain];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Encoding::Gzip => "gzip",
            Encoding::Plain => "identity",
        }
    }
}
