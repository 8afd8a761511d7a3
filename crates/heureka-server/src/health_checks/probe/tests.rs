//! Where probes may connect: the allowed networks, and the addresses never probed whatever
//! they allow.

use std::net::SocketAddr;

use super::*;

fn networks(ranges: &str) -> Networks {
    let ranges: Vec<AddressRange> = ranges
        .split(',')
        .map(|range| AddressRange::parse(range).unwrap())
        .collect();
    Networks::new(&ranges)
}

fn allowed(networks: &Networks, address: &str) -> bool {
    let address: SocketAddr = format!("{address}:80")
        .parse()
        .unwrap_or_else(|_| format!("[{address}]:80").parse().unwrap());
    networks.check("host", &[address]).is_ok()
}

#[test]
fn cloud_metadata_and_link_local_addresses_are_never_probed_even_when_everything_is_allowed() {
    let everything = networks("0.0.0.0/0,::/0");
    for address in [
        "169.254.169.254",
        "fe80::1",
        "fd00:ec2::254",
        "100.100.100.200",
        "::ffff:169.254.169.254",
    ] {
        assert!(!allowed(&everything, address), "{address}");
    }
    for address in ["10.1.2.3", "100.100.100.201", "fd00:ec3::1", "8.8.8.8"] {
        assert!(allowed(&everything, address), "{address}");
    }
}

#[test]
fn an_address_outside_the_allowed_networks_is_refused() {
    let private = networks("10.0.0.0/8");
    assert!(allowed(&private, "10.0.0.7"));
    assert!(!allowed(&private, "192.168.0.7"));
}
