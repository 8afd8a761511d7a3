//! The shared binder's kinds of binding (`heureka_config::bindings`), typed for the client's
//! [`ClientConfig`] and [`Pending`], so that a table entry's closure knows what it writes into.
//! A map's placeholders are all resolved before any entry is read, so a bad placeholder
//! anywhere in the map is reported before a bad value.

use heureka_config::bindings::{self, Entries, MapErrors, MapOf, Single};
use heureka_config::table;
use heureka_config::typed::Value;

use super::pending::Pending;
use crate::config::ClientConfig;

/// The client's configuration being bound, beside the inputs of its rules.
pub(crate) type Draft = table::Draft<ClientConfig, Pending>;
/// A key of the client's table.
pub(crate) type Key = table::Key<Draft>;

/// A key whose value goes into a field of the configuration.
pub(crate) const fn field<V: Value>(
    value: V,
    set: fn(&mut ClientConfig, V::Out),
) -> Single<ClientConfig, Pending, ClientConfig, V> {
    bindings::field(value, set)
}

/// A key whose value goes into an input of a rule over several keys.
pub(crate) const fn part<V: Value>(
    value: V,
    set: fn(&mut Pending, V::Out),
) -> Single<ClientConfig, Pending, Pending, V> {
    bindings::part(value, set)
}

/// A map whose entries go into a field of the configuration.
pub(crate) const fn map<V: Value>(
    value: V,
    set: fn(&mut ClientConfig, Entries<V::Out>),
) -> MapOf<ClientConfig, Pending, ClientConfig, V> {
    bindings::map(MapErrors::PlaceholdersFirst, value, set)
}

/// A map whose entries go into an input of a rule over several keys.
pub(crate) const fn map_part<V: Value>(
    value: V,
    set: fn(&mut Pending, Entries<V::Out>),
) -> MapOf<ClientConfig, Pending, Pending, V> {
    bindings::map_part(MapErrors::PlaceholdersFirst, value, set)
}
