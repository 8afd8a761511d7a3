//! Spring Boot's way of reading configuration, for Rust programs that share a Spring
//! application's settings: `application.{properties,yml,yaml}` in `./`, `./config/` and
//! `./config/*/`, profile files and documents, `spring.config.location` and
//! `spring.config.additional-location`, environment variables in relaxed form, `--key=value`
//! arguments, `${placeholders}`, relaxed names, and value conversions (booleans, numbers,
//! durations, data sizes) as Spring reads them.
//!
//! Loading goes in two stages. [`load`] merges the sources into flat [`Properties`], highest
//! precedence last: files (`files.rs`, `formats.rs`), environment, command line
//! (`sources.rs`). A [`Binder`] then reads typed values from them, resolving placeholders
//! (`placeholders.rs`) and reporting a bad value with its key and source. What keys exist and
//! what their defaults are is the application's business: it passes a [`Schema`] naming the
//! keys to look up in the environment and the maps whose keys are kept as written. Its key
//! table can read each key through a value type of [`typed`] and check its own names with
//! [`names`]; [`table`] walks such a table and [`bindings`] are the kinds of entry it binds,
//! so every application binds through the same code.
//!
//! Nothing here knows Eureka or Heureka.

mod binder;
pub mod bindings;
mod error;
mod files;
mod formats;
mod load;
pub mod names;
mod placeholders;
mod schema;
mod sources;
pub mod table;
pub mod typed;
pub mod values;

#[cfg(test)]
mod tests;

pub use binder::{Binder, Defaults, Setting};
pub use error::ConfigError;
pub use load::{load, load_file, Sources};
pub use names::Names;
pub use placeholders::{PlaceholderError, Resolver};
pub use schema::Schema;
pub use sources::{parse_args, ArgumentError, Origin, Properties, Property};

/// Environment variable naming config files that replace the default locations.
pub const ENV_SPRING_CONFIG_LOCATION: &str = "SPRING_CONFIG_LOCATION";
/// Environment variable naming config files read on top of the default locations.
pub const ENV_SPRING_CONFIG_ADDITIONAL_LOCATION: &str = "SPRING_CONFIG_ADDITIONAL_LOCATION";
/// Environment variable listing the active profiles.
pub const ENV_SPRING_PROFILES_ACTIVE: &str = "SPRING_PROFILES_ACTIVE";
