//! A key table: every key an application reads or accepts, each entry its name, default,
//! `--help` line and binding, and the one walk that binds merged properties through it.
//!
//! An application's configuration type `C` is filled in a [`Draft`], beside `P`, the inputs
//! of its rules over several keys. The table is generic over the draft, so the server and the
//! client bind through the same code; what differs is their table, their value types and
//! their rules. The kinds of binding an entry may have are in `bindings.rs`.

use std::collections::HashMap;

use crate::binder::{Binder, Defaults};
use crate::error::ConfigError;
use crate::names::{self, Names, Shape};
use crate::placeholders::Resolver;
use crate::sources::Properties;

/// The configuration being bound, and the inputs of the rules over several keys.
pub struct Draft<C, P> {
    /// The configuration, every field written by its key's binding or by a rule.
    pub config: C,
    /// What the rules over several keys read once the walk is done.
    pub pending: P,
}

/// What a table entry's binding does: read its key and write the value where it goes.
pub trait Bind<D: 'static>: Sync {
    /// Reads `key` from `binder` into `draft`; a bad value is an error naming key and source.
    fn bind(
        &self,
        key: &Key<D>,
        table: &Table<D>,
        binder: &Binder<'_>,
        draft: &mut D,
    ) -> Result<(), ConfigError>;

    /// The shape of name this binding reads, which its entry's name must have.
    fn shape(&self) -> Shape;
}

/// One key an application reads or accepts.
pub struct Key<D: 'static> {
    /// The Spring spelling (kebab-case). `.<zone>` / `.<target>` last mark a map's entries,
    /// `[<n>]` a list's.
    pub name: &'static str,
    /// The default as text; empty means "unset".
    pub default: &'static str,
    /// One line for `--help` (empty where the application prints none).
    pub about: &'static str,
    /// What the binder does with it.
    pub binding: Binding<D>,
}

/// What the binder does with a key.
pub enum Binding<D: 'static> {
    /// Reads it and writes it where it goes.
    Bound(&'static dyn Bind<D>),
    /// Like [`Binding::Bound`], but in a first walk, before every other entry: settings that
    /// the defaults of later keys depend on.
    First(&'static dyn Bind<D>),
    /// Nothing: the loader reads it first, to choose the files to read.
    Loader,
    /// Nothing: Spring has it, the application's behaviour does not depend on it. Accepted so
    /// that existing files load; its `--help` line says "inert".
    Inert,
    /// Reads it in place of the named key when that one is not set: an older name of it.
    OlderNameOf(&'static str),
    /// Read by a rule through its named entry, and only when the rule needs it.
    ByRule,
    /// Read only as a `${placeholder}`.
    Placeholder,
    /// Setting it is a start-up error (or every key under it, for a `.<key>` name): Spring has
    /// it, and silently not honouring it would leave the application weaker than its operator
    /// believes.
    Refused(Refusal),
}

// By hand: a derive would ask `D: Copy`, and `D` is only named, never held.
impl<D> Clone for Binding<D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<D> Copy for Binding<D> {}

/// Which entries a walk over the table binds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// The [`Binding::First`] entries.
    First,
    /// The [`Binding::Bound`] entries.
    Bound,
}

/// Why a refused key cannot be honoured.
#[derive(Clone, Copy)]
pub enum Refusal {
    /// Whatever it is set to.
    Always(&'static str),
    /// When the check, given each key's value as set (trimmed) or else its default, says so.
    When(fn(Lookup<'_>) -> Option<&'static str>),
}

/// A key's value as set (trimmed), else its default; `None` when it has neither.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

impl<D> Key<D> {
    /// An entry.
    pub const fn new(
        name: &'static str,
        default: &'static str,
        about: &'static str,
        binding: Binding<D>,
    ) -> Key<D> {
        Key {
            name,
            default,
            about,
            binding,
        }
    }

    /// `logging.level` for `logging.level.<target>`: the map a map entry's key belongs to.
    pub fn map_prefix(&self) -> &'static str {
        names::map_prefix(self.name)
    }

    /// `("heureka.webhooks", "url")` for `heureka.webhooks[<n>].url`.
    pub fn list_property(&self) -> (&'static str, &'static str) {
        self.name.split_once("[<n>].").unwrap_or((self.name, ""))
    }

    /// What the binder reads for it: one key, a map's entries or a list's.
    pub fn reads(&self) -> Shape {
        match self.binding {
            Binding::Bound(binding) | Binding::First(binding) => binding.shape(),
            Binding::Refused(_) => names::shape_of(self.name).unwrap_or(Shape::Single),
            _ => Shape::Single,
        }
    }

    /// Whether setting it is an error.
    pub fn is_refused(&self) -> bool {
        matches!(self.binding, Binding::Refused(_))
    }
}

/// A key table and its lookups by relaxed name, worked out once: a load looks keys up a few
/// hundred times, and canonicalising the whole table each time dominated its cost.
pub struct Table<D: 'static> {
    keys: &'static [Key<D>],
    names: Names,
    canonical: Vec<(String, &'static Key<D>)>,
    by_canonical: HashMap<String, usize>,
    spelled: HashMap<&'static str, usize>,
}

impl<D> Table<D> {
    /// The table of `keys`. Its maps (`logging.level.<target>`…) keep their map keys as
    /// written (`defaultZone`, `com.example`).
    pub fn new(keys: &'static [Key<D>]) -> Table<D> {
        let map_prefixes: Vec<&str> = keys
            .iter()
            .filter(|key| !key.is_refused() && key.reads() == Shape::Map)
            .map(Key::map_prefix)
            .collect();
        let names = Names::new(&map_prefixes);
        let canonical: Vec<(String, &'static Key<D>)> = keys
            .iter()
            .filter(|key| !key.is_refused())
            .map(|key| (names.canonical(key.name), key))
            .collect();
        let by_canonical = canonical
            .iter()
            .enumerate()
            .map(|(at, (name, _))| (name.clone(), at))
            .collect();
        let spelled = canonical
            .iter()
            .enumerate()
            .map(|(at, (_, key))| (key.name, at))
            .collect();
        Table {
            keys,
            names,
            canonical,
            by_canonical,
            spelled,
        }
    }

    /// Every entry, in table order.
    pub fn keys(&self) -> &'static [Key<D>] {
        self.keys
    }

    /// The relaxed-name rules.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// Spring's canonical form of `name` under these rules.
    pub fn canonical(&self, name: &str) -> String {
        self.names.canonical(name)
    }

    /// The entries that are not refused, in canonical form, in table order.
    pub fn canonical_keys(&self) -> &[(String, &'static Key<D>)] {
        &self.canonical
    }

    /// The entry for `name` in any relaxed spelling; refused keys are not entries to find.
    pub fn find(&self, name: &str) -> Option<&'static Key<D>> {
        let at = match self.spelled.get(name) {
            Some(at) => *at,
            None => *self.by_canonical.get(&self.canonical(name))?,
        };
        Some(self.canonical[at].1)
    }

    /// The default of `name`, or "" when it has none or is not in the table.
    pub fn default_of(&self, name: &str) -> &'static str {
        self.find(name).map_or("", |key| key.default)
    }

    /// The keys to look up in the environment: every single key or list property the table
    /// reads or accepts (map entries are looked up when a source names them).
    pub fn env_keys(&self) -> impl Iterator<Item = String> + '_ {
        self.keys
            .iter()
            .filter(|key| !key.is_refused() && !key.name.contains('<'))
            .map(|key| key.name.to_owned())
    }

    /// A binder over `properties` that gives each key the table's default; `fallback` is the
    /// value of a `${placeholder}` no source sets.
    pub fn binder<'a>(
        &'a self,
        properties: &'a Properties,
        env: &'a dyn Fn(&str) -> Option<String>,
        fallback: &'a dyn Fn(&str) -> Option<String>,
    ) -> Binder<'a> {
        let resolver = Resolver {
            properties,
            env,
            fallback,
        };
        Binder::new(resolver, self)
    }

    /// The table's default of `key` when it is not empty: what a `${placeholder}` of a key no
    /// source sets stands for.
    pub fn placeholder_default(&self, key: &str) -> Option<String> {
        Some(self.default_of(key).to_owned()).filter(|default| !default.is_empty())
    }

    /// Binds, in table order, the entries of `pass`.
    pub fn walk(&self, binder: &Binder<'_>, draft: &mut D, pass: Pass) -> Result<(), ConfigError> {
        for key in self.keys {
            let binding = match (pass, key.binding) {
                (Pass::First, Binding::First(binding)) | (Pass::Bound, Binding::Bound(binding)) => {
                    binding
                }
                _ => continue,
            };
            binding.bind(key, self, binder, draft)?;
        }
        Ok(())
    }

    /// The first refused key that is set, as an error naming it, its source and the reason.
    pub fn reject_refused(&self, properties: &Properties) -> Result<(), ConfigError> {
        for (name, property) in properties.iter() {
            if let Some(why) = self.refusal(name, properties) {
                return Err(ConfigError::new(format!(
                    "{} ({}) is not supported: {why}",
                    property.name, property.origin
                )));
            }
        }
        Ok(())
    }

    /// Why the key `canonical_name` is refused, if it is.
    fn refusal(&self, canonical_name: &str, properties: &Properties) -> Option<&'static str> {
        self.keys.iter().find_map(|key| {
            let Binding::Refused(refusal) = key.binding else {
                return None;
            };
            let matches = if key.reads() == Shape::Map {
                let prefix = self.canonical(key.map_prefix());
                canonical_name == prefix || canonical_name.starts_with(&format!("{prefix}."))
            } else {
                canonical_name == self.canonical(key.name)
            };
            if !matches {
                return None;
            }
            match refusal {
                Refusal::Always(why) => Some(why),
                Refusal::When(check) => check(&|name: &str| {
                    properties
                        .get(name)
                        .map(|property| property.value.trim().to_owned())
                        .or_else(|| {
                            Some(self.default_of(name).to_owned()).filter(|d| !d.is_empty())
                        })
                }),
            }
        })
    }
}

impl<D> Defaults for Table<D> {
    fn default_text(&self, key: &str) -> String {
        self.default_of(key).to_owned()
    }
}
