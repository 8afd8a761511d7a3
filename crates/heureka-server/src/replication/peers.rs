//! Which servers are this server's peers: Eureka's `PeerEurekaNodes`, from configuration.
//!
//! Peer URLs are the server's own `eureka.client.service-url.*`, zone by zone in the order a
//! Eureka client uses them (its own zone first, then the following zones of
//! `eureka.client.availability-zones.<region>`), then any other configured zone, without
//! duplicates. A URL that points at this server is dropped. Eureka compares host names only, so
//! several servers on one host all take every `localhost` URL for themselves and replicate
//! nothing; Heureka compares host *and* port, and treats the loopback names alike.

use std::net::IpAddr;

use url::Url;

use crate::config::{BasicAuth, Config};
use crate::own_instance::system_host_name;
use crate::security::basic::basic_auth_header;

/// One peer server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PeerUrl {
    /// The service URL without credentials, ending in `/` (`http://peer1:8761/eureka/`).
    pub(crate) url: String,
    /// `Authorization` to send, from `user:password@` in the configured URL.
    pub(crate) authorization: Option<String>,
}

impl PeerUrl {
    /// The URL as it is safe to log and show: never with its credentials.
    pub(crate) fn as_str(&self) -> &str {
        &self.url
    }
}

/// How this server can be named in a URL: its port and every host name that reaches it.
#[derive(Clone, Debug)]
pub(crate) struct OwnAddress {
    pub(crate) port: u16,
    /// Lower-cased host names and IP addresses.
    pub(crate) hosts: Vec<String>,
    /// `eureka.server.my-url`, which when set decides alone (exact match, as in Eureka).
    pub(crate) my_url: Option<String>,
}

impl OwnAddress {
    /// This server's names: the configured host name and IP, the machine's host name, the
    /// address it listens on, and the loopback names (a peer URL on this machine's port with
    /// any of these is this server).
    pub(crate) fn from_config(config: &Config, port: u16) -> OwnAddress {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
            .iter()
            .map(|host| (*host).to_owned())
            .collect();
        hosts.extend(config.instance.hostname.iter().cloned());
        hosts.extend(config.instance.ip_address.iter().map(IpAddr::to_string));
        if !config.server.address.is_unspecified() {
            hosts.push(config.server.address.to_string());
        }
        hosts.extend(system_host_name());
        let mut hosts: Vec<String> = hosts.iter().map(|host| host.to_lowercase()).collect();
        hosts.sort();
        hosts.dedup();
        OwnAddress {
            port,
            hosts,
            my_url: config.eureka_server.my_url.clone(),
        }
    }

    fn is_me(&self, configured: &str, url: &Url) -> bool {
        if let Some(my_url) = &self.my_url {
            return same_url(my_url, configured);
        }
        let Some(host) = url.host_str() else {
            return false;
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        url.port_or_known_default() == Some(self.port)
            && self.hosts.iter().any(|own| own.eq_ignore_ascii_case(host))
    }
}

/// The peers named by the configuration, in Eureka's zone order, without this server.
pub(crate) fn peer_urls(config: &Config, own: &OwnAddress) -> Vec<PeerUrl> {
    let mut peers: Vec<PeerUrl> = Vec::new();
    for configured in zone_ordered_urls(config) {
        let Ok(url) = Url::parse(&configured) else {
            // The binder already refused anything that is not http(s)://host.
            continue;
        };
        if own.is_me(&configured, &url) {
            continue;
        }
        let peer = without_credentials(url, config.heureka.replication.peer_user.as_ref());
        if !peers.iter().any(|known| known.url == peer.url) {
            peers.push(peer);
        }
    }
    peers
}

/// `url` with `segment` (`/ns/team-a`) put before its path: the same peer, in the namespace
/// of that name. An empty segment is the default namespace: `url` unchanged.
pub(crate) fn in_namespace(url: &PeerUrl, segment: &str) -> PeerUrl {
    if segment.is_empty() {
        return url.clone();
    }
    let Ok(mut parsed) = Url::parse(&url.url) else {
        return url.clone();
    };
    let path = format!("{segment}{}", parsed.path());
    parsed.set_path(&path);
    PeerUrl {
        url: parsed.to_string(),
        authorization: url.authorization.clone(),
    }
}

/// Every configured service URL, own zone first, as Eureka's `EndpointUtils` orders them.
fn zone_ordered_urls(config: &Config) -> Vec<String> {
    let client = &config.client;
    let zones: Vec<String> = client
        .availability_zones
        .get(&client.region)
        .filter(|zones| !zones.is_empty())
        .cloned()
        .unwrap_or_else(|| vec!["defaultZone".to_owned()]);
    // Eureka's instance zone outside AWS is the first availability zone, so the order is the
    // listed one; zones that are configured but not listed follow.
    let mut ordered: Vec<&str> = zones.iter().map(String::as_str).collect();
    for zone in client.service_url.keys() {
        if !ordered.contains(&zone.as_str()) {
            ordered.push(zone);
        }
    }
    ordered
        .into_iter()
        .filter_map(|zone| client.service_url.get(zone))
        .flatten()
        .cloned()
        .collect()
}

/// The URL without its credentials, and the `Authorization` to send: from the URL's
/// `user:password@`, else `heureka.replication.peer-user` (which keeps credentials out of URLs,
/// and so out of logs and dashboards), else none.
fn without_credentials(mut url: Url, peer_user: Option<&BasicAuth>) -> PeerUrl {
    let authorization = if url.username().is_empty() {
        peer_user.map(|user| basic_auth_header(&user.name, &user.password))
    } else {
        let user = percent_decode(url.username());
        let password = percent_decode(url.password().unwrap_or(""));
        Some(basic_auth_header(&user, &password))
    };
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let mut text = url.to_string();
    if !text.ends_with('/') {
        text.push('/');
    }
    PeerUrl {
        url: text,
        authorization,
    }
}

fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// Two spellings of one URL: case-insensitive, trailing slash optional.
fn same_url(a: &str, b: &str) -> bool {
    a.trim_end_matches('/')
        .eq_ignore_ascii_case(b.trim_end_matches('/'))
}

#[cfg(test)]
mod tests;
