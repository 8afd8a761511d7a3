//! Configuration of the `heureka` binary, read exactly the way Spring Boot reads a
//! `spring-cloud-netflix-eureka-server`'s, so users keep their `application.yml`.
//!
//! Loading goes in two stages (design §4.11, `load.rs`). First `heureka_config::load` merges
//! the sources into flat properties the way Spring Boot does (files, environment,
//! `--key=value` arguments), told by `names::schema` which keys to look up in the environment.
//! Then `bind` walks the key table (`keys.rs`) with heureka-config's table binder and turns
//! the properties into the typed, validated [`Config`] (`model.rs`), resolving
//! `${placeholders}` and reporting any bad value with its key and source. Each table entry is
//! one key: its name, default, `--help` line (`help.rs`) and binding, the value type it is
//! read as (`values.rs`) and the field it sets (`binding.rs` types the shared bindings for
//! the server), or its refusal (`refused.rs` holds the one that depends on another key);
//! rules over several keys run last (`rules.rs`, and `ssl.rs` for the TLS keys, whose types
//! are in `ssl_types.rs`). `names.rs` is the table with its lookups by relaxed name;
//! `unknown.rs` is the typo check on `eureka.server.*`, `heureka.*` and the TLS keys. This
//! file only declares and re-exports, so no child takes a name back from it.

pub(crate) mod address;
mod bind;
mod binding;
mod help;
mod keys;
mod load;
mod model;
mod names;
mod refused;
mod rules;
mod ssl;
mod ssl_types;
mod unknown;
mod values;

#[cfg(test)]
mod tests;

pub use self::address::AddressRange;
pub use self::load::load;
pub use self::model::*;
pub use self::ssl_types::{
    ClientAuth, ClientTlsConfig, KeySource, Named, Secret, SslConfig, StoreConfig, TrustSource,
};
pub use heureka_config::{
    ConfigError, ENV_SPRING_CONFIG_ADDITIONAL_LOCATION, ENV_SPRING_CONFIG_LOCATION,
    ENV_SPRING_PROFILES_ACTIVE,
};
