//! How a key-table entry is read and where its value goes: the kinds of binding an entry can
//! have (one key, a map's entries, a list's entries), read through `heureka_config::typed`'s
//! value types. Each read takes a table entry, not a name, so nothing can read a key the table
//! lacks.

use std::marker::PhantomData;

use heureka_config::names::Shape;
use heureka_config::typed::Value;
use heureka_config::{Binder, ConfigError, Setting};

use super::bind::Draft;
use super::keys::{Binding, Key, KEYS};
use super::names::canonical;
use super::rules::Pending;
use super::Config;

/// What a table entry's binding does: read its key and write the value where it goes.
pub(crate) trait Bind: Sync {
    /// Reads `key` from `binder` into `draft`; a bad value is an error naming key and source.
    fn bind(&self, key: &Key, binder: &Binder<'_>, draft: &mut Draft) -> Result<(), ConfigError>;

    /// The shape of name this binding reads, which its entry's name must have.
    fn shape(&self) -> Shape;
}

/// The setting as written, with where it came from: for rules whose errors name the source.
pub(crate) struct AsWritten;

impl Value for AsWritten {
    type Out = Setting;
    fn read(&self, _key: &str, setting: Setting) -> Result<Setting, ConfigError> {
        Ok(setting)
    }
}

/// Where a single key's value is written: a field of the [`Config`], or an input of a rule
/// over several keys ([`Pending`]).
pub(crate) trait Target {
    fn of(draft: &mut Draft) -> &mut Self;
}

impl Target for Config {
    fn of(draft: &mut Draft) -> &mut Config {
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
pub(crate) const fn field<V: Value>(value: V, set: fn(&mut Config, V::Out)) -> Single<Config, V> {
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
        let name = name_to_read(binder, key);
        let value = self.value.read(name, binder.setting(name)?)?;
        (self.set)(T::of(draft), value);
        Ok(())
    }

    fn shape(&self) -> Shape {
        Shape::Single
    }
}

/// The name a single key is read under: its own when it is set, else the first older name of
/// it that is set (Spring Boot 3 renamed some keys; the old names still work), else its own,
/// which gives its default.
fn name_to_read(binder: &Binder<'_>, key: &Key) -> &'static str {
    let is_set = |name: &str| binder.properties().get(name).is_some();
    if is_set(key.name) {
        return key.name;
    }
    KEYS.iter()
        .filter(|older| matches!(older.binding, Binding::OlderNameOf(of) if of == key.name))
        .map(|older| older.name)
        .find(|older| is_set(older))
        .unwrap_or(key.name)
}

/// A map's entries (`prefix.<map key>`), each read as `V`, written in map-key order by `set`.
pub(crate) struct MapOf<V: Value> {
    value: V,
    set: fn(&mut Config, Entries<V::Out>),
}

/// A map's entries as read: `(map key, value)`.
pub(crate) type Entries<T> = Vec<(String, T)>;

pub(crate) const fn map<V: Value>(value: V, set: fn(&mut Config, Entries<V::Out>)) -> MapOf<V> {
    MapOf { value, set }
}

impl<V: Value> Bind for MapOf<V> {
    fn bind(&self, key: &Key, binder: &Binder<'_>, draft: &mut Draft) -> Result<(), ConfigError> {
        let prefix = key.map_prefix();
        let mut entries = Vec::new();
        for (map_key, property) in binder.properties().map_entries(prefix) {
            let name = format!("{prefix}.{map_key}");
            let setting = binder.resolve(&name, &property.value, &property.origin)?;
            entries.push((map_key.to_owned(), self.value.read(&name, setting)?));
        }
        (self.set)(&mut draft.config, entries);
        Ok(())
    }

    fn shape(&self) -> Shape {
        Shape::Map
    }
}

/// One property of a list's entries (`list[<n>].property`), each read as `V` and written with
/// its index by `set`; entries whose index is not a number are left to the typo check.
pub(crate) struct Indexed<V: Value> {
    value: V,
    set: fn(&mut Pending, u32, V::Out),
}

pub(crate) const fn indexed<V: Value>(value: V, set: fn(&mut Pending, u32, V::Out)) -> Indexed<V> {
    Indexed { value, set }
}

impl<V: Value> Bind for Indexed<V> {
    fn bind(&self, key: &Key, binder: &Binder<'_>, draft: &mut Draft) -> Result<(), ConfigError> {
        let (list, property) = key.list_property();
        let start = format!("{}[", canonical(list));
        let property_canonical = canonical(property);
        for (name, found) in binder.properties().iter() {
            let Some((index, rest)) = name
                .strip_prefix(start.as_str())
                .and_then(|rest| rest.split_once("]."))
            else {
                continue;
            };
            let Ok(index) = index.parse::<u32>() else {
                continue;
            };
            if rest != property_canonical {
                continue;
            }
            let name = format!("{list}[{index}].{property}");
            let setting = binder.resolve(&name, &found.value, &found.origin)?;
            (self.set)(&mut draft.pending, index, self.value.read(&name, setting)?);
        }
        Ok(())
    }

    fn shape(&self) -> Shape {
        Shape::Indexed
    }
}

/// Keys read by a rule over many keys of one family (`ssl.rs`): the binding keeps each that is
/// set, by the name it was written under, placeholders resolved, and leaves the reading to the
/// rule. A single key is kept under the table's name; a map's entries under `prefix.<entry>`.
pub(crate) struct Collect(Shape);

/// One key, kept for a rule.
pub(crate) const COLLECT_ONE: Collect = Collect(Shape::Single);
/// A map's entries, kept for a rule.
pub(crate) const COLLECT_MAP: Collect = Collect(Shape::Map);

impl Bind for Collect {
    fn bind(&self, key: &Key, binder: &Binder<'_>, draft: &mut Draft) -> Result<(), ConfigError> {
        if self.0 == Shape::Map {
            let prefix = key.map_prefix();
            for (map_key, property) in binder.properties().map_entries(prefix) {
                let name = format!("{prefix}.{map_key}");
                let setting = binder.resolve(&name, &property.value, &property.origin)?;
                draft.pending.collected.insert(name, setting);
            }
        } else if binder.properties().get(key.name).is_some() {
            let setting = binder.setting(key.name)?;
            draft.pending.collected.insert(key.name.to_owned(), setting);
        }
        Ok(())
    }

    fn shape(&self) -> Shape {
        self.0
    }
}
