//! HTTP to one remote region's server: `GET {url}apps/` and `GET {url}apps/delta`, JSON,
//! gzip when `g-zip-content-from-remote-region` says so, Basic auth from the URL's user
//! information (never logged), the region timeouts, and `User-Agent:
//! Heureka-RemoteRegion/<version>` so the region serves us its own instances only.

use std::time::Duration;

use heureka_core::Applications;
use heureka_wire::Format;
use reqwest::header::{ACCEPT, AUTHORIZATION, USER_AGENT};

use super::settings::{RegionSettings, RegionsSettings};
use crate::error_chain::error_chain;

/// What this server calls itself when it fetches a region.
pub(crate) const FETCHER_AGENT: &str = concat!("Heureka-RemoteRegion/", env!("CARGO_PKG_VERSION"));

/// The shared client region fetches go through.
#[derive(Clone, Debug)]
pub(crate) struct RegionClient {
    http: reqwest::Client,
    read_timeout: Duration,
}

impl RegionClient {
    /// `tls` is for `https://` regions: `eureka.client.tls.*`, or the region trust store.
    pub(crate) fn new(
        settings: &RegionsSettings,
        tls: heureka_tls::rustls::ClientConfig,
    ) -> RegionClient {
        let http = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .pool_idle_timeout(Duration::from_secs(30))
            .gzip(settings.gzip)
            .use_preconfigured_tls(tls)
            .build()
            .expect("a client with a rustls configuration always builds");
        RegionClient {
            http,
            // The whole registry of a region may be megabytes: the read timeout is Eureka's
            // per-read socket timeout, here for the whole answer, so at least 10 s.
            read_timeout: settings.read_timeout.max(Duration::from_secs(10)),
        }
    }

    /// `GET {url}apps/`.
    pub(crate) async fn full(&self, region: &RegionSettings) -> Result<Applications, String> {
        self.get(region, "apps/").await
    }

    /// `GET {url}apps/delta`.
    pub(crate) async fn delta(&self, region: &RegionSettings) -> Result<Applications, String> {
        self.get(region, "apps/delta").await
    }

    async fn get(&self, region: &RegionSettings, path: &str) -> Result<Applications, String> {
        let mut request = self
            .http
            .get(format!("{}{path}", region.url))
            .timeout(self.read_timeout)
            .header(ACCEPT, "application/json")
            .header(USER_AGENT, FETCHER_AGENT);
        // The credentials travel in this header only: `region.url` holds none, so the URL
        // reqwest names in its errors shows no secret.
        if let Some(authorization) = &region.authorization {
            request = request.header(AUTHORIZATION, authorization);
        }
        let response = request.send().await.map_err(|error| error_chain(&error))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("{} on GET {path}", status.as_u16()));
        }
        let body = response
            .bytes()
            .await
            .map_err(|error| error_chain(&error))?;
        heureka_wire::decode_applications(&body, Format::Json)
            .map_err(|error| format!("unreadable answer to GET {path}: {error}"))
    }
}
