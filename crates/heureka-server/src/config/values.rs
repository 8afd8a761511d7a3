//! The value types of the server's keys, each with what a good value looks like (for the
//! error) and its parser: Spring's conversions from `heureka_config::values`, and the
//! server's own rules on top.

use std::net::IpAddr;
use std::time::Duration;

use heureka_config::values::DurationUnit;
pub(crate) use heureka_config::values::{
    parse_bool, parse_http_url, parse_ip, parse_level, parse_number,
};

use heureka_config::bindings::AsWritten;
use heureka_config::typed::{ListOf, Optional, Type};

use super::address::AddressRange;
use super::model::{CheckMode, Role, ShowDetails};

pub(crate) const BOOL: Type<bool> = Type::new("true or false", parse_bool);
pub(crate) const WHOLE_U64: Type<u64> = Type::new("a whole number", parse_number);
pub(crate) const WHOLE_U32: Type<u32> = Type::new("a whole number", parse_number);
pub(crate) const WHOLE_USIZE: Type<usize> = Type::new("a whole number", parse_number);
pub(crate) const PORT: Type<u16> = Type::new("a port from 0 to 65535", parse_number);
pub(crate) const IP_ADDRESS: Type<IpAddr> = Type::new("an IP address", parse_ip);
pub(crate) const OPTIONAL_IP_ADDRESS: Optional<IpAddr> = Optional(IP_ADDRESS);
/// Text as written, placeholders resolved; never wrong.
pub(crate) const TEXT: Type<String> = Type::new("text", |text| Some(text.to_owned()));
/// Trimmed text, or `None` when blank; never wrong.
pub(crate) const OPTIONAL_TEXT: Optional<String> =
    Optional(Type::new("text", |text| Some(text.trim().to_owned())));
/// The setting itself, for rules whose errors name its source.
pub(crate) const AS_WRITTEN: AsWritten = AsWritten;
pub(crate) const REGION: Type<String> = Type::new("a region name", |text| {
    Some(text.trim().to_owned()).filter(|text| !text.is_empty())
});
pub(crate) const FRACTION: Type<f64> = Type::new("a number greater than 0 and at most 1", |text| {
    parse_number::<f64>(text).filter(|p| *p > 0.0 && *p <= 1.0)
});
/// Eureka's `AbstractInstanceRegistry` takes a non-positive interval as 30 s.
pub(crate) const RENEWAL_INTERVAL_SECONDS: Type<u32> =
    Type::new("a whole number of seconds", |text| {
        match parse_number::<i64>(text)? {
            seconds if seconds <= 0 => Some(30),
            seconds => u32::try_from(seconds).ok(),
        }
    });
pub(crate) const TIMEOUT: Type<Duration> = Type::new(
    "a positive duration such as 20s, 500ms or PT1M",
    parse_duration,
);
pub(crate) const CONNECTION_COUNT: Type<usize> =
    Type::new("a whole number greater than 0", |text| {
        parse_number::<usize>(text).filter(|count| *count > 0)
    });
pub(crate) const HEADER_SIZE: Type<usize> =
    Type::new("a size such as 8192, 8KB or 1MB", parse_data_size);
pub(crate) const BODY_SIZE: Type<usize> =
    Type::new("a size such as 1048576, 512KB or 2MB", parse_data_size);
/// A count that bounds something, so it cannot be 0.
pub(crate) const POSITIVE_COUNT: Type<usize> = Type::new("a whole number greater than 0", |text| {
    parse_number::<usize>(text).filter(|count| *count > 0)
});
pub(crate) const POSITIVE_U32: Type<u32> = Type::new("a whole number greater than 0", |text| {
    parse_number::<u32>(text).filter(|count| *count > 0)
});
/// A length in bytes (a bare number, or Spring `DataSize` such as `512B`).
pub(crate) const NAME_LENGTH: Type<usize> =
    Type::new("a size in bytes such as 256 or 1KB", parse_data_size);
pub(crate) const METADATA_SIZE: Type<usize> =
    Type::new("a size such as 32768, 32KB or 1MB", parse_data_size);
/// A lease: a Spring duration in whole seconds (a bare number is seconds, as in
/// `durationInSecs`), at least 1 s.
pub(crate) const LEASE_DURATION: Type<Duration> = Type::new(
    "a duration of whole seconds, at least 1s, such as 300, 5m or PT5M",
    |text| {
        heureka_config::values::parse_duration(text, DurationUnit::Seconds).filter(|duration| {
            duration.subsec_nanos() == 0
                && duration.as_secs() >= 1
                && duration.as_secs() <= u64::from(u32::MAX)
        })
    },
);
/// A duration that may be 0 (`heureka.health-checks.jitter`).
pub(crate) const DURATION_OR_ZERO: Type<Duration> =
    Type::new("a duration such as 0, 500ms or 1s", |text| {
        heureka_config::values::parse_duration(text, DurationUnit::Millis)
    });
/// `heureka.health-checks.evict-after`: empty or 0 is never.
pub(crate) const NEVER_OR_DURATION: Type<Option<Duration>> =
    Type::new("a duration such as 10m, or 0 for never", |text| {
        if text.trim().is_empty() {
            return Some(None);
        }
        let duration = heureka_config::values::parse_duration(text, DurationUnit::Millis)?;
        Some(Some(duration).filter(|duration| !duration.is_zero()))
    });
pub(crate) const PERCENT: Type<u32> = Type::new("a whole number from 1 to 100", |text| {
    parse_number::<u32>(text).filter(|percent| (1..=100).contains(percent))
});
pub(crate) const CHECK_MODE: Type<CheckMode> =
    Type::new("one of off, http, tcp", CheckMode::from_name);
/// `DiscoveryIdentity-Name`s; never wrong.
pub(crate) const CLIENT_NAMES: ListOf<String> =
    ListOf(Type::new("client names", |name| Some(name.to_owned())));
pub(crate) const APP_NAMES: ListOf<String> =
    ListOf(Type::new("app names", |name| Some(name.to_uppercase())));
/// Namespace names (`heureka.namespaces.declared`, `users[n].namespaces`), lower-cased.
pub(crate) const NAMESPACE_NAMES: ListOf<String> = ListOf(Type::new(
    "namespace names: 1 to 63 letters, digits, '-', '_' or '.', starting with a letter or digit",
    |name| crate::namespace_name::parse(name).ok(),
));
pub(crate) const ROLE_NAMES: ListOf<Role> = ListOf(Type::new(
    "roles from read, register, admin and peer",
    Role::from_name,
));
pub(crate) const API_BASE_PATH: Type<String> = Type::new(
    "a path starting with '/' and not ending with '/', such as /eureka",
    parse_base_path,
);
pub(crate) const NAMESPACE_PREFIX: Type<String> = Type::new(
    "a path starting with '/' and not ending with '/', such as /ns",
    parse_base_path,
);
pub(crate) const ACTUATOR_BASE_PATH: Type<String> = Type::new(
    "a path starting with '/' and not ending with '/', such as /actuator",
    parse_base_path,
);
pub(crate) const DASHBOARD_PATH: Type<String> = Type::new(
    "a path starting with '/', such as / or /dashboard",
    parse_dashboard_path,
);
pub(crate) const SHOW_DETAILS: Type<ShowDetails> =
    Type::new("one of never, when-authorized, always", parse_show_details);
/// Actuator endpoint names, lower-cased; never wrong (unknown names expose nothing).
pub(crate) const ENDPOINT_NAMES: ListOf<String> = ListOf(Type::new("endpoint names", |name| {
    Some(name.to_ascii_lowercase())
}));
pub(crate) const SERVICE_URLS: ListOf<String> =
    ListOf(Type::new("an http:// or https:// URL", parse_service_url));
/// Availability zones; never wrong.
pub(crate) const ZONES: ListOf<String> =
    ListOf(Type::new("zone names", |zone| Some(zone.to_owned())));
pub(crate) const LOG_LEVEL: Type<String> =
    Type::new("one of trace, debug, info, warn, error, off", |text| {
        parse_level(text).map(str::to_owned)
    });
/// `heureka.replication.allowed-addresses`: IP addresses and CIDR blocks.
pub(crate) const ADDRESS_RANGES: ListOf<AddressRange> = ListOf(Type::new(
    "IP addresses or CIDR blocks, such as 10.0.0.0/8,fd00::/8,192.0.2.7",
    AddressRange::parse,
));
pub(crate) const HTTP_URL: Type<String> = Type::new("an http:// or https:// URL", parse_http_url);
pub(crate) const EVENT_NAMES: ListOf<String> = ListOf(Type::new(
    "event types from docs/events.md, such as evicted,self-preservation-entered",
    |event| {
        heureka_wire::InstanceEventKind::ALL_EVENT_NAMES
            .contains(&event)
            .then(|| event.to_owned())
    },
));
/// Browser origins (`https://ui.example.com`), normalised; a path, `null` or a `*` is wrong:
/// an allowance names whole origins, one by one.
pub(crate) const ORIGINS: ListOf<String> = ListOf(Type::new(
    "origins such as https://ui.example.com or http://localhost:3000",
    crate::security::origins::normalise_origin,
));
/// `heureka.security.allowed-hosts`: host names (`*` any, `*.example.com` any under it), no
/// ports or URLs.
pub(crate) const HOST_NAMES: ListOf<String> = ListOf(Type::new(
    "host names such as eureka.example.com, *.svc.cluster.local or *",
    crate::security::hosts::normalise_pattern,
));

/// Spring's `DataSize.parse` (a bare number is bytes). Zero and sizes beyond `usize` are
/// rejected: every size Heureka reads is a limit, and none may be switched off.
pub(crate) fn parse_data_size(text: &str) -> Option<usize> {
    let bytes = heureka_config::values::parse_data_size(text).filter(|bytes| *bytes > 0)?;
    usize::try_from(bytes).ok()
}

/// Spring's `DurationStyle`, a bare number in milliseconds (the default unit of the keys that
/// use this). Zero is rejected: every duration Heureka reads is a timeout, and none of them
/// may be switched off.
pub(crate) fn parse_duration(text: &str) -> Option<Duration> {
    heureka_config::values::parse_duration(text, DurationUnit::Millis)
        .filter(|duration| !duration.is_zero())
}

/// `heureka.base-path`: starts with `/` and does not end with one.
pub(crate) fn parse_base_path(text: &str) -> Option<String> {
    let text = text.trim();
    (text.starts_with('/') && !text.ends_with('/') && !text.contains(char::is_whitespace))
        .then(|| text.to_owned())
}

/// A peer URL list entry: http(s), normalised to end with `/` as Spring Cloud's
/// `EurekaClientConfigBean.getEurekaServerServiceUrls` does.
pub(crate) fn parse_service_url(text: &str) -> Option<String> {
    let url = parse_http_url(text)?;
    Some(if url.ends_with('/') {
        url
    } else {
        format!("{url}/")
    })
}

/// `eureka.dashboard.path`: `/` or a path starting with `/`; a trailing `/` is dropped.
pub(crate) fn parse_dashboard_path(text: &str) -> Option<String> {
    let text = text.trim();
    if !text.starts_with('/') || text.contains(char::is_whitespace) {
        return None;
    }
    let trimmed = text.trim_end_matches('/');
    Some(if trimmed.is_empty() { "/" } else { trimmed }.to_owned())
}

/// `management.endpoint.health.show-details`, in any case, `_` or `-`.
fn parse_show_details(text: &str) -> Option<ShowDetails> {
    match text.trim().to_ascii_lowercase().replace('_', "-").as_str() {
        "never" => Some(ShowDetails::Never),
        "when-authorized" => Some(ShowDetails::WhenAuthorized),
        "always" => Some(ShowDetails::Always),
        _ => None,
    }
}

/// `heureka.dns.domain`: a DNS name of letters, digits, `-` and `_`, written with or without
/// the final dot, kept lower case and ending in `.`. At most 190 bytes, so that the longest
/// name answered under it (`<address>.<app>.<domain>`) still fits DNS's 255.
pub(crate) const DNS_DOMAIN: Type<String> =
    Type::new("a domain name such as eureka. or svc.example.com", |text| {
        let name = text.trim().trim_end_matches('.').to_ascii_lowercase();
        let label_ok = |label: &str| {
            (1..=63).contains(&label.len())
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        };
        (!name.is_empty() && name.len() <= 190 && name.split('.').all(label_ok))
            .then(|| format!("{name}."))
    });
/// `heureka.dns.ttl`: whole seconds (a bare number is seconds, as DNS counts), 0 (do not
/// cache) to a day.
pub(crate) const DNS_TTL: Type<Duration> = Type::new(
    "a duration of whole seconds from 0 to 1d, such as 5, 5s or 0",
    |text| {
        heureka_config::values::parse_duration(text, DurationUnit::Seconds)
            .filter(|duration| duration.subsec_nanos() == 0 && duration.as_secs() <= 24 * 60 * 60)
    },
);
