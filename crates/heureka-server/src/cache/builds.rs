//! The count of documents built, by format and encoding, for the metrics.

use std::sync::atomic::{AtomicU64, Ordering};

use heureka_wire::Format;

use super::encoding::Encoding;

/// Documents built since start, by format and encoding: one count per body assembled for a
/// registry version (or because the entry aged), never per request.
#[derive(Debug, Default)]
pub(super) struct Builds([[AtomicU64; 2]; 2]);

impl Builds {
    fn slot(&self, format: Format, encoding: Encoding) -> &AtomicU64 {
        let format = match format {
            Format::Json => 0,
            Format::Xml => 1,
        };
        let encoding = match encoding {
            Encoding::Gzip => 0,
            Encoding::Plain => 1,
        };
        &self.0[format][encoding]
    }

    pub(super) fn count(&self, format: Format, encoding: Encoding) {
        self.slot(format, encoding).fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn get(&self, format: Format, encoding: Encoding) -> u64 {
        self.slot(format, encoding).load(Ordering::Relaxed)
    }
}
