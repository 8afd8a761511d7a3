//! The shared binder's kinds of binding (`heureka_config::bindings`), typed for the server's
//! [`Config`] and [`Pending`], so that a table entry's closure knows what it writes into.

use heureka_config::bindings::{self, Entries, Indexed, MapErrors, MapOf, Single};
use heureka_config::table;
use heureka_config::typed::Value;

use super::model::Config;
use super::rules::Pending;

/// The server's configuration being bound, beside the inputs of its rules.
pub(crate) type Draft = table::Draft<Config, Pending>;
/// A key of the server's table.
pub(crate) type Key = table::Key<Draft>;

/// A key whose value goes into a field of the configuration.
pub(crate) const fn field<V: Value>(
    value: V,
    set: fn(&mut Config, V::Out),
) -> Single<Config, Pending, Config, V> {
    bindings::field(value, set)
}

/// A key whose value goes into an input of a rule over several keys.
pub(crate) const fn part<V: Value>(
    value: V,
    set: fn(&mut Pending, V::Out),
) -> Single<Config, Pending, Pending, V> {
    bindings::part(value, set)
}

/// A map's entries, each resolved and read in turn, into a field of the configuration.
pub(crate) const fn map<V: Value>(
    value: V,
    set: fn(&mut Config, Entries<V::Out>),
) -> MapOf<Config, Pending, Config, V> {
    bindings::map(MapErrors::InTurn, value, set)
}

/// A map's entries, each resolved and read in turn, into an input of a rule.
pub(crate) const fn map_part<V: Value>(
    value: V,
    set: fn(&mut Pending, Entries<V::Out>),
) -> MapOf<Config, Pending, Pending, V> {
    bindings::map_part(MapErrors::InTurn, value, set)
}

/// One property of a list's entries, into an input of a rule.
pub(crate) const fn indexed<V: Value>(
    value: V,
    set: fn(&mut Pending, u32, V::Out),
) -> Indexed<Pending, V> {
    bindings::indexed(value, set)
}
