//! `heureka.dns.*`: off by default; the domain and TTL read as DNS writes them.

use super::*;

fn dns(args: &[&str]) -> DnsConfig {
    config(&Dir::new(), args, &[]).heureka.dns
}

#[test]
fn dns_is_off_by_default_on_port_8600_answering_eureka_for_5_seconds() {
    let dns = dns(&[]);
    assert!(!dns.enabled);
    assert_eq!(dns.address, None);
    assert_eq!(dns.port, 8600);
    assert_eq!(dns.domain, "eureka.");
    assert_eq!(dns.ttl, Duration::from_secs(5));
    assert_eq!(dns.max_answers, 32);
    assert_eq!(dns.rate_limit, 500);
}

#[test]
fn the_domain_is_kept_lower_case_and_fully_qualified() {
    assert_eq!(
        dns(&["--heureka.dns.domain=Svc.Example.COM"]).domain,
        "svc.example.com."
    );
    assert_eq!(dns(&["--heureka.dns.domain=consul."]).domain, "consul.");
}

#[test]
fn a_bare_ttl_is_seconds_and_zero_is_allowed() {
    assert_eq!(dns(&["--heureka.dns.ttl=30"]).ttl, Duration::from_secs(30));
    assert_eq!(dns(&["--heureka.dns.ttl=0"]).ttl, Duration::ZERO);
}

#[test]
fn a_bad_dns_value_is_an_error_naming_its_key() {
    for (key, value) in [
        ("heureka.dns.domain", "."),
        ("heureka.dns.domain", "bad name.example"),
        ("heureka.dns.domain", "a..b"),
        ("heureka.dns.ttl", "1500ms"),
        ("heureka.dns.ttl", "2d"),
        ("heureka.dns.max-answers", "0"),
        ("heureka.dns.rate-limit", "0"),
        ("heureka.dns.port", "65536"),
        ("heureka.dns.address", "10.0.0"),
    ] {
        let argument = format!("--{key}={value}");
        let message = error(&Dir::new(), &[argument.as_str()], &[]);
        assert!(message.contains(key), "{argument}: {message}");
        assert!(!message.contains('\n'), "{message}");
    }
}
