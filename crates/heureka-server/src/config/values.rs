//! Parsers for the value types of the bound keys, with Spring's conversion rules.

use std::net::{IpAddr, Ipv4Addr};

/// Spring's `StringToBooleanConverter`: true/on/yes/1 and false/off/no/0, any case.
pub(crate) fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "on" | "yes" | "1" => Some(true),
        "false" | "off" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// An integer of any width, surrounding whitespace allowed as in Spring's `NumberUtils`.
pub(crate) fn parse_number<T: std::str::FromStr>(text: &str) -> Option<T> {
    text.trim().parse().ok()
}

/// Spring's `DataSize.parse`: a whole number with an optional unit B, KB, MB, GB or TB
/// (binary multiples, any case); a bare number is bytes. Zero and overflow are rejected.
pub(crate) fn parse_data_size(text: &str) -> Option<usize> {
    let text = text.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let number: u64 = text[..digits_end].parse().ok()?;
    let multiplier: u64 = match text[digits_end..].trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "KB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    let bytes = number.checked_mul(multiplier).filter(|bytes| *bytes > 0)?;
    usize::try_from(bytes).ok()
}

/// A log level Spring Boot accepts, lower-cased. Spring's `fatal` maps to `error`, the most
/// severe level `tracing` has.
pub(crate) fn parse_level(text: &str) -> Option<&'static str> {
    match text.trim().to_ascii_lowercase().as_str() {
        "trace" => Some("trace"),
        "debug" => Some("debug"),
        "info" => Some("info"),
        "warn" => Some("warn"),
        "error" | "fatal" => Some("error"),
        "off" => Some("off"),
        _ => None,
    }
}

/// A literal IP address; `localhost` is accepted as 127.0.0.1 since Spring would resolve it.
pub(crate) fn parse_ip(text: &str) -> Option<IpAddr> {
    match text.trim() {
        "localhost" => Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        other => other.parse().ok(),
    }
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
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    let has_host = ["http://", "https://"]
        .iter()
        .any(|scheme| lower.starts_with(scheme) && lower.len() > scheme.len());
    if !has_host {
        return None;
    }
    Some(if text.ends_with('/') {
        text.to_owned()
    } else {
        format!("{text}/")
    })
}

/// Spring's `DurationStyle`: a whole number with an optional unit `ns`, `us`, `ms`, `s`, `m`,
/// `h` or `d` (a bare number is milliseconds, the default unit of the keys that use this), or
/// ISO-8601 such as `PT30S`. Zero, negative values and overflow are rejected: every duration
/// Heureka reads is a timeout, and none of them may be switched off.
pub(crate) fn parse_duration(text: &str) -> Option<std::time::Duration> {
    use std::time::Duration;
    let text = text.trim();
    // `get`, not slicing: the third byte may be inside a multi-byte character (`pé`).
    if let Some(iso) = text
        .get(..2)
        .filter(|prefix| prefix.eq_ignore_ascii_case("PT"))
        .and_then(|_| text.get(2..))
        .filter(|rest| !rest.is_empty())
    {
        return parse_iso_duration(iso);
    }
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let number: u64 = text[..digits_end].parse().ok()?;
    let duration = match text[digits_end..].to_ascii_lowercase().as_str() {
        "ns" => Duration::from_nanos(number),
        "us" => Duration::from_micros(number),
        "" | "ms" => Duration::from_millis(number),
        "s" => Duration::from_secs(number),
        "m" => Duration::from_secs(number.checked_mul(60)?),
        "h" => Duration::from_secs(number.checked_mul(3600)?),
        "d" => Duration::from_secs(number.checked_mul(86_400)?),
        _ => return None,
    };
    (!duration.is_zero()).then_some(duration)
}

/// The part of an ISO-8601 duration after `PT`: hours, minutes and seconds, each optional, in
/// that order; seconds may have a fraction (`PT0.5S`).
fn parse_iso_duration(text: &str) -> Option<std::time::Duration> {
    let mut total = 0f64;
    let mut rest = text;
    for (unit, seconds) in [('H', 3600.0), ('M', 60.0), ('S', 1.0)] {
        if let Some(end) = rest.find([unit, unit.to_ascii_lowercase()]) {
            let number: f64 = rest[..end].parse().ok()?;
            if !number.is_finite() || number < 0.0 || (unit != 'S' && number.fract() != 0.0) {
                return None;
            }
            total += number * seconds;
            rest = &rest[end + 1..];
        }
    }
    if !rest.is_empty() || total <= 0.0 {
        return None;
    }
    std::time::Duration::try_from_secs_f64(total).ok()
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

/// A webhook URL: http(s) with a host, kept as written.
pub(crate) fn parse_http_url(text: &str) -> Option<String> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    ["http://", "https://"]
        .iter()
        .any(|scheme| lower.starts_with(scheme) && lower.len() > scheme.len())
        .then(|| text.to_owned())
}
