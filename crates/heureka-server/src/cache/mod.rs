//! The response cache: full and delta documents, never stale, re-encoded as little as possible.
//!
//! Eureka serves reads from a read-only copy refreshed every 30 s, so a new registration can
//! stay invisible for that long. Heureka keys every cached document on the registry's version
//! instead: any visible change makes the next read rebuild, so reads are never stale, while a
//! burst of reads between changes (and all heartbeats, which do not change the version) is
//! served from the same pre-encoded, pre-compressed bytes.
//!
//! Both documents are kept as runs of consecutive applications, each encoded once and, when a
//! client asks for gzip, compressed once into its own deflate segment. A change re-encodes only
//! the applications it touched and recompresses only the runs holding them: the full document
//! follows `Registry::application_versions`, the delta `Registry::delta_applications`, in
//! the delta's order. The gzip body is the runs' deflate segments laid end to end inside one
//! gzip member (each segment ends on a byte boundary with a sync flush and none refers back
//! past its start, which is how `pigz` builds one stream from parallel pieces), so clients
//! receive ordinary single-member gzip. The plain body is the runs' plain bytes, sent as kept
//! ([`CachedBody`](body::CachedBody)).
//!
//! A build settles which runs make the document under the registry lock, so a document is one
//! registry version's. Before that, a build with many runs to encode copies them out of the
//! registry a batch at a time and encodes and compresses them between locks
//! ([`Runs::encode_stale_unlocked`](runs::Runs::encode_stale_unlocked)), so heartbeats do not wait seconds for a large build and
//! the build never holds a whole document's plain bytes.
//!
//! Every body is built at most once per registry version, format and encoding, by the first
//! request that finds it missing, while the others wait for it (one build lock per document
//! and format). A request finding its body ready takes it without waiting for a build of
//! another encoding or version ([`DocumentCache::ready`](document::DocumentCache::ready)). An encoding nobody asks for costs
//! nothing: plain-only readers never compress, gzip-only readers keep no plain copy (plain
//! bytes are twenty times the size of the gzip, kept only while clients ask for plain).
//!
//! One file per part, each below the ones that use it: `encoding.rs`, `body.rs`, `age.rs` and
//! `builds.rs` are leaves; `gzip.rs` makes segments and members; `plan.rs` cuts a document into
//! runs and `source.rs` says what a document lists; `runs.rs` keeps one format's runs;
//! `document.rs` is the cache of one document, `full.rs` and `delta.rs` its two sources;
//! `selection.rs` caches single-application and VIP reads; `merged.rs` the documents that
//! include remote regions (`regions/`), whole bodies keyed on both versions.

mod age;
mod body;
mod builds;
mod delta;
mod document;
mod encoding;
#[cfg(test)]
mod fixtures;
mod full;
mod gzip;
mod merged;
mod pages;
mod plan;
mod runs;
mod selection;
mod source;

pub(crate) use body::CachedBody;
pub(crate) use delta::DeltaCache;
pub(crate) use encoding::Encoding;
pub(crate) use full::FullFetchCache;
pub(crate) use gzip::{crc_of, deflate, Checksum, GzipMember};
pub(crate) use merged::{MergedCache, MergedKey};
pub(crate) use selection::{Selection, SelectionCache};
