//! Remote regions (Eureka's `RemoteRegionRegistry`): other Eureka servers' registries,
//! fetched read-only and served beside the local one on reads that ask for them
//! (`docs/regions.md`).
//!
//! * `settings.rs` — the regions as configured: URLs without credentials, whitelists, timings;
//!   which regions a `regions=` names; which agents are region fetchers.
//! * `view.rs` — one region's registry as held: built from a full document, moved on by
//!   deltas (with the hashcode check), and the differences between two views.
//! * `region.rs` — one region's state with the time passed in: phase (starting, ready, stale,
//!   dropped), the view served, its changes kept for deltas, the fetch counts.
//! * `shared.rs` — `Regions`: what the tasks publish and the readers take, and its version.
//! * `fetcher.rs` — the HTTP requests to a region's server.
//! * `task.rs` — one task per region that owns its state, fetches, logs and sends events.
//! * `documents.rs` — the documents that include regions, built from the local document and
//!   the published views.
//!
//! Read-only by construction: nothing here writes through the store, so a region's instances
//! are never replicated, evicted, counted in self-preservation, kept on disk or pushed.
//!
//! This file only declares the modules and re-exports what the rest of the server uses.

pub(crate) mod documents;
mod fetcher;
mod region;
mod settings;
mod shared;
mod task;
mod view;

pub(crate) use self::fetcher::RegionClient;
pub(crate) use self::region::{FetchKind, Outcome, Phase};
pub(crate) use self::settings::{is_fetcher_agent, RegionsSettings};
pub(crate) use self::shared::Regions;
pub(crate) use self::task::{spawn_all, RegionFetchers};
