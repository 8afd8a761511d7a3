//! The kinds of binding a key-table entry can have, read through [`crate::typed`]'s value
//! types: one key, a map's entries, one property of a list's entries, each written into the
//! configuration or into an input of a rule over several keys. Each read takes a table entry,
//! not a name, so nothing can read a key the table lacks.

use std::collections::BTreeMap;

use crate::binder::{Binder, Setting};
use crate::error::ConfigError;
use crate::names::Shape;
use crate::sources::Origin;
use crate::table::{Bind, Binding, Draft, Key, Table};
use crate::typed::Value;

/// Where a binding writes: the configuration or the rules' inputs.
type Pick<C, P, T> = fn(&mut Draft<C, P>) -> &mut T;

fn config_of<C, P>(draft: &mut Draft<C, P>) -> &mut C {
    &mut draft.config
}

fn pending_of<C, P>(draft: &mut Draft<C, P>) -> &mut P {
    &mut draft.pending
}

/// The setting as written, with where it came from: for rules whose errors name the source.
pub struct AsWritten;

impl Value for AsWritten {
    type Out = Setting;
    fn read(&self, _key: &str, setting: Setting) -> Result<Setting, ConfigError> {
        Ok(setting)
    }
}

/// A key as a source set it, placeholders resolved, with the name it was read under; `None`
/// when no source sets it (its default is not a value that was set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The table's name of the key.
    pub key: String,
    /// Its value and where it was written.
    pub setting: Setting,
}

/// Reads a key as [`Written`], for rules that tell a key set (even blank) from one left out.
pub struct IfSet;

impl Value for IfSet {
    type Out = Option<Written>;
    fn read(&self, key: &str, setting: Setting) -> Result<Option<Written>, ConfigError> {
        Ok((setting.origin != Origin::Default).then(|| Written {
            key: key.to_owned(),
            setting,
        }))
    }
}

/// One key, read as `V` and written into `T` by `set`.
pub struct Single<C, P, T, V: Value> {
    value: V,
    set: fn(&mut T, V::Out),
    pick: Pick<C, P, T>,
}

/// A key whose value goes into a field of the configuration.
pub const fn field<C, P, V: Value>(value: V, set: fn(&mut C, V::Out)) -> Single<C, P, C, V> {
    Single {
        value,
        set,
        pick: config_of,
    }
}

/// A key whose value goes into an input of a rule over several keys.
pub const fn part<C, P, V: Value>(value: V, set: fn(&mut P, V::Out)) -> Single<C, P, P, V> {
    Single {
        value,
        set,
        pick: pending_of,
    }
}

impl<C: 'static, P: 'static, T, V: Value> Bind<Draft<C, P>> for Single<C, P, T, V> {
    fn bind(
        &self,
        key: &Key<Draft<C, P>>,
        table: &Table<Draft<C, P>>,
        binder: &Binder<'_>,
        draft: &mut Draft<C, P>,
    ) -> Result<(), ConfigError> {
        let name = name_to_read(table, binder, key);
        let value = self.value.read(name, binder.setting(name)?)?;
        (self.set)((self.pick)(draft), value);
        Ok(())
    }

    fn shape(&self) -> Shape {
        Shape::Single
    }
}

/// The name a single key is read under: its own when it is set, else the first older name of
/// it that is set (Spring Boot 3 renamed some keys; the old names still work), else its own,
/// which gives its default.
fn name_to_read<D>(table: &Table<D>, binder: &Binder<'_>, key: &Key<D>) -> &'static str {
    let is_set = |name: &str| binder.properties().get(name).is_some();
    if is_set(key.name) {
        return key.name;
    }
    table
        .keys()
        .iter()
        .filter(|older| matches!(older.binding, Binding::OlderNameOf(of) if of == key.name))
        .map(|older| older.name)
        .find(|older| is_set(older))
        .unwrap_or(key.name)
}

/// A map's entries as read: `(map key, value)`.
pub type Entries<T> = Vec<(String, T)>;

/// The map's entries that list something (an empty value unsets an entry).
pub fn non_empty(entries: Entries<Vec<String>>) -> BTreeMap<String, Vec<String>> {
    entries
        .into_iter()
        .filter(|(_, list)| !list.is_empty())
        .collect()
}

/// The map's entries that list something, or `default` (one entry of one item) when none does.
pub fn non_empty_or(
    entries: Entries<Vec<String>>,
    (key, item): (&str, &str),
) -> BTreeMap<String, Vec<String>> {
    let mut map = non_empty(entries);
    if map.is_empty() {
        map.insert(key.to_owned(), vec![item.to_owned()]);
    }
    map
}

/// When a map's bad entries are reported.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum MapErrors {
    /// Each entry resolved and read in turn: the first bad entry, whatever is wrong with it.
    InTurn,
    /// Every entry's placeholders resolved before any is read: a bad placeholder anywhere in
    /// the map is reported before a bad value.
    PlaceholdersFirst,
}

/// A map's entries (`prefix.<map key>`), each read as `V`, written in map-key order by `set`.
pub struct MapOf<C, P, T, V: Value> {
    value: V,
    set: fn(&mut T, Entries<V::Out>),
    pick: Pick<C, P, T>,
    errors: MapErrors,
}

/// A map whose entries go into a field of the configuration.
pub const fn map<C, P, V: Value>(
    errors: MapErrors,
    value: V,
    set: fn(&mut C, Entries<V::Out>),
) -> MapOf<C, P, C, V> {
    MapOf {
        value,
        set,
        pick: config_of,
        errors,
    }
}

/// A map whose entries go into an input of a rule over several keys.
pub const fn map_part<C, P, V: Value>(
    errors: MapErrors,
    value: V,
    set: fn(&mut P, Entries<V::Out>),
) -> MapOf<C, P, P, V> {
    MapOf {
        value,
        set,
        pick: pending_of,
        errors,
    }
}

impl<C: 'static, P: 'static, T, V: Value> Bind<Draft<C, P>> for MapOf<C, P, T, V> {
    fn bind(
        &self,
        key: &Key<Draft<C, P>>,
        _table: &Table<Draft<C, P>>,
        binder: &Binder<'_>,
        draft: &mut Draft<C, P>,
    ) -> Result<(), ConfigError> {
        let prefix = key.map_prefix();
        let read = |map_key: String, setting: Setting| {
            let name = format!("{prefix}.{map_key}");
            Ok::<_, ConfigError>((map_key, self.value.read(&name, setting)?))
        };
        let entries = match self.errors {
            MapErrors::PlaceholdersFirst => binder
                .map(prefix)?
                .into_iter()
                .map(|(map_key, setting)| read(map_key, setting))
                .collect::<Result<Vec<_>, _>>()?,
            MapErrors::InTurn => binder
                .properties()
                .map_entries(prefix)
                .map(|(map_key, property)| {
                    let name = format!("{prefix}.{map_key}");
                    let setting = binder.resolve(&name, &property.value, &property.origin)?;
                    read(map_key.to_owned(), setting)
                })
                .collect::<Result<Vec<_>, _>>()?,
        };
        (self.set)((self.pick)(draft), entries);
        Ok(())
    }

    fn shape(&self) -> Shape {
        Shape::Map
    }
}

/// One property of a list's entries (`list[<n>].property`), each read as `V` and written with
/// its index by `set` into an input of a rule; entries whose index is not a number are left
/// to the application's typo check.
pub struct Indexed<P, V: Value> {
    value: V,
    set: fn(&mut P, u32, V::Out),
}

/// A list property whose entries go into an input of a rule over several keys.
pub const fn indexed<P, V: Value>(value: V, set: fn(&mut P, u32, V::Out)) -> Indexed<P, V> {
    Indexed { value, set }
}

impl<C: 'static, P: 'static, V: Value> Bind<Draft<C, P>> for Indexed<P, V> {
    fn bind(
        &self,
        key: &Key<Draft<C, P>>,
        table: &Table<Draft<C, P>>,
        binder: &Binder<'_>,
        draft: &mut Draft<C, P>,
    ) -> Result<(), ConfigError> {
        let (list, property) = key.list_property();
        let start = format!("{}[", table.canonical(list));
        let property_canonical = table.canonical(property);
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

/// The kinds of binding typed for one application: `Draft` and `Key` for its configuration
/// type and its rules' inputs, and `field`, `part`, `map`, `map_part` and `indexed` whose
/// closures know what they write into (a generic constructor leaves a closure's argument
/// types unknown where a table entry is written). `$errors` says when a map's bad entries are
/// reported ([`MapErrors`]).
#[macro_export]
macro_rules! typed_bindings {
    ($config:ty, $pending:ty, $errors:expr) => {
        /// The configuration being bound, beside the inputs of its rules.
        pub(crate) type Draft = $crate::table::Draft<$config, $pending>;
        /// A key of the table.
        pub(crate) type Key = $crate::table::Key<Draft>;

        /// A key whose value goes into a field of the configuration.
        pub(crate) const fn field<V: $crate::typed::Value>(
            value: V,
            set: fn(&mut $config, V::Out),
        ) -> $crate::bindings::Single<$config, $pending, $config, V> {
            $crate::bindings::field(value, set)
        }

        /// A key whose value goes into an input of a rule over several keys.
        pub(crate) const fn part<V: $crate::typed::Value>(
            value: V,
            set: fn(&mut $pending, V::Out),
        ) -> $crate::bindings::Single<$config, $pending, $pending, V> {
            $crate::bindings::part(value, set)
        }

        /// A map's entries into a field of the configuration.
        pub(crate) const fn map<V: $crate::typed::Value>(
            value: V,
            set: fn(&mut $config, $crate::bindings::Entries<V::Out>),
        ) -> $crate::bindings::MapOf<$config, $pending, $config, V> {
            $crate::bindings::map($errors, value, set)
        }

        /// A map's entries into an input of a rule.
        pub(crate) const fn map_part<V: $crate::typed::Value>(
            value: V,
            set: fn(&mut $pending, $crate::bindings::Entries<V::Out>),
        ) -> $crate::bindings::MapOf<$config, $pending, $pending, V> {
            $crate::bindings::map_part($errors, value, set)
        }

        /// One property of a list's entries into an input of a rule.
        #[allow(dead_code)] // a table without lists has no use for it
        pub(crate) const fn indexed<V: $crate::typed::Value>(
            value: V,
            set: fn(&mut $pending, u32, V::Out),
        ) -> $crate::bindings::Indexed<$pending, V> {
            $crate::bindings::indexed(value, set)
        }
    };
}
