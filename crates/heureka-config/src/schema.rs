//! What an application tells the loader about its keys: the relaxed-name rules and the keys to
//! look up in the environment.

use crate::names::Names;

/// What an application tells the loader about its keys. Built once per application: the
/// environment variable names of every key are worked out here, not on every load.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    names: Names,
    pub(crate) env_keys: Vec<EnvKey>,
}

/// A key to look up in the environment, with its canonical form and the variable names that
/// map to it, most preferred first.
#[derive(Debug, Clone)]
pub(crate) struct EnvKey {
    pub(crate) name: String,
    pub(crate) canonical: String,
    pub(crate) vars: Vec<String>,
}

impl Schema {
    /// The relaxed-name rules `names` (with the application's map prefixes) and every key to
    /// look up in the environment, in Spring's kebab-case. Map entries that a file or the
    /// command line names are looked up too; `env_keys` are the others.
    pub fn new(names: Names, env_keys: impl IntoIterator<Item = String>) -> Schema {
        let mut schema = Schema {
            names,
            env_keys: Vec::new(),
        };
        schema.add_env_keys(env_keys);
        schema
    }

    /// The relaxed-name rules.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// Looks `keys` up in the environment too.
    pub fn add_env_keys(&mut self, keys: impl IntoIterator<Item = String>) {
        for name in keys {
            let canonical = self.names.canonical(&name);
            let vars = self.names.env_names(&name);
            self.env_keys.push(EnvKey {
                name,
                canonical,
                vars,
            });
        }
    }

    /// Whether `key` (in any relaxed spelling) is looked up in the environment.
    pub fn has_env_key(&self, key: &str) -> bool {
        let canonical = self.names.canonical(key);
        self.env_keys
            .iter()
            .any(|known| known.canonical == canonical)
    }
}
