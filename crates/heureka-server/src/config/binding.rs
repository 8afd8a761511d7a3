//! The shared binder's kinds of binding (`heureka_config::bindings`), typed for the server's
//! [`Config`] and [`Pending`], so that a table entry's closure knows what it writes into. A
//! map's entries are each resolved and read in turn.

use heureka_config::bindings::MapErrors;

use super::model::Config;
use super::rules::Pending;

heureka_config::typed_bindings!(Config, Pending, MapErrors::InTurn);
