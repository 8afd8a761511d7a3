//! `heureka.replication.allowed-addresses`: IP addresses and CIDR blocks a replication request
//! may come from besides the peers' own addresses (a peer behind NAT, an operator's tool).

use std::fmt;
use std::net::IpAddr;

/// One address (`10.1.2.3`, `fd00::7`) or block (`10.0.0.0/8`, `fd00::/64`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct AddressRange {
    /// The block's first address: bits past the prefix are cleared when it is read.
    network: IpAddr,
    /// How many leading bits must match: 32 or 128 for a single address.
    prefix_len: u8,
}

impl AddressRange {
    /// Reads `address` or `address/prefix`; `None` for anything else, a prefix longer than
    /// the address included.
    pub(crate) fn parse(text: &str) -> Option<AddressRange> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network: IpAddr = address
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .ok()?;
        let bits = bit_width(network);
        let prefix_len = match prefix {
            // Digits only: `u8::from_str` would take `+8`.
            Some(prefix) if !prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_digit()) => {
                prefix.parse::<u8>().ok().filter(|len| *len <= bits)?
            }
            Some(_) => return None,
            None => bits,
        };
        Some(AddressRange {
            network: masked(network, prefix_len),
            prefix_len,
        })
    }

    /// Whether `address` is in the block. A v4 address and its v4-mapped v6 form
    /// (`::ffff:10.1.2.3`, which a dual-stack socket reports) are the same address.
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        let network = canonical(self.network);
        let prefix_len = match (self.network, network) {
            // A block written as v4-mapped v6 (`::ffff:10.0.0.0/104`) is its v4 block.
            (IpAddr::V6(_), IpAddr::V4(_)) => self.prefix_len.saturating_sub(96),
            _ => self.prefix_len,
        };
        match (network, address) {
            (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => {
                masked(address, prefix_len) == masked(network, prefix_len)
            }
            _ => false,
        }
    }
}

impl fmt::Debug for AddressRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix_len)
    }
}

impl fmt::Display for AddressRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// An address as it is compared: a v4-mapped v6 address is its v4 address.
pub(crate) fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

fn bit_width(address: IpAddr) -> u8 {
    match address {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}

/// `address` with every bit after the first `prefix_len` cleared.
fn masked(address: IpAddr, prefix_len: u8) -> IpAddr {
    match address {
        IpAddr::V4(v4) => {
            let mask = u32::MAX
                .checked_shl(32 - u32::from(prefix_len))
                .unwrap_or(0);
            IpAddr::V4((u32::from(v4) & mask).into())
        }
        IpAddr::V6(v6) => {
            let mask = u128::MAX
                .checked_shl(128 - u32::from(prefix_len))
                .unwrap_or(0);
            IpAddr::V6((u128::from(v6) & mask).into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(text: &str) -> AddressRange {
        AddressRange::parse(text).unwrap_or_else(|| panic!("{text} is a range"))
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn a_bare_address_matches_itself_only() {
        let one = range("10.1.2.3");
        assert!(one.contains(ip("10.1.2.3")));
        assert!(!one.contains(ip("10.1.2.4")));
        let six = range("fd00::7");
        assert!(six.contains(ip("fd00::7")));
        assert!(!six.contains(ip("fd00::8")));
    }

    #[test]
    fn a_cidr_block_matches_its_addresses() {
        let block = range("10.0.0.0/8");
        assert!(block.contains(ip("10.255.0.1")));
        assert!(!block.contains(ip("11.0.0.1")));
        // Host bits in the written network are ignored, as `ip route` ignores them.
        assert!(range("192.168.1.77/24").contains(ip("192.168.1.1")));
        let six = range("fd00:1::/32");
        assert!(six.contains(ip("fd00:1:ffff::1")));
        assert!(!six.contains(ip("fd00:2::1")));
        assert!(range("0.0.0.0/0").contains(ip("203.0.113.9")));
        assert!(!range("0.0.0.0/0").contains(ip("::1")));
        assert!(range("::/0").contains(ip("::1")));
    }

    #[test]
    fn a_v4_mapped_v6_sender_is_its_v4_address() {
        assert!(range("127.0.0.1").contains(ip("::ffff:127.0.0.1")));
        assert!(range("10.0.0.0/8").contains(ip("::ffff:10.9.8.7")));
        assert!(range("::ffff:10.0.0.0/104").contains(ip("10.1.1.1")));
        assert!(!range("127.0.0.1").contains(ip("::ffff:127.0.0.2")));
    }

    #[test]
    fn v4_never_matches_a_plain_v6_block() {
        assert!(!range("::1").contains(ip("127.0.0.1")));
        assert!(!range("127.0.0.1").contains(ip("::1")));
    }

    #[test]
    fn malformed_ranges_are_refused() {
        for text in [
            "",
            "10.0.0",
            "10.0.0.0/33",
            "fd00::/129",
            "10.0.0.0/",
            "10.0.0.0/+8",
            "host.example",
            "10.0.0.0/8/9",
        ] {
            assert!(AddressRange::parse(text).is_none(), "{text}");
        }
        assert_eq!(range("[::1]").to_string(), "::1/128");
    }
}
