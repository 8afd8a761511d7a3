//! The remote regions as configured (`eureka.server.remote-region-*`, `heureka.regions.*`):
//! each region's URL without credentials and the `Authorization` they make, the whitelist,
//! the timings; and the rules on requests every read shares (which regions a `regions=`
//! names, which agents are region fetchers). Pure.

use std::time::Duration;

use url::Url;

use crate::config::Config;
use crate::security::basic::basic_auth_header;

/// The agents of region fetchers, Java's and Heureka's: served the local region only when
/// they ask without `regions=`, so that regions pointing at each other never re-export copies.
const FETCHER_AGENTS: [&str; 2] = ["Java-EurekaClient-RemoteRegion", "Heureka-RemoteRegion"];

/// One configured region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RegionSettings {
    /// Trimmed, lower-cased.
    pub(crate) name: String,
    /// The base URL without user information, ending in `/`: what logs and documents show.
    pub(crate) url: String,
    /// `Basic …` from the URL's `user:password@`; never shown.
    pub(crate) authorization: Option<String>,
    /// The apps served from this region (upper-cased), or None for every app.
    pub(crate) whitelist: Option<Vec<String>>,
}

/// Every configured region, in name order (the configuration binds its map sorted), and how they are fetched and served.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RegionsSettings {
    pub(crate) regions: Vec<RegionSettings>,
    pub(crate) fetch_interval: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) read_timeout: Duration,
    pub(crate) disable_delta: bool,
    /// Reads without `regions=` serve every region (Eureka's transparent fallback).
    pub(crate) fallback: bool,
    pub(crate) gzip: bool,
    pub(crate) stale_after: Duration,
    /// How long a region's changes stay in its deltas: the local delta queue's retention.
    pub(crate) retention_ms: i64,
    /// `eureka.client.region`: this server's own region.
    pub(crate) own_region: String,
}

impl RegionsSettings {
    pub(crate) fn from_config(config: &Config) -> RegionsSettings {
        let regions = &config.eureka_server.regions;
        RegionsSettings {
            regions: regions
                .urls
                .iter()
                .map(|(name, url)| region(name, url, &regions.whitelist))
                .collect(),
            fetch_interval: regions.fetch_interval,
            connect_timeout: regions.connect_timeout,
            read_timeout: regions.read_timeout,
            disable_delta: regions.disable_delta,
            fallback: !regions.disable_transparent_fallback,
            gzip: regions.gzip,
            stale_after: regions.stale_after,
            retention_ms: config.eureka_server.retention_time_in_ms_in_delta_queue as i64,
            own_region: config.client.region.clone(),
        }
    }

    /// The regions a `regions=` value names, as indexes in name order: lower-cased,
    /// split on `,`, each once; names not configured are left out (and returned, to be
    /// logged), as Eureka ignores them.
    pub(crate) fn requested(&self, value: &str) -> (Vec<usize>, Vec<String>) {
        let mut names: Vec<String> = value
            .to_lowercase()
            .split(',')
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty())
            .collect();
        names.sort();
        names.dedup();
        let mut found = Vec::new();
        let mut unknown = Vec::new();
        for name in names {
            match self.regions.iter().position(|region| region.name == name) {
                Some(index) => found.push(index),
                None => unknown.push(name),
            }
        }
        found.sort_unstable();
        (found, unknown)
    }

    /// Every region, for reads that fall back to all of them.
    pub(crate) fn all(&self) -> Vec<usize> {
        (0..self.regions.len()).collect()
    }
}

impl RegionSettings {
    /// Whether `app` is served from this region: its whitelist, else the global one, else all.
    pub(crate) fn allows(&self, app: &str) -> bool {
        match &self.whitelist {
            Some(apps) => apps.iter().any(|allowed| allowed.eq_ignore_ascii_case(app)),
            None => true,
        }
    }
}

/// Whether a `User-Agent` is a region fetcher's, Java's or Heureka's.
pub(crate) fn is_fetcher_agent(agent: &str) -> bool {
    FETCHER_AGENTS
        .iter()
        .any(|prefix| agent.starts_with(prefix))
}

fn region(
    name: &str,
    url: &str,
    whitelists: &std::collections::BTreeMap<String, Vec<String>>,
) -> RegionSettings {
    let (url, authorization) = without_credentials(url);
    let whitelist = whitelists
        .get(name)
        .or_else(|| whitelists.get("global"))
        .cloned();
    RegionSettings {
        name: name.to_owned(),
        url,
        authorization,
        whitelist,
    }
}

/// The URL without user information, ending in `/`, and the `Authorization` the user
/// information makes. A URL that does not parse is kept as written (its fetches fail and say
/// why); the configuration only lets `http://` and `https://` through.
fn without_credentials(text: &str) -> (String, Option<String>) {
    let Ok(mut url) = Url::parse(text.trim()) else {
        return (text.trim().to_owned(), None);
    };
    let authorization = (!url.username().is_empty()).then(|| {
        let decode = |text: &str| {
            percent_encoding::percent_decode_str(text)
                .decode_utf8_lossy()
                .into_owned()
        };
        basic_auth_header(
            &decode(url.username()),
            &decode(url.password().unwrap_or("")),
        )
    });
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let mut text = url.to_string();
    if !text.ends_with('/') {
        text.push('/');
    }
    (text, authorization)
}

#[cfg(test)]
mod tests;
