//! What a query's name asks for, read against the zone (`heureka.dns.domain`): the names
//! Heureka answers are few and fixed, so they are matched label by label rather than looked
//! up in a zone of records (there is no zone to keep in step with the registry).
//!
//! * `<app>.<domain>`: the addresses of the application's UP instances (A, AAAA);
//! * `_<app>._tcp.<domain>` and `_<app>._https.<domain>`: their ports and secure ports (SRV),
//!   as the issue names them: the application stands where RFC 2782 puts the service, the
//!   protocol label says which of an instance's two ports;
//! * `<address>.<app>.<domain>`: one instance's address, the target SRV records point at
//!   (`10-0-0-7` for 10.0.0.7, the eight hexadecimal groups of an IPv6 address joined by `-`);
//! * `<domain>` itself, for its SOA.
//!
//! Application names are one label, compared without case (Eureka upper-cases them).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use hickory_proto::rr::Name;

/// What a name inside the zone asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Asked {
    /// A name outside the zone: not ours to answer (REFUSED).
    Outside,
    /// The zone's own name.
    Apex,
    /// `<app>.<domain>`; the application's name upper-cased, as the registry keys it.
    Addresses { app: String },
    /// `_<app>._tcp.<domain>` (`secure` false) or `_<app>._https.<domain>` (`secure` true).
    Service { app: String, secure: bool },
    /// `<address>.<app>.<domain>`.
    Host { app: String, address: IpAddr },
    /// Inside the zone, but no name Heureka serves (NXDOMAIN).
    Nothing,
}

/// Reads `name` against the zone `domain` (both fully qualified).
pub(crate) fn asked(name: &Name, domain: &Name) -> Asked {
    if !domain.zone_of(name) {
        return Asked::Outside;
    }
    let own = usize::from(name.num_labels() - domain.num_labels());
    let labels: Vec<&[u8]> = name.iter().take(own).collect();
    let text = |label: &[u8]| std::str::from_utf8(label).ok().map(str::to_uppercase);
    match labels.as_slice() {
        [] => Asked::Apex,
        [app] => match text(app) {
            Some(app) if !app.starts_with('_') => Asked::Addresses { app },
            _ => Asked::Nothing,
        },
        [service, protocol] if service.first() == Some(&b'_') => {
            let secure = match protocol.to_ascii_lowercase().as_slice() {
                b"_tcp" => false,
                b"_https" => true,
                _ => return Asked::Nothing,
            };
            match text(&service[1..]) {
                Some(app) if !app.is_empty() => Asked::Service { app, secure },
                _ => Asked::Nothing,
            }
        }
        [address, app] => match (address_of_label(address), text(app)) {
            (Some(address), Some(app)) => Asked::Host { app, address },
            _ => Asked::Nothing,
        },
        _ => Asked::Nothing,
    }
}

/// The label naming `address` in SRV targets: `10-0-0-7`, `fd00-0-0-0-0-0-0-1`.
pub(crate) fn label_of_address(address: IpAddr) -> String {
    match address {
        IpAddr::V4(v4) => v4.octets().map(|octet| octet.to_string()).join("-"),
        IpAddr::V6(v6) => v6.segments().map(|group| format!("{group:x}")).join("-"),
    }
}

/// The address a label names, exactly as [`label_of_address`] writes it (no other spelling,
/// so each address has one name).
fn address_of_label(label: &[u8]) -> Option<IpAddr> {
    let label = std::str::from_utf8(label).ok()?.to_ascii_lowercase();
    let parts: Vec<&str> = label.split('-').collect();
    let address = match parts.len() {
        4 => IpAddr::V4(Ipv4Addr::from(
            <[u8; 4]>::try_from(
                parts
                    .iter()
                    .map(|part| part.parse::<u8>().ok())
                    .collect::<Option<Vec<u8>>>()?,
            )
            .ok()?,
        )),
        8 => IpAddr::V6(Ipv6Addr::from(
            <[u16; 8]>::try_from(
                parts
                    .iter()
                    .map(|part| u16::from_str_radix(part, 16).ok())
                    .collect::<Option<Vec<u16>>>()?,
            )
            .ok()?,
        )),
        _ => return None,
    };
    (label_of_address(address) == label).then_some(address)
}

#[cfg(test)]
mod tests;
