//! How a key-table entry is read and where its value goes: one key or a map's entries, read
//! through a value type of `heureka_config::typed` and written into the [`ClientConfig`] or
//! into an input of a rule over several keys. Each read takes a table entry, not a name, so nothing here can read a key the
//! table lacks.

use std::marker::PhantomData;

use heureka_config::names::Shape;
use heureka_config::typed::Value;
use heureka_config::{Binder, ConfigError};

use super::keys::Key;
use super::rules::Pending;
use crate::config::ClientConfig;

/// The configuration being bound, and the inputs of the rules over several keys.
pub(crate) struct Draft {
    pub(crate) config: ClientConfig,
    pub(crate) pending: Pending,
}

/// What a table entry's binding does: read its key and write the value where it goes.
pub(crate) trait Bind: Sync {
    /// Reads `key` from `binder` into `draft`; a bad value is an error naming key and source.
    fn bind(&self, key: &Key, binder: &Binder<'_>, draft: &mut Draft) -> Result<(), ConfigError>;

    /// The shape of name this binding reads, which its entry's name must have.
    fn shape(&self) -> Shape;
}

/// Where a value is written: a field of the [`ClientConfig`], or an input of a rule over
/// several keys ([`Pending`]).
pub(crate) trait Target {
    fn of(draft: &mut Draft) -> &mut Self;
}

impl Target for ClientConfig {
    fn of(draft: &mut Draft) -> &mut ClientConfig {
        &mut draft.config
    }
}

impl Target for Pending {
    fn of(draft: &mut Draft) -> &mut Pending {
        &mut draft.pending
    }
}

/// One key, read as `V` and written into `T` by `set`.
pub(crate) struct Single<T, V: Value> {
    value: V,
    set: fn(&mut T, V::Out),
    // `fn` keeps the binding `Sync` whatever `T` is; nothing of type `T` is stored.
    target: PhantomData<fn(&mut T)>,
}

/// A key whose value goes into a field of the configuration.
pub(crate) const fn field<V: Value>(
    value: V,
    set: fn(&mut ClientConfig, V::Out),
) -> Single<ClientConfig, V> {
    Single {
        value,
        set,
        target: PhantomData,
    }
}

/// A key whose value goes into an input of a rule over several keys.
pub(crate) const fn part<V: Value>(value: V, set: fn(&mut Pending, V::Out)) -> Single<Pending, V> {
    Single {
        value,
        set,
        target: PhantomData,
    }
}

impl<T: Target, V: Value> Bind for Single<T, V> {
    fn bind(&self, key: &Key, binder: &Binder<'_>, draft: &mut Draft) -> Result<(), ConfigError> {
        let value = self.value.read(key.name, binder.setting(key.name)?)?;
        (self.set)(T::of(draft), value);
        Ok(())
    }

    fn shape(&self) -> Shape {
        Shape::Single
    }
}

/// A map's entries (`prefix.<map key>`), each read as `V`, written in map-key order by `set`.
pub(crate) struct MapOf<T, V: Value> {
    value: V,
    set: fn(&mut T, Entries<V::Out>),
    target: PhantomData<fn(&mut T)>,
}

/// A map's entries as read: `(map key, value)`.
pub(crate) type Entries<T> = Vec<(String, T)>;

/// A map whose entries go into a field of the configuration.
pub(crate) const fn map<V: Value>(
    value: V,
    set: fn(&mut ClientConfig, Entries<V::Out>),
) -> MapOf<ClientConfig, V> {
    MapOf {
        value,
        set,
        target: PhantomData,
    }
}

/// A map whose entries go into an input of a rule over several keys.
pub(crate) const fn map_part<V: Value>(
    value: V,
    set: fn(&mut Pending, Entries<V::Out>),
) -> MapOf<Pending, V> {
    MapOf {
        value,
        set,
        target: PhantomData,
    }
}

impl<T: Target, V: Value> Bind for MapOf<T, V> {
    fn bind(&self, key: &Key, binder: &Binder<'_>, draft: &mut Draft) -> Result<(), ConfigError> {
        let prefix = key.map_prefix();
        // Every entry resolved first, then each read: a bad placeholder anywhere in the map is
        // reported before a bad value.
        let mut entries = Vec::new();
        for (map_key, setting) in binder.map(prefix)? {
            let name = format!("{prefix}.{map_key}");
            entries.push((map_key, self.value.read(&name, setting)?));
        }
        (self.set)(T::of(draft), entries);
        Ok(())
    }

    fn shape(&self) -> Shape {
        Shape::Map
    }
}
