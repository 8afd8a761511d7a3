//! Spring's conversions from property text to values.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

/// Spring's `StringToBooleanConverter`: true/on/yes/1 and false/off/no/0, any case.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "on" | "yes" | "1" => Some(true),
        "false" | "off" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// An integer of any width, surrounding whitespace allowed as in Spring's `NumberUtils`.
pub fn parse_number<T: std::str::FromStr>(text: &str) -> Option<T> {
    text.trim().parse().ok()
}

/// Spring's `StringToCollectionConverter`: a comma list, items trimmed, empty items dropped.
/// A YAML list arrives here joined with commas.
pub fn parse_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Spring's `DataSize.parse`: a whole number with an optional unit B, KB, MB, GB or TB
/// (binary multiples, any case); a bare number is bytes. Overflow is rejected.
pub fn parse_data_size(text: &str) -> Option<u64> {
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
    number.checked_mul(multiplier)
}

/// The unit a bare number means in a duration, Spring's `@DurationUnit` (milliseconds when
/// a property does not say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationUnit {
    Nanos,
    Micros,
    Millis,
    Seconds,
    Minutes,
    Hours,
    Days,
}

impl DurationUnit {
    fn of(self, number: u64) -> Option<Duration> {
        Some(match self {
            DurationUnit::Nanos => Duration::from_nanos(number),
            DurationUnit::Micros => Duration::from_micros(number),
            DurationUnit::Millis => Duration::from_millis(number),
            DurationUnit::Seconds => Duration::from_secs(number),
            DurationUnit::Minutes => Duration::from_secs(number.checked_mul(60)?),
            DurationUnit::Hours => Duration::from_secs(number.checked_mul(3600)?),
            DurationUnit::Days => Duration::from_secs(number.checked_mul(86_400)?),
        })
    }
}

/// Spring's `DurationStyle`: a whole number with an optional unit `ns`, `us`, `ms`, `s`, `m`,
/// `h` or `d` (a bare number is in `bare_unit`), or ISO-8601 such as `PT30S`. Negative values
/// and overflow are rejected (a `Duration` cannot be negative); zero is accepted.
pub fn parse_duration(text: &str, bare_unit: DurationUnit) -> Option<Duration> {
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
    let unit = match text[digits_end..].to_ascii_lowercase().as_str() {
        "" => bare_unit,
        "ns" => DurationUnit::Nanos,
        "us" => DurationUnit::Micros,
        "ms" => DurationUnit::Millis,
        "s" => DurationUnit::Seconds,
        "m" => DurationUnit::Minutes,
        "h" => DurationUnit::Hours,
        "d" => DurationUnit::Days,
        _ => return None,
    };
    unit.of(number)
}

/// The part of an ISO-8601 duration after `PT`: hours, minutes and seconds, each optional, in
/// that order; seconds may have a fraction (`PT0.5S`). At least one must be there.
fn parse_iso_duration(text: &str) -> Option<Duration> {
    let mut total = 0f64;
    let mut rest = text;
    let mut any = false;
    for (unit, seconds) in [('H', 3600.0), ('M', 60.0), ('S', 1.0)] {
        if let Some(end) = rest.find([unit, unit.to_ascii_lowercase()]) {
            let number: f64 = rest[..end].parse().ok()?;
            if !number.is_finite() || number < 0.0 || (unit != 'S' && number.fract() != 0.0) {
                return None;
            }
            total += number * seconds;
            rest = &rest[end + 1..];
            any = true;
        }
    }
    if !rest.is_empty() || !any {
        return None;
    }
    Duration::try_from_secs_f64(total).ok()
}

/// A log level Spring Boot accepts, lower-cased. Spring's `fatal` maps to `error`, the most
/// severe level `tracing` has.
pub fn parse_level(text: &str) -> Option<&'static str> {
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
pub fn parse_ip(text: &str) -> Option<IpAddr> {
    match text.trim() {
        "localhost" => Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        other => other.parse().ok(),
    }
}

/// An `http://` or `https://` URL with something after the scheme, trimmed.
pub fn parse_http_url(text: &str) -> Option<String> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    ["http://", "https://"]
        .iter()
        .any(|scheme| lower.starts_with(scheme) && lower.len() > scheme.len())
        .then(|| text.to_owned())
}
