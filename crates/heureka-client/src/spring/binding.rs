//! The shared binder's kinds of binding (`heureka_config::bindings`), typed for the client's
//! [`ClientConfig`] and [`Pending`], so that a table entry's closure knows what it writes into.
//! A map's placeholders are all resolved before any entry is read, so a bad placeholder
//! anywhere in the map is reported before a bad value.

use heureka_config::bindings::MapErrors;

use super::pending::Pending;
use crate::config::ClientConfig;

heureka_config::typed_bindings!(ClientConfig, Pending, MapErrors::PlaceholdersFirst);
