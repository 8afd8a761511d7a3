//! The cache of one document (full or delta) in both formats: each body built at most once per
//! registry version, format and encoding, by the first request that misses it.

use std::marker::PhantomData;
use std::time::Duration;

use heureka_wire::{ApplicationsPieces, Format};
use parking_lot::Mutex;

use super::age::{plain_wanted, younger};
use super::body::CachedBody;
use super::builds::Builds;
use super::encoding::Encoding;
use super::runs::{Runs, Wanted};
use super::source::Source;
use crate::clock::Instant;
use crate::store::Store;

/// A document per format, kept as runs.
#[derive(Debug)]
pub(crate) struct DocumentCache<S> {
    pub(super) json: Slot,
    pub(super) xml: Slot,
    /// `response-cache-auto-expiration-in-seconds`: even without changes, runs are re-encoded
    /// this often so the lease timestamps they show do not age indefinitely.
    max_age: Duration,
    builds: Builds,
    source: PhantomData<S>,
}

/// One format of one document.
#[derive(Debug, Default)]
pub(super) struct Slot {
    /// Held by the one build at a time, and only by it.
    pub(super) runs: Mutex<Runs>,
    /// The bodies built so far for the latest version; held only to look or to store.
    ready: Mutex<Ready>,
}

#[derive(Debug, Default)]
struct Ready {
    /// The registry version the bodies are of, and when its runs were planned.
    version: u64,
    planned_at: Option<Instant>,
    gzip: Option<CachedBody>,
    plain: Option<CachedBody>,
    plain_asked_at: Option<Instant>,
}

impl Ready {
    fn body(
        &self,
        version: u64,
        encoding: Encoding,
        now: Instant,
        max_age: Duration,
    ) -> Option<CachedBody> {
        let fresh =
            self.version == version && self.planned_at.is_some_and(|at| younger(at, now, max_age));
        let body = match encoding {
            Encoding::Gzip => &self.gzip,
            Encoding::Plain => &self.plain,
        };
        body.as_ref().filter(|_| fresh).cloned()
    }
}

impl<S: Source> DocumentCache<S> {
    pub(crate) fn new(max_age: Duration) -> DocumentCache<S> {
        DocumentCache {
            json: Slot::default(),
            xml: Slot::default(),
            max_age,
            builds: Builds::default(),
            source: PhantomData,
        }
    }

    /// How many bodies have been assembled (from kept or new runs) since start in this format
    /// and encoding.
    pub(crate) fn builds(&self, format: Format, encoding: Encoding) -> u64 {
        self.builds.get(format, encoding)
    }

    fn slot(&self, format: Format) -> &Slot {
        match format {
            Format::Json => &self.json,
            Format::Xml => &self.xml,
        }
    }

    /// The document for the registry's current version: [`DocumentCache::ready`], or built
    /// on the calling thread (the server builds on its blocking pool instead).
    #[cfg(test)]
    pub(crate) fn get(&self, store: &Store, format: Format, encoding: Encoding) -> CachedBody {
        self.ready(store, format, encoding)
            .unwrap_or_else(|| self.build(store, format, encoding))
    }

    /// The document for the registry's current version if it is built already: two short
    /// locks, never a wait for a build. Marks plain as wanted when asked for.
    pub(crate) fn ready(
        &self,
        store: &Store,
        format: Format,
        encoding: Encoding,
    ) -> Option<CachedBody> {
        let version = store.read().version();
        let now = store.instant();
        let mut ready = self.slot(format).ready.lock();
        if encoding == Encoding::Plain {
            ready.plain_asked_at = Some(now);
        }
        ready.body(version, encoding, now, self.max_age)
    }

    /// Builds the document for the registry's current version, or waits for the build under
    /// way and takes its result: one build per format at a time, never two of one body. Costs
    /// up to a whole encoding and compression of the document, so the server calls it off its
    /// async workers. Lock order: this format's runs, then the registry, then its ready bodies.
    pub(crate) fn build(&self, store: &Store, format: Format, encoding: Encoding) -> CachedBody {
        let slot = self.slot(format);
        let mut runs = slot.runs.lock();
        // The build waited for may have made this body.
        if let Some(body) = self.ready(store, format, encoding) {
            return body;
        }
        let now = store.instant();
        let keep_plain = plain_wanted(slot.ready.lock().plain_asked_at, now, self.max_age);
        let pieces = ApplicationsPieces { format };
        let version = store.read().version();
        let aged = runs
            .planned_at
            .is_none_or(|at| !younger(at, now, self.max_age));
        if runs.version != version || aged {
            let wanted = Wanted {
                gzip: encoding == Encoding::Gzip,
                plain: encoding == Encoding::Plain || keep_plain,
            };
            runs.replan::<S>(store, pieces, self.max_age, wanted);
        }
        let body = match encoding {
            Encoding::Gzip => runs.gzip_body(pieces, keep_plain),
            Encoding::Plain => runs.plain_body(pieces),
        };
        self.builds.count(format, encoding);
        let mut ready = slot.ready.lock();
        if ready.version != runs.version || ready.planned_at != runs.planned_at {
            ready.version = runs.version;
            ready.planned_at = runs.planned_at;
            ready.gzip = None;
            ready.plain = None;
        }
        match encoding {
            Encoding::Gzip => ready.gzip = Some(body.clone()),
            Encoding::Plain => ready.plain = Some(body.clone()),
        }
        body
    }
}

#[cfg(test)]
mod tests;
