//! The instance's own address when none is configured, chosen as Spring Cloud Commons'
//! `InetUtils.findFirstNonLoopbackHostInfo` chooses it, so that a Rust service on a machine
//! with several network interfaces registers the address a Spring service there would.
//!
//! The choice is [`choose_address`], a pure function over the interfaces' addresses, so that
//! multi-NIC cases are tested with made-up interface lists; [`find_host_info`] feeds it the
//! machine's interfaces (`if-addrs`) and names the address by reverse lookup (`dns-lookup`).

use std::net::{IpAddr, Ipv4Addr};
use std::sync::mpsc;
use std::time::Duration;

use regex::Regex;

/// `spring.cloud.inetutils.*` (Spring Cloud Commons' `InetUtilsProperties`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InetSettings {
    /// `spring.cloud.inetutils.preferred-networks`: regular expressions or prefixes; when any
    /// is given, only an address that matches one in full, or starts with one, is chosen.
    pub preferred_networks: Vec<String>,
    /// `spring.cloud.inetutils.ignored-interfaces`: regular expressions; an interface whose
    /// name matches one in full is skipped (e.g. `docker0`, `veth.*`).
    pub ignored_interfaces: Vec<String>,
    /// `spring.cloud.inetutils.use-only-site-local-interfaces`, default `false`: only
    /// 10/8, 172.16/12 and 192.168/16 addresses (this takes the place of `preferred_networks`).
    pub use_only_site_local_interfaces: bool,
    /// `spring.cloud.inetutils.default-hostname`, default `localhost`: the host name when no
    /// address is found at all.
    pub default_hostname: String,
    /// `spring.cloud.inetutils.default-ip-address`, default `127.0.0.1`.
    pub default_ip_address: String,
    /// `spring.cloud.inetutils.timeout-seconds`, default 1: how long the reverse lookup may
    /// take before the host name is taken to be `localhost`.
    pub timeout: Duration,
}

impl Default for InetSettings {
    fn default() -> Self {
        InetSettings {
            preferred_networks: Vec::new(),
            ignored_interfaces: Vec::new(),
            use_only_site_local_interfaces: false,
            default_hostname: "localhost".to_owned(),
            default_ip_address: "127.0.0.1".to_owned(),
            timeout: Duration::from_secs(1),
        }
    }
}

impl InetSettings {
    /// The first of `preferred_networks` and `ignored_interfaces` that is not a valid regular
    /// expression, with why.
    pub fn invalid_pattern(&self) -> Option<(String, String)> {
        self.preferred_networks
            .iter()
            .chain(&self.ignored_interfaces)
            .find_map(|pattern| {
                whole_match(pattern)
                    .err()
                    .map(|error| (pattern.clone(), error.to_string()))
            })
    }
}

/// One address of one network interface, as the operating system lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterfaceAddress {
    /// The interface's name (`eth0`), which `ignored_interfaces` is matched against.
    pub name: String,
    /// The interface's index; the lowest index among the interfaces that are up wins.
    pub index: u32,
    pub addr: IpAddr,
    /// Whether the interface is up and running.
    pub up: bool,
}

/// A host name and an IP address, as Spring's `HostInfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostInfo {
    pub hostname: String,
    pub ip_address: String,
}

/// The address `InetUtils.findFirstNonLoopbackAddress` picks from `interfaces` (listed in
/// the operating system's order, the addresses of one interface together), or `None`.
///
/// Interfaces are visited in order. One that is up is considered if its index is lower than
/// every interface considered before, or if nothing has been found yet; its addresses then
/// count unless its name is ignored, and each IPv4, non-loopback, preferred address replaces
/// the result (so the last such address of the interface wins). As in Spring, the lowest
/// index is remembered even for an interface that gave nothing, which can make a later
/// interface with a higher index lose to an earlier one.
pub fn choose_address(
    interfaces: &[InterfaceAddress],
    settings: &InetSettings,
) -> Option<Ipv4Addr> {
    let ignored = patterns(&settings.ignored_interfaces);
    let mut result: Option<Ipv4Addr> = None;
    let mut lowest = u32::MAX;
    for interface in group_by_interface(interfaces) {
        let first = interface[0];
        if !first.up {
            continue;
        }
        if first.index < lowest || result.is_none() {
            lowest = first.index;
        } else {
            continue;
        }
        if ignored.iter().any(|pattern| pattern.is_match(&first.name)) {
            continue;
        }
        for entry in interface {
            let IpAddr::V4(address) = entry.addr else {
                continue;
            };
            if !address.is_loopback() && is_preferred(address, settings) {
                result = Some(address);
            }
        }
    }
    result
}

/// The machine's host info as Spring Cloud finds it: the address [`choose_address`] picks
/// among the machine's interfaces, named by reverse lookup; failing that, the machine's own
/// name and the address it resolves to (Java's `InetAddress.getLocalHost`); failing that,
/// `default_hostname` and `default_ip_address`.
pub fn find_host_info(settings: &InetSettings) -> HostInfo {
    let interfaces = machine_interfaces();
    if let Some(address) = choose_address(&interfaces, settings) {
        let ip = IpAddr::V4(address);
        return HostInfo {
            hostname: host_name_of(ip, settings.timeout),
            ip_address: ip.to_string(),
        };
    }
    if let Some(local) = local_host() {
        return local;
    }
    HostInfo {
        hostname: settings.default_hostname.clone(),
        ip_address: settings.default_ip_address.clone(),
    }
}

/// The machine's interface addresses, as `if-addrs` lists them; none if they cannot be read
/// (Spring logs and goes on to its fallbacks too).
fn machine_interfaces() -> Vec<InterfaceAddress> {
    match if_addrs::get_if_addrs() {
        Ok(interfaces) => interfaces
            .into_iter()
            .map(|interface| InterfaceAddress {
                up: interface.is_oper_up(),
                addr: interface.ip(),
                index: interface.index.unwrap_or(u32::MAX),
                name: interface.name,
            })
            .collect(),
        Err(error) => {
            tracing::warn!(%error, "cannot list the network interfaces");
            Vec::new()
        }
    }
}

/// Java's `InetAddress.getHostName`: the reverse lookup's name if it resolves back to the
/// address, else the address itself; `localhost` if the lookup takes longer than `timeout`
/// (Spring's `convertAddress`). The lookup runs on its own thread so that the wait is bounded.
fn host_name_of(ip: IpAddr, timeout: Duration) -> String {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(confirmed_reverse_lookup(ip));
    });
    match receiver.recv_timeout(timeout) {
        Ok(name) => name,
        Err(_) => {
            tracing::info!(%ip, "cannot determine the local host name in time");
            "localhost".to_owned()
        }
    }
}

fn confirmed_reverse_lookup(ip: IpAddr) -> String {
    let Ok(name) = dns_lookup::lookup_addr(&ip) else {
        return ip.to_string();
    };
    let resolves_back = dns_lookup::lookup_host(&name)
        .map(|mut addresses| addresses.any(|address| address == ip))
        .unwrap_or(false);
    if resolves_back {
        name
    } else {
        ip.to_string()
    }
}

/// The machine's name and the first address it resolves to.
fn local_host() -> Option<HostInfo> {
    let hostname = dns_lookup::get_hostname().ok()?;
    let addresses: Vec<IpAddr> = dns_lookup::lookup_host(&hostname).ok()?.collect();
    let address = addresses
        .iter()
        .find(|address| address.is_ipv4())
        .or(addresses.first())?;
    Some(HostInfo {
        ip_address: address.to_string(),
        hostname,
    })
}

/// The addresses of each interface, interfaces in order of first appearance.
fn group_by_interface(interfaces: &[InterfaceAddress]) -> Vec<Vec<&InterfaceAddress>> {
    let mut groups: Vec<Vec<&InterfaceAddress>> = Vec::new();
    for entry in interfaces {
        match groups.iter_mut().find(|group| group[0].name == entry.name) {
            Some(group) => group.push(entry),
            None => groups.push(vec![entry]),
        }
    }
    groups
}

/// `InetUtils.isPreferredAddress`.
fn is_preferred(address: Ipv4Addr, settings: &InetSettings) -> bool {
    if settings.use_only_site_local_interfaces {
        return address.is_private();
    }
    if settings.preferred_networks.is_empty() {
        return true;
    }
    let text = address.to_string();
    settings.preferred_networks.iter().any(|network| {
        whole_match(network).is_ok_and(|pattern| pattern.is_match(&text))
            || text.starts_with(network.as_str())
    })
}

/// Java's `String.matches`: the whole text must match.
fn whole_match(pattern: &str) -> Result<Regex, regex::Error> {
    Regex::new(&format!("^(?:{pattern})$"))
}

/// The valid patterns; binding has already reported any invalid one.
fn patterns(patterns: &[String]) -> Vec<Regex> {
    patterns
        .iter()
        .filter_map(|pattern| whole_match(pattern).ok())
        .collect()
}

#[cfg(test)]
mod tests;
