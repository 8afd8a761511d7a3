//! The address choice on made-up interface lists: the multi-NIC cases Spring's `InetUtils`
//! decides, one per test.

use super::*;

fn nic(name: &str, index: u32, addr: &str) -> InterfaceAddress {
    InterfaceAddress {
        name: name.to_owned(),
        index,
        addr: addr.parse().unwrap(),
        up: true,
    }
}

fn down(mut interface: InterfaceAddress) -> InterfaceAddress {
    interface.up = false;
    interface
}

fn choose(interfaces: &[InterfaceAddress], settings: &InetSettings) -> Option<String> {
    choose_address(interfaces, settings).map(|address| address.to_string())
}

fn default_choice(interfaces: &[InterfaceAddress]) -> Option<String> {
    choose(interfaces, &InetSettings::default())
}

#[test]
fn loopback_addresses_are_skipped() {
    let interfaces = [nic("lo", 1, "127.0.0.1"), nic("eth0", 2, "10.0.0.5")];
    assert_eq!(default_choice(&interfaces).as_deref(), Some("10.0.0.5"));
}

#[test]
fn the_interface_with_the_lowest_index_wins() {
    let interfaces = [nic("eth1", 3, "192.168.1.5"), nic("eth0", 2, "10.0.0.5")];
    assert_eq!(default_choice(&interfaces).as_deref(), Some("10.0.0.5"));
}

#[test]
fn interfaces_that_are_down_are_skipped() {
    let interfaces = [down(nic("eth0", 1, "10.0.0.5")), nic("eth1", 2, "10.0.1.5")];
    assert_eq!(default_choice(&interfaces).as_deref(), Some("10.0.1.5"));
}

#[test]
fn ipv6_addresses_are_never_chosen() {
    let interfaces = [
        nic("eth0", 1, "2001:db8::1"),
        nic("eth0", 1, "fe80::1"),
        nic("eth1", 2, "10.0.0.9"),
    ];
    assert_eq!(default_choice(&interfaces).as_deref(), Some("10.0.0.9"));
    assert_eq!(default_choice(&[nic("eth0", 1, "2001:db8::1")]), None);
}

#[test]
fn the_last_address_of_the_chosen_interface_wins() {
    let interfaces = [nic("eth0", 1, "10.0.0.1"), nic("eth0", 1, "10.0.0.2")];
    assert_eq!(default_choice(&interfaces).as_deref(), Some("10.0.0.2"));
}

#[test]
fn ignored_interfaces_match_the_whole_name_as_a_regex() {
    let interfaces = [nic("docker0", 1, "172.17.0.1"), nic("eth0", 2, "10.0.0.5")];
    assert_eq!(default_choice(&interfaces).as_deref(), Some("172.17.0.1"));
    let settings = InetSettings {
        ignored_interfaces: vec!["docker.*".to_owned()],
        ..InetSettings::default()
    };
    assert_eq!(choose(&interfaces, &settings).as_deref(), Some("10.0.0.5"));
    let partial = InetSettings {
        ignored_interfaces: vec!["docker".to_owned()],
        ..InetSettings::default()
    };
    assert_eq!(choose(&interfaces, &partial).as_deref(), Some("172.17.0.1"));
}

#[test]
fn preferred_networks_match_as_a_regex_or_a_prefix() {
    let interfaces = [
        nic("eth0", 1, "10.0.0.5"),
        nic("eth1", 2, "192.168.7.5"),
        nic("eth2", 3, "172.20.1.1"),
    ];
    // A later interface is considered only while nothing has been found, so each case below
    // lets exactly one address through.
    let prefix = InetSettings {
        preferred_networks: vec!["192.168".to_owned()],
        ..InetSettings::default()
    };
    assert_eq!(choose(&interfaces, &prefix).as_deref(), Some("192.168.7.5"));
    let regex = InetSettings {
        preferred_networks: vec![r"172\.2\d\..*".to_owned()],
        ..InetSettings::default()
    };
    assert_eq!(choose(&interfaces, &regex).as_deref(), Some("172.20.1.1"));
    let none = InetSettings {
        preferred_networks: vec!["8.8.".to_owned()],
        ..InetSettings::default()
    };
    assert_eq!(choose(&interfaces, &none), None);
}

#[test]
fn only_site_local_addresses_when_asked() {
    let interfaces = [nic("eth0", 1, "203.0.113.7"), nic("eth1", 2, "192.168.0.9")];
    assert_eq!(default_choice(&interfaces).as_deref(), Some("203.0.113.7"));
    let settings = InetSettings {
        use_only_site_local_interfaces: true,
        // Site-local only takes the place of the preferred networks.
        preferred_networks: vec!["203.".to_owned()],
        ..InetSettings::default()
    };
    assert_eq!(
        choose(&interfaces, &settings).as_deref(),
        Some("192.168.0.9")
    );
}

#[test]
fn a_lower_index_that_gave_nothing_still_shuts_out_later_interfaces() {
    // Spring remembers the lowest index of every interface it looked at, even one whose
    // addresses were all rejected; eth2 then loses to the eth5 address found first.
    let interfaces = [
        nic("eth5", 5, "10.0.0.5"),
        nic("eth1", 1, "127.0.0.2"),
        nic("eth2", 2, "10.0.0.2"),
    ];
    assert_eq!(default_choice(&interfaces).as_deref(), Some("10.0.0.5"));
}

#[test]
fn no_usable_address_gives_none() {
    assert_eq!(default_choice(&[]), None);
    assert_eq!(default_choice(&[nic("lo", 1, "127.0.0.1")]), None);
}

#[test]
fn an_invalid_pattern_is_reported() {
    let settings = InetSettings {
        ignored_interfaces: vec!["eth[".to_owned()],
        ..InetSettings::default()
    };
    let (pattern, _why) = settings.invalid_pattern().expect("reported");
    assert_eq!(pattern, "eth[");
    assert_eq!(InetSettings::default().invalid_pattern(), None);
}

#[test]
fn this_machine_has_a_host_info() {
    // The real interfaces: whatever they are, the answer is a name and an IP address.
    let info = find_host_info(&InetSettings::default());
    assert!(!info.hostname.is_empty());
    assert!(info.ip_address.parse::<IpAddr>().is_ok(), "{info:?}");
}
