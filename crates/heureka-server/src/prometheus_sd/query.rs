//! What a Prometheus HTTP SD request asks for: `?app=` (repeatable, any case),
//! `?metadata.<key>=<value>` (every one must match) and `?scrape=true` (only instances whose
//! metadata `prometheus.io/scrape` is `true`). Pure: read from the query's pairs, and the
//! canonical form the answer cache and the ETag key on.
//!
//! A parameter it does not know is refused rather than ignored: a typo (`apps=`) would
//! otherwise widen the answer to every instance of the registry, silently.

use std::borrow::Cow;

use heureka_core::Instance;

/// The metadata key of the prometheus.io convention that `?scrape=true` filters on.
pub(crate) const SCRAPE_KEY: &str = "prometheus.io/scrape";

/// Parameters one request may carry: the filters of a scrape configuration are a handful.
const MAX_PARAMETERS: usize = 64;
/// Longest parameter name or value, in bytes (an app name is at most a few hundred).
const MAX_LENGTH: usize = 1024;

/// A parsed query, in canonical order: two queries asking the same are equal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SdQuery {
    /// Upper-cased as Eureka names applications, sorted, without repeats; empty for all.
    apps: Vec<String>,
    /// Metadata key and the value it must have, sorted, without repeats.
    metadata: Vec<(String, String)>,
    /// Only instances that ask to be scraped.
    scrape: bool,
}

impl SdQuery {
    /// Reads the query's (percent-decoded) pairs; the error is the 400's one-line reason.
    pub(crate) fn parse<'a>(
        pairs: impl IntoIterator<Item = (Cow<'a, str>, Cow<'a, str>)>,
    ) -> Result<SdQuery, String> {
        let mut query = SdQuery::default();
        for (n, (name, value)) in pairs.into_iter().enumerate() {
            if n == MAX_PARAMETERS {
                return Err(format!("more than {MAX_PARAMETERS} query parameters"));
            }
            if name.len() > MAX_LENGTH || value.len() > MAX_LENGTH {
                return Err(format!("a query parameter longer than {MAX_LENGTH} bytes"));
            }
            query.take(&name, &value)?;
        }
        query.apps.sort_unstable();
        query.apps.dedup();
        query.metadata.sort_unstable();
        query.metadata.dedup();
        Ok(query)
    }

    fn take(&mut self, name: &str, value: &str) -> Result<(), String> {
        if name == "app" {
            self.apps.push(value.to_uppercase());
        } else if name == "scrape" {
            self.scrape = match value {
                "true" => true,
                "false" => self.scrape,
                _ => return Err(format!("scrape '{value}' is neither true nor false")),
            };
        } else if let Some(key) = name.strip_prefix("metadata.").filter(|k| !k.is_empty()) {
            self.metadata.push((key.to_owned(), value.to_owned()));
        } else {
            return Err(format!(
                "unknown query parameter '{name}' (app, metadata.<key>, scrape)"
            ));
        }
        Ok(())
    }

    /// Whether application `name` (as the registry spells it, upper case) is asked for.
    pub(crate) fn selects_app(&self, name: &str) -> bool {
        self.apps.is_empty()
            || self
                .apps
                .binary_search_by(|app| app.as_str().cmp(name))
                .is_ok()
    }

    /// Whether `instance` passes the metadata and scrape filters.
    pub(crate) fn selects(&self, instance: &Instance) -> bool {
        let has = |key: &str, value: &str| instance.metadata.get(key).is_some_and(|v| v == value);
        (!self.scrape || has(SCRAPE_KEY, "true"))
            && self.metadata.iter().all(|(key, value)| has(key, value))
    }

    /// The canonical query string: the same for every spelling of the same question.
    pub(crate) fn key(&self) -> String {
        let mut key = form_urlencoded::Serializer::new(String::new());
        for app in &self.apps {
            key.append_pair("app", app);
        }
        for (name, value) in &self.metadata {
            key.append_pair(&format!("metadata.{name}"), value);
        }
        if self.scrape {
            key.append_pair("scrape", "true");
        }
        key.finish()
    }
}

#[cfg(test)]
mod tests;
